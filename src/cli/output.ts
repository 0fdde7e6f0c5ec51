import { isTerminal } from "../process/terminal.ts";
import { redact } from "../security/redact.ts";
import { hasControls, oneLineVisible, terminalSafe, visibleControls } from "../security/terminal-text.ts";

/** The reader of stdout went away (`agent mailbox list | head -1`): not a failure of ours. */
export class StdoutClosedError extends Error {}

/** Whether fd 1 and fd 2 are terminals, asked once, and only of output that holds a control character (asking binds libc). */
const terminals: { out?: boolean; err?: boolean } = {};
function shownOn(fd: 1 | 2, text: string, filter: (text: string) => string): string {
  if (!hasControls(text)) return text;
  const key = fd === 1 ? "out" : "err";
  terminals[key] ??= isTerminal(fd);
  return terminals[key] ? filter(text) : text;
}

/**
 * Everything the CLI prints goes through here, secrets masked. stdout carries only the result;
 * writes are awaited so nothing is cut off when the entry calls process.exit. On a terminal every
 * control character is shown, not obeyed (src/security/terminal-text.ts): what these print is made
 * of data (messages, histories, file names), never of a renderer's own sequences. Piped, the bytes
 * are the data's own.
 */
export async function writeOut(text: string): Promise<void> {
  await toStdout(shownOn(1, redact(text), visibleControls));
}

export async function writeErr(text: string): Promise<void> {
  await Bun.write(Bun.stderr, shownOn(2, redact(text), visibleControls));
}

/**
 * The terminal's owner's bytes (src/cli/terminal/screen.ts): the renderer's own colours, links and
 * redraws pass the last gate, every other control character is shown.
 */
export async function writeScreenOut(text: string): Promise<void> {
  await toStdout(shownOn(1, redact(text), terminalSafe));
}

export async function writeScreenErr(text: string): Promise<void> {
  await Bun.write(Bun.stderr, shownOn(2, redact(text), terminalSafe));
}

async function toStdout(text: string): Promise<void> {
  try {
    await Bun.write(Bun.stdout, text);
  } catch (error) {
    if ((error as { code?: unknown }).code === "EPIPE") throw new StdoutClosedError("stdout was closed", { cause: error });
    throw error;
  }
}

/** One JSON object on one line: the whole result for `--json`. */
export async function writeJson(value: unknown): Promise<void> {
  await writeOut(`${JSON.stringify(value)}\n`);
}

/** Left-aligned columns, two spaces apart; the last column is not padded. */
export function formatTable(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, Bun.stringWidth(cell));
    });
  }
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell + " ".repeat((widths[i] ?? 0) - Bun.stringWidth(cell))))
        .join("  "),
    )
    .map((line) => `${line}\n`)
    .join("");
}

/**
 * Text a repository may have written (a committed session's first prompt) kept to
 * one row: line breaks as ⏎, other control characters visible (`^[`), in a table
 * whether or not it goes to a terminal.
 */
export function printable(text: string): string {
  return oneLineVisible(text);
}
