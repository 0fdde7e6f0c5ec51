import { describe, expect, test } from "bun:test";
import { Terminal } from "@xterm/headless";
import { terminalHyperlinks } from "../../../src/cli/terminal/hyperlinks.ts";
import { MarkdownStream, renderMarkdown, rowsDown } from "../../../src/cli/terminal/markdown.ts";

// An answer as a model writes one: a long bold paragraph, a nested list, a
// numbered list, a table, a quote, a link and a code fence.
const BOLD_TEXT = `**${"The migration keeps every row and rewrites the index in place so readers never wait; ".repeat(4).slice(0, 296)}**`;
const ANSWER = [
  "# Plan",
  "",
  BOLD_TEXT,
  "",
  "- first **step**",
  "  - nested *detail* with `code`",
  "    - deeper still",
  "- second step",
  "",
  "1. one",
  "2. two with a [link](https://example.com/docs)",
  "10. ten",
  "",
  "| file | change | lines |",
  "| --- | :---: | ---: |",
  "| src/store/migrate.ts | rewrites the index in place, keeps rows | 120 |",
  "| test/store.test.ts | **new** test | 40 |",
  "",
  "> Careful: **back up** the database first.",
  "",
  "```ts",
  "const a = 1;",
  "```",
  "Done.",
].join("\n");

const plain = (text: string) => Bun.stripANSI(text);

/** The rows as a person sees them on a terminal `cols` wide, read back from xterm.js. */
async function screen(output: string, cols: number): Promise<string[]> {
  const xterm = new Terminal({ cols, rows: 60, allowProposedApi: true, scrollback: 500 });
  await new Promise<void>((resolve) => xterm.write(output.replace(/\n/g, "\r\n"), resolve));
  const buffer = xterm.buffer.active;
  const rows = Array.from({ length: buffer.length }, (_, i) => buffer.getLine(i)?.translateToString(true) ?? "");
  while (rows.length > 0 && rows[rows.length - 1] === "") rows.pop();
  return rows;
}

function expectLaidOut(rendered: string, width: number): void {
  const rows = rendered.split("\n");
  for (const row of rows) expect(Bun.stringWidth(row)).toBeLessThanOrEqual(width);
  const text = plain(rendered);
  for (const marker of ["**", "```", "](", "|", "\n>", "\n- ", "\n  - "]) expect(text).not.toContain(marker);
  expect(text).not.toMatch(/^>/m);
}

