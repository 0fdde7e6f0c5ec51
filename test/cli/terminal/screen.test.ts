import { describe, expect, test } from "bun:test";
import { type Channel, type InputLine, Screen } from "../../../src/cli/terminal/screen.ts";
import { XtermScreen } from "../../support/xterm.ts";
import { waitUntil } from "../../support/deadline.ts";

// The terminal's one owner, its bytes read back through xterm.js: what a
// person sees when the answer, log lines, the status block, a question and the
// line editor all write to one terminal.

function onTerminal(cols: number, lines: () => string[] = () => []) {
  const xterm = new XtermScreen(cols);
  const written: { text: string; channel: Channel }[] = [];
  const screen = new Screen(
    (text, channel) => {
      written.push({ text, channel });
      xterm.write(text);
    },
    { columns: () => cols },
  );
  return { screen, xterm, written, status: { render: lines } };
}

/** A line editor as the screen sees one: a prompt and typed text, redrawn on request. */
function editor(screen: Screen, cols: number, typed = "") {
  const line: InputLine & { typed: string } = {
    typed,
    cursorRow: () => Math.floor((2 + line.typed.length) / cols),
    redraw: () => screen.editorWrite(`> ${line.typed}`),
  };
  return line;
}

describe("Screen", () => {
  test("a line that comes while the answer's row is half printed follows the row; a note after a cut answer starts a row of its own", async () => {
    const { screen, xterm } = onTerminal(80);
    screen.write("alice ");
    screen.message("[alice] running (writer)");
    expect(await xterm.rows()).toEqual(["alice"]);
    screen.write("is on it.\nThe answer was cut sh");
    expect(screen.midLine).toBe(true);
    screen.endLine();
    screen.message("agent: run ended with error_interrupted");
    screen.message("agent: interrupted\n");
    expect(await xterm.rows()).toEqual(["alice is on it.", "[alice] running (writer)", "The answer was cut sh", "agent: run ended with error_interrupted", "agent: interrupted"]);
    screen.write("\x1b[1mbold\x1b[0m");
    screen.endLine();
    screen.endLine();
    screen.message("next");
    expect((await xterm.rows()).slice(5)).toEqual(["bold", "next"]);
  });

  for (const cols of [40, 80, 200]) {
    test(`${cols} columns: the log scrolls above the status block, the block follows it clipped to the width, clearStatus leaves the log`, async () => {
      const wide = `alice (writer)  running  write_file  ${"x".repeat(250)}`;
      let lines = ["lead  working  thinking  1s"];
      const t = onTerminal(cols, () => lines);
      t.screen.setStatus(t.status);
      t.screen.message("[lead] spawn_teammate alice");
      lines = ["lead  idle  2s", wide];
      t.screen.message("[alice] running (writer)");
      const shown = await t.xterm.rows();
      expect(shown.slice(0, 3)).toEqual(["[lead] spawn_teammate alice", "[alice] running (writer)", "lead  idle  2s"]);
      // Clipped, never wrapped: a wrapped row would throw the next erase off by one.
      expect(shown).toHaveLength(4);
      expect(shown[3]).toBe(`${wide.slice(0, cols - 2)}…`);
      // Half a row of answer: the block is off and stays off until the row ends.
      t.screen.write("The ans");
      t.screen.refresh();
      expect((await t.xterm.rows()).slice(2)).toEqual(["The ans"]);
      t.screen.write("wer.\n");
      expect((await t.xterm.rows()).slice(2)).toEqual(["The answer.", "lead  idle  2s", `${wide.slice(0, cols - 2)}…`]);
      t.screen.clearStatus();
      t.screen.message("Done.");
      t.screen.refresh();
      expect(await t.xterm.rows()).toEqual(["[lead] spawn_teammate alice", "[alice] running (writer)", "The answer.", "Done."]);
    });
  }

  test("a question takes the block off and keeps it off; what is printed meanwhile waits and follows the answer, in order", async () => {
    const t = onTerminal(80, () => ["lead  working  3s", "alice (writer)  running  4s"]);
    t.screen.setStatus(t.status);
    t.screen.message("[lead] write_file notes.txt");
    const answered = Promise.withResolvers<void>();
    const asked = t.screen.question(async (write) => {
      write("\nlead wants to run write_file (edit):\n  +notes\nallow? [y]es, [n]o: ");
      await answered.promise;
      write("n\n");
      return "n";
    });
    await Bun.sleep(1);
    t.screen.refresh();
    t.screen.message("[alice] write_file a.txt");
    t.screen.write("Half an ");
    t.screen.write("answer.\n");
    expect(t.screen.asking).toBe(true);
    expect(await t.xterm.rows()).toEqual(["[lead] write_file notes.txt", "", "lead wants to run write_file (edit):", "  +notes", "allow? [y]es, [n]o:"]);
    answered.resolve();
    expect(await asked).toBe("n");
    expect((await t.xterm.rows()).slice(4)).toEqual([
      "allow? [y]es, [n]o: n",
      "[alice] write_file a.txt",
      "Half an answer.",
      "lead  working  3s",
      "alice (writer)  running  4s",
    ]);
  });

  test("questions asked at once are shown one after the other", async () => {
    const t = onTerminal(80);
    const first = Promise.withResolvers<void>();
    const order: string[] = [];
    const one = t.screen.question(async (write) => {
      order.push("alice asks");
      write("alice: allow? ");
      await first.promise;
      write("y\n");
      order.push("alice answered");
    });
    const two = t.screen.question(async (write) => {
      order.push("bob asks");
      write("bob: allow? n\n");
    });
    await waitUntil(() => order.length > 0, "the first question to be asked");
    expect(order).toEqual(["alice asks"]);
    first.resolve();
    await Promise.all([one, two]);
    expect(order).toEqual(["alice asks", "alice answered", "bob asks"]);
    expect(await t.xterm.rows()).toEqual(["alice: allow? y", "bob: allow? n"]);
  });

  for (const cols of [40, 80]) {
    test(`${cols} columns: a note arriving while a line is half typed prints above it; the typed text is redrawn below, the block between`, async () => {
      const t = onTerminal(cols, () => ["alice (writer)  running  2s"]);
      t.screen.setStatus(t.status);
      t.screen.message("hello back.");
      const line = editor(t.screen, cols);
      t.screen.showInput(line);
      for (const key of "/te") {
        line.typed += key;
        t.screen.editorWrite(key);
      }
      t.screen.message("alice wants write_file (edit):\n  +notes");
      expect(await t.xterm.rows()).toEqual(["hello back.", "alice wants write_file (edit):", "  +notes", "alice (writer)  running  2s", "> /te"]);
      expect(await t.xterm.cursor()).toEqual({ row: 4, col: 5 });
      // A long line wraps: the next note still takes all of it off first.
      const more = "am and a long tail ".repeat(4);
      line.typed += more;
      t.screen.editorWrite(more);
      t.screen.refresh();
      t.screen.message("[alice] idle");
      const shown = await t.xterm.rows();
      expect(shown.slice(0, 5)).toEqual(["hello back.", "alice wants write_file (edit):", "  +notes", "[alice] idle", "alice (writer)  running  2s"]);
      expect(shown.slice(5).join("").replace(/ /g, "")).toBe(`> /te${more}`.replace(/ /g, ""));
      expect(shown.length).toBe(5 + Math.ceil(`> /te${more}`.trimEnd().length / cols));
    });
  }

  test("an entered line stays in the log and the block moves below it; the next prompt comes after the block", async () => {
    const t = onTerminal(80, () => ["alice (writer)  running  2s"]);
    t.screen.setStatus(t.status);
    const line = editor(t.screen, 80, "/team");
    t.screen.showInput(line);
    // The editor ends the line as readline does: the cursor on the row below.
    t.screen.editorWrite("\r\n");
    t.screen.inputDone(1, "> /team");
    t.screen.message("alice (writer)  running  write_file  2s");
    t.screen.showInput(editor(t.screen, 80));
    expect(await t.xterm.rows()).toEqual(["> /team", "alice (writer)  running  write_file  2s", "alice (writer)  running  2s", ">"]);
  });

  test("the editor closing (Ctrl-D) leaves its prompt; the last note starts on the row below it", async () => {
    const t = onTerminal(80);
    t.screen.showInput(editor(t.screen, 80));
    t.screen.closeInput();
    t.screen.message("agent: session ended: nothing left");
    expect(await t.xterm.rows()).toEqual([">", "agent: session ended: nothing left"]);
  });

  test("text for a stream that is not this terminal goes straight through, and does not count as the terminal's row", async () => {
    const sent: string[] = [];
    const screen = new Screen((text, channel) => sent.push(`${channel}:${text}`), { columns: () => 80, channels: ["err"] });
    screen.write("piped answer");
    screen.message("[lead] shell ls");
    screen.message("result", "out");
    expect(sent).toEqual(["out:piped answer", "err:[lead] shell ls\n", "out:result\n"]);
  });
});
