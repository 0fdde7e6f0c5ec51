import { fstatSync } from "node:fs";
import { UsageError } from "../../core/errors.ts";
import { DEFAULT_MAX_CONTENT_BYTES } from "../../core/message-format.ts";
import { readStdinUnlessSilent, readStdinUpTo } from "../bounded-read.ts";

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
  /**
   * Data may come in: a pipe, a socket (a Node.js parent's `spawn` gives one) or
   * a file, as opposed to a terminal, /dev/null or a closed stdin.
   */
  piped: boolean;
  /** All of it to EOF; with `quietMs`, undefined when the writer holds it open and sends nothing for that long. */
  read(quietMs?: number): Promise<Uint8Array | undefined>;
}

/**
 * How long a writer that holds stdin open and sends nothing is waited for when
 * stdin was not named (`-`): `claude -p` goes on without it after 3 s too.
 */
export const STDIN_QUIET_MS = 3000;

/**
 * The process's stdin, read no further than the cap `maxBytes` resolves to (the
 * mailbox's, asked only when stdin is read): a larger prompt is refused as soon as it passes.
 */
export function processStdin(maxBytes: () => Promise<number> = async () => DEFAULT_MAX_CONTENT_BYTES): PromptStdin {
  const what = "the data on stdin";
  return {
    piped: stdinIsPiped(),
    read: async (quietMs) => (quietMs === undefined ? readStdinUpTo(await maxBytes(), what) : readStdinUnlessSilent(await maxBytes(), what, quietMs)),
  };
}

function stdinIsPiped(): boolean {
  try {
    const stats = fstatSync(0);
    return stats.isFIFO() || stats.isSocket() || stats.isFile();
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
 * the prompt, never dropped, as `claude -p` does. Stdin not named but held open
 * with nothing written for STDIN_QUIET_MS: without a prompt that is no prompt,
 * with one the run goes on without stdin and `warn` says so (`claude -p`'s way).
 */
export async function readPrompt(source: PromptSource, stdin: PromptStdin = processStdin(), warn: (message: string) => void = () => {}): Promise<string> {
  const { positional, flag } = source;
  if (positional !== undefined && flag !== undefined) {
    throw new UsageError("give the prompt once: as the PROMPT argument or with --prompt, not both");
  }
  const given = positional ?? flag;
  if (given === undefined && !stdin.piped) {
    throw new UsageError('no prompt: give it as an argument (agent run "fix the tests"), with --prompt TEXT, or pipe it to stdin');
  }
  const fromStdin = given === undefined || given === "-";
  const text = fromStdin ? await readText(stdin, given === "-" ? undefined : STDIN_QUIET_MS, "the prompt on stdin is not valid UTF-8 text") : given;
  if (text === undefined) {
    throw new UsageError(
      `no prompt: stdin is open but nothing was written to it in ${STDIN_QUIET_MS / 1000}s; write the prompt and close stdin, or give it as an argument (agent run "fix the tests")`,
    );
  }
  if (text.trim().length === 0) {
    const from = fromStdin ? "stdin" : positional !== undefined ? "the PROMPT argument" : "--prompt";
    throw new UsageError(`the prompt from ${from} is empty; tell the agent what to do`);
  }
  if (fromStdin || !stdin.piped) return text;
  const context = await readText(stdin, STDIN_QUIET_MS, "the data piped to stdin is not valid UTF-8 text; agent reads text only (or redirect stdin from /dev/null)");
  if (context === undefined) {
    warn(`nothing arrived on stdin in ${STDIN_QUIET_MS / 1000}s and it is still open: going on without it (redirect stdin from /dev/null, or close it, when there is nothing to pipe)`);
    return text;
  }
  return context.trim() === "" ? text : `${text}\n\n<stdin>\n${context.endsWith("\n") ? context : `${context}\n`}</stdin>`;
}

async function readText(stdin: PromptStdin, quietMs: number | undefined, notText: string): Promise<string | undefined> {
  const bytes = await stdin.read(quietMs);
  if (bytes === undefined) return undefined;
  try {
    return utf8.decode(bytes);
  } catch {
    throw new UsageError(notText);
  }
}
