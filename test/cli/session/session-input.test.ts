import { afterEach, describe, expect, test } from "bun:test";
import { PassThrough } from "node:stream";
import { SessionInput } from "../../../src/cli/session/session-input.ts";
import { Screen } from "../../../src/cli/terminal/screen.ts";
import { XtermScreen } from "../../support/xterm.ts";
import { waitUntil } from "../../support/deadline.ts";

// The session's line editor (readline in terminal mode over a stream of keys)
// and the screen it draws through, read back through xterm.js: typed text
// belongs to the prompt it was typed at, whatever question comes meanwhile.

const NOTICE = "teammate alice wants to run write_file (edit):\n  +notes\n";
const inputs: SessionInput[] = [];
afterEach(() => {
  for (const input of inputs.splice(0)) input.close();
});

function editor(cols = 80) {
  const xterm = new XtermScreen(cols);
  const keys = new PassThrough();
  // The terminal the editor measures (its width) and listens on (resizes).
  const tty = Object.assign(new PassThrough(), { columns: cols, rows: 24, isTTY: true });
  const screen = new Screen((text) => xterm.write(text), { columns: () => cols });
  const input = new SessionInput({ input: keys, output: tty, screen, terminal: true });
  inputs.push(input);
  const type = async (text: string) => {
    keys.write(text);
    await Bun.sleep(20);
  };
  const question = (signal = new AbortController().signal) =>
    input.exclusive(() => input.ask("allow? [y]es, [n]o: ", signal, true), signal, NOTICE);
  return { xterm, input, type, question };
}

/** Until the screen shows `text` somewhere. */
async function onScreen(t: { xterm: { rows(): Promise<string[]> } }, text: string): Promise<void> {
  // Rows joined without breaks: a narrow terminal wraps the text.
  await waitUntil(async () => (await t.xterm.rows()).join("").includes(text), () => JSON.stringify(text));
}

/** Until the screen's last row is `row`. */
async function lastRow(t: { xterm: { rows(): Promise<string[]> } }, row: string): Promise<void> {
  await waitUntil(async () => (await t.xterm.rows()).at(-1) === row, () => `the last row ${JSON.stringify(row)}`);
}

describe("SessionInput on a terminal", () => {
  test("a question arriving while a line is half typed shows above it; the line is entered as typed; the question is asked after it and one key answers it", async () => {
    const t = editor();
    const first = t.input.next();
    await t.type("/te");
    let answered: string | null | undefined;
    const answer = t.question().then((line) => (answered = line));
    const shown = ["teammate alice wants to run write_file (edit):", "  +notes", "(asked once the line you are typing is entered, or erased)", "> /te"];
    await waitUntil(async () => JSON.stringify(await t.xterm.rows()) === JSON.stringify(shown), "the notice above the half-typed line");
    expect(await t.xterm.rows()).toEqual(shown);
    await t.type("am\r");
    expect(await first).toBe("/team");
    // Entered, not yet acted on: the question still waits (the command's output comes first).
    expect((await t.xterm.rows()).join("\n")).not.toContain("allow?");
    const second = t.input.next();
    await lastRow(t, "allow? [y]es, [n]o:");
    await t.type("n");
    await answer;
    expect(answered).toBe("n");
    // The prompt is back, empty: the key was the answer's, not the next request's.
    await t.type("exit\r");
    expect(await second).toBe("exit");
  });

  test("erasing the half-typed line frees the prompt for the question at once", async () => {
    const t = editor(40);
    void t.input.next();
    await t.type("oops");
    const answer = t.question();
    // The question waits behind the half-typed line, and says so.
    await onScreen(t, "(asked once the line you are typing is entered, or erased)");
    expect((await t.xterm.rows()).join("\n")).not.toContain("allow?");
    await t.type("\x7f\x7f\x7f\x7f");
    await lastRow(t, "allow? [y]es, [n]o:");
    await t.type("y");
    expect(await answer).toBe("y");
  });

  test("text typed ahead during a turn (no prompt shown) is not taken as the answer; entered, it waits for the next prompt", async () => {
    const t = editor();
    await t.type("next request");
    const answer = t.question();
    await onScreen(t, "(asked once the line you are typing is entered, or erased)");
    expect((await t.xterm.rows()).join("\n")).not.toContain("allow?");
    await t.type("\r");
    await lastRow(t, "allow? [y]es, [n]o:");
    await t.type("y");
    expect(await answer).toBe("y");
    expect(await t.input.next()).toBe("next request");
  });
});