describe("markdown laid out to the terminal's width", () => {
  for (const width of [40, 120]) {
    test(`at ${width} columns: no raw markers, no row wider than the terminal`, async () => {
      const rendered = renderMarkdown(ANSWER, { columns: () => width });
      expectLaidOut(rendered, width);
      const text = plain(rendered);
      // The bold paragraph is wrapped on its words, its text whole and bold.
      expect(text.replace(/\s+/g, " ")).toContain(BOLD_TEXT.slice(2, -2).replace(/\s+/g, " ").trim());
      expect(rendered).toContain("\x1b[1mThe migration");
      // Nested bullets indented by level, numbers kept, the quote behind a bar, the link's URL shown.
      expect(text).toContain("• first step\n  ◦ nested detail with code\n    ▪ deeper still\n• second step");
      // (At 40 columns the URL wraps under the item's text.)
      expect(text.replace("link\n   (", "link (")).toContain("1. one\n2. two with a link (https://example.com/docs)\n10. ten");
      expect(text).toContain("│ Careful: back up the database first.".slice(0, width));
      expect(text).toContain("─── ts\n  const a = 1;\n───\nDone.");
      // The terminal shows exactly those rows: nothing wrapped by it.
      expect(await screen(rendered, width)).toEqual(text.replace(/\n+$/, "").split("\n").map((row) => row.trimEnd()));
    });
  }

  test("a table fits its columns to the width: aligned when it fits, cells wrapped when not", () => {
    const wide = plain(renderMarkdown(ANSWER, { columns: () => 120 })).split("\n");
    const header = wide.findIndex((row) => row.startsWith("file"));
    expect(wide.slice(header, header + 4)).toEqual([
      "file                 │                 change                  │ lines",
      "─────────────────────┼─────────────────────────────────────────┼──────",
      "src/store/migrate.ts │ rewrites the index in place, keeps rows │   120",
      "test/store.test.ts   │                new test                 │    40",
    ]);
    const narrow = plain(renderMarkdown(ANSWER, { columns: () => 40 })).split("\n");
    const at = narrow.findIndex((row) => row.startsWith("file"));
    const table = narrow.slice(at, narrow.indexOf("", at));
    expect(table.length).toBeGreaterThan(4);
    for (const row of table) expect(Bun.stringWidth(row)).toBeLessThanOrEqual(40);
    // Every row of the table has its separators in the same columns.
    const bars = (row: string) => [...row].flatMap((char, i) => (char === "│" || char === "┼" ? [i] : []));
    for (const row of table) expect(bars(row)).toEqual(bars(table[1] as string));
  });

  test("a table too wide for even narrow columns becomes header: value records", () => {
    const table = "| a | b | c | d | e |\n|---|---|---|---|---|\n| 1 | 2 | 3 | 4 | 5 |\n";
    expect(plain(renderMarkdown(table, { columns: () => 20 }))).toBe("a: 1\nb: 2\nc: 3\nd: 4\ne: 5\n");
  });

  test("a terminal reporting 0 columns is laid out 80 wide", () => {
    const at80 = renderMarkdown(ANSWER, { columns: () => 80 });
    expect(renderMarkdown(ANSWER, { columns: () => 0 })).toBe(at80);
    const widths = at80.split("\n").map((row) => Bun.stringWidth(row));
    expect(Math.max(...widths)).toBeLessThanOrEqual(80);
    expect(Math.max(...widths)).toBeGreaterThan(70);
    // Streamed: the line shown as written is erased over the rows an 80-wide terminal wrapped it onto.
    let out = "";
    const stream = new MarkdownStream((text) => (out += text), { columns: () => 0 });
    stream.push(BOLD_TEXT);
    stream.push("\n");
    expect(out).toStartWith(`${BOLD_TEXT}\r\x1b[3A\x1b[J`);
  });

  test("links: OSC 8 hyperlinks where the terminal shows them, else text (url)", () => {
    const link = "see [the docs](https://example.com/d)\n";
    expect(renderMarkdown(link, { columns: () => 80 })).toBe("see \x1b[4mthe docs\x1b[0m \x1b[2m(https://example.com/d)\x1b[0m\n");
    expect(renderMarkdown(link, { columns: () => 80, hyperlinks: true })).toBe(
      "see \x1b]8;;https://example.com/d\x1b\\\x1b[4mthe docs\x1b[0m\x1b]8;;\x1b\\\n",
    );
    expect(terminalHyperlinks({ TERM_PROGRAM: "iTerm.app" })).toBe(true);
    expect(terminalHyperlinks({ VTE_VERSION: "6800" })).toBe(true);
    expect(terminalHyperlinks({ WT_SESSION: "x", TMUX: "/tmp/t" })).toBe(false);
    expect(terminalHyperlinks({ TERM: "xterm" })).toBe(false);
    expect(terminalHyperlinks({ AGENT_HYPERLINKS: "1" })).toBe(true);
  });

  test("a lone marker stays as written", () => {
    expect(renderMarkdown("Done ** here, 2 * 3 * 4.", { columns: () => 80 })).toBe("Done ** here, 2 * 3 * 4.");
  });
});

describe("markdown streaming in", () => {
  for (const width of [40, 120]) {
    test(`at ${width} columns, in small pieces: the screen shows the laid-out answer, nothing raw left over`, async () => {
      let out = "";
      const stream = new MarkdownStream((text) => (out += text), { columns: () => width });
      for (let at = 0; at < ANSWER.length; at += 7) stream.push(ANSWER.slice(at, at + 7));
      stream.end();
      const whole = plain(renderMarkdown(ANSWER, { columns: () => width }));
      expect(await screen(out, width)).toEqual(whole.replace(/\n+$/, "").split("\n").map((row) => row.trimEnd()));
    });
  }

  test("a table is held until it ends; end() draws one that ends the reply", () => {
    let out = "";
    const stream = new MarkdownStream((text) => (out += text), { columns: () => 80 });
    stream.push("| a | b |\n|---|---|\n| 1 | 2 |\n");
    expect(plain(out)).not.toContain("1 │ 2");
    stream.end();
    expect(plain(out)).toContain("a │ b\n──┼──\n1 │ 2\n");
  });
});

describe("the rows a line shown as written took", () => {
  test("wraps where the terminal does: a full row keeps the cursor, a wide character that does not fit moves on, tabs stop at 8", async () => {
    for (const [text, width] of [
      ["a".repeat(40), 40],
      ["a".repeat(41), 40],
      [`${"a".repeat(39)}漢字`, 40],
      [`\t${"b".repeat(35)}\tc`, 40],
      ["x".repeat(300), 80],
      ["", 80],
    ] as const) {
      const xterm = new Terminal({ cols: width, rows: 20, allowProposedApi: true });
      await new Promise<void>((resolve) => xterm.write(text, resolve));
      expect(rowsDown(text, width)).toBe(xterm.buffer.active.cursorY);
    }
  });

  test("a line ending in \\r (a model writing \\r\\n) is laid out without it", () => {
    expect(renderMarkdown("**a**\r\nb\r\n", { columns: () => 80 })).toBe("\x1b[1ma\x1b[0m\nb\n");
  });
});

test("markers inside words stay: snake_case, a path's __init__", () => {
  expect(renderMarkdown("edit src/__init__.py and my_var_name", { columns: () => 80 })).toBe("edit src/__init__.py and my_var_name");
});
