import { redact } from "../security/redact.ts";

/** The reader of stdout went away (`agent mailbox list | head -1`): not a failure of ours. */
export class StdoutClosedError extends Error {}

/**
 * Everything the CLI prints goes through here, secrets masked. stdout carries only the result;
 * writes are awaited so nothing is cut off when the entry calls process.exit.
 */
export async function writeOut(text: string): Promise<void> {
  try {
    await Bun.write(Bun.stdout, redact(text));
  } catch (error) {
    if ((error as { code?: unknown }).code === "EPIPE") throw new StdoutClosedError("stdout was closed", { cause: error });
    throw error;
  }
}

export async function writeErr(text: string): Promise<void> {
  await Bun.write(Bun.stderr, redact(text));
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
 * Text a repository may have written (a committed session's first prompt) as a
 * terminal shows it: line breaks as ⏎, other control characters (the start of an
 * escape sequence that could rewrite the screen) as "?".
 */
export function printable(text: string): string {
  return text.replace(/\r?\n/g, "⏎").replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");
}
