import { describe, expect, test } from "bun:test";
import { MarkdownStream, renderMarkdown } from "../../../src/cli/terminal/markdown.ts";
import { finalScreen } from "../../support/screen.ts";

const ANSWER = "# Plan\nRun `npm test` and **read** the output.\n```ts\nconst a = 1;\n```\nDone ** here.\n";

describe("markdown on a terminal", () => {
  test("headings, bold, inline code and fenced code; a lone marker stays", () => {
    expect(renderMarkdown(ANSWER)).toBe(
      [
        "\x1b[1m\x1b[4mPlan\x1b[0m",
        "Run \x1b[36mnpm test\x1b[0m and \x1b[1mread\x1b[0m the output.",
        "\x1b[2m```ts\x1b[0m",
        "    \x1b[36mconst a = 1;\x1b[0m",
        "\x1b[2m```\x1b[0m",
        "Done ** here.",
        "",
      ].join("\n"),
    );
  });

  test("streamed in pieces: shown as they come, each whole line redrawn rendered", () => {
    let out = "";
    const stream = new MarkdownStream((text) => (out += text), () => 80);
    for (const piece of ["# Pl", "an\nRun `npm", " test` now", ".\n"]) stream.push(piece);
    expect(finalScreen(out)).toEqual(["Plan", "Run npm test now.", ""]);
    expect(out).toContain("\r\x1b[K\x1b[1m\x1b[4mPlan\x1b[0m\n");
    // A line too long for one row (it wrapped) is left as written.
    let narrow = "";
    const wrapped = new MarkdownStream((text) => (narrow += text), () => 10);
    wrapped.push("a **long** line\n");
    expect(narrow).toBe("a **long** line\n");
  });
});
