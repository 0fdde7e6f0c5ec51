import type { Screen } from "../terminal/screen.ts";

/** A key as readline's keypress events describe it. */
export interface Key {
  name?: string;
  ctrl?: boolean;
  meta?: boolean;
  sequence?: string;
}

/** Where the picker's keys come from: the session's line editor, which hands them over while the list is open. */
export interface KeySource {
  /** Every key goes to `handler` first until the returned function is called; `true` from it means the key was used. */
  takeKeys(handler: (key: Key) => boolean): () => void;
  /** Types `text` at the prompt, as if the user had (a key that closed the list goes on to the line). */
  type(text: string): void;
}

/** One row of the list: the agent it selects and the line shown for it. */
export interface PickerRow {
  name: string;
  line: string;
}

const HINT = "↑/↓ choose, Enter view, Esc close";

/**
 * `/team` on a terminal: the team as a list with a marker the arrow keys move;
 * Enter resolves with the agent marked, Esc (or Ctrl-C) with none. Any other
 * key closes it too and goes on to the prompt, so typing carries on. The list
 * takes the screen like a question (other output waits) but gives way to any
 * real question asked meanwhile. Once closed, it stays in the log as a plain
 * list (no marker, no hint): what `/team` printed.
 */
export async function pickAgent(screen: Screen, keys: KeySource, rows: PickerRow[], options: { columns: () => number; selected?: string }): Promise<string | undefined> {
  if (rows.length === 0) return undefined;
  let pass: string | undefined;
  const picked = await screen.question<string | undefined>(
    (write, gaveWay) =>
      new Promise((resolve) => {
        // A question was asked while this list waited its turn: it is not shown at all.
        if (gaveWay.aborted) return resolve(undefined);
        let at = Math.max(0, rows.findIndex((row) => row.name === options.selected));
        let drawn = 0;
        const draw = (open: boolean) => {
          // Each row kept to one terminal row, so moving back up over them is exact.
          const width = Math.max(10, options.columns() - 1);
          const fit = (text: string) => (text.length > width ? `${text.slice(0, width - 1)}…` : text);
          const lines = rows.map((row, i) => fit(`${open && i === at ? "›" : " "} ${row.line}`));
          if (open) lines.push(fit(HINT));
          write(`${drawn > 0 ? `\x1b[${drawn}A` : ""}\r\x1b[J${lines.join("\n")}\n`);
          drawn = lines.length;
        };
        const finish = (name: string | undefined) => {
          release();
          gaveWay.removeEventListener("abort", onGiveWay);
          draw(false);
          resolve(name);
        };
        const onGiveWay = () => finish(undefined);
        const release = keys.takeKeys((key) => {
          if (key.name === "up") at = (at + rows.length - 1) % rows.length;
          else if (key.name === "down") at = (at + 1) % rows.length;
          else if (key.name === "return" || key.name === "enter") finish(rows[at]!.name);
          else if (key.name === "escape" || (key.ctrl && key.name === "c")) finish(undefined);
          else {
            if (key.sequence && !key.ctrl && !key.meta && printable(key.sequence)) pass = key.sequence;
            finish(undefined);
            return true;
          }
          if (key.name === "up" || key.name === "down") draw(true);
          return true;
        });
        gaveWay.addEventListener("abort", onGiveWay, { once: true });
        draw(true);
      }),
    { yields: true },
  );
  if (pass !== undefined) keys.type(pass);
  return picked;
}

/** Text a key types (a letter, a pasted word), not a control or an escape sequence. */
function printable(sequence: string): boolean {
  return [...sequence].every((char) => char.charCodeAt(0) >= 0x20 && char.charCodeAt(0) !== 0x7f);
}
