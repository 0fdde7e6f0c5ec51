import { fstatSync } from "node:fs";
import { UsageError } from "../../core/errors.ts";
import { DEFAULT_MAX_CONTENT_BYTES } from "../../core/message-format.ts";
import { readStdinUpTo } from "../bounded-read.ts";

/**
 * Where `agent run` takes its prompt from: the PROMPT operand or `--prompt`; `-` in
 * either means stdin, and so does neither when data is piped in (`echo "fix it" | agent run`).
 */
export interface PromptSource {
  positional?: string;
  flag?: string;
}

/** The process's stdin as readPrompt sees it; tests pass their own. */
export interface PromptStdin {
  /** Data is being piped or redirected in (a pipe or a file), as opposed to a terminal or /dev/null. */
  piped: boolean;
  read(): Promise<Uint8Array>;
}

/**
 * The process's stdin, read no further than the cap `maxBytes` resolves to (the
 * mailbox's, asked only when stdin is read): a larger prompt is refused as soon as it passes.
 */
export function processStdin(maxBytes: () => Promise<number> = async () => DEFAULT_MAX_CONTENT_BYTES): PromptStdin {
  return { piped: stdinIsPiped(), read: async () => readStdinUpTo(await maxBytes(), "the data on stdin") };
}

function stdinIsPiped(): boolean {
  try {
    const stats = fstatSync(0);
    return stats.isFIFO() || stats.isFile();
  } catch {
    return false; // closed
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The prompt from exactly one source; refuses none, two, an empty one, or stdin
 * that is not UTF-8. No prompt given and data piped in: the data is the prompt,
 * as `claude -p` and `codex exec` take it. A prompt given and data piped in as well
 * (`git diff | agent run "review this"`): the data is appended as context after
 * the prompt, never dropped, as `claude -p` does.
 */
export async function readPrompt(source: PromptSource, stdin: PromptStdin = processStdin()): Promise<string> {
  const { positional, flag } = source;
  if (positional !== undefined && flag !== undefined) {
    throw new UsageError("give the prompt once: as the PROMPT argument or with --prompt, not both");
  }
  const given = positional ?? flag ?? (stdin.piped ? "-" : undefined);
  if (given === undefined) {
    throw new UsageError('no prompt: give it as an argument (agent run "fix the tests"), with --prompt TEXT, or pipe it to stdin');
  }
  const fromStdin = given === "-";
  const text = fromStdin ? await readText(stdin, "the prompt on stdin is not valid UTF-8 text") : given;
  if (text.trim().length === 0) {
    const from = fromStdin ? "stdin" : positional !== undefined ? "the PROMPT argument" : "--prompt";
    throw new UsageError(`the prompt from ${from} is empty; tell the agent what to do`);
  }
  if (fromStdin || !stdin.piped) return text;
  const context = await readText(stdin, "the data piped to stdin is not valid UTF-8 text; agent reads text only (or redirect stdin from /dev/null)");
  return context.trim() === "" ? text : `${text}\n\n<stdin>\n${context.endsWith("\n") ? context : `${context}\n`}</stdin>`;
}

async function readText(stdin: PromptStdin, notText: string): Promise<string> {
  const bytes = await stdin.read();
  try {
    return utf8.decode(bytes);
  } catch {
    throw new UsageError(notText);
  }
}
