import { createInterface } from "node:readline/promises";
import type { Readable } from "node:stream";
import type { PermissionAsker, PermissionRequest } from "./policy.ts";

export interface AskerStreams {
  input: Readable;
  /** Where the prompt goes: stderr, so stdout keeps only the result. */
  output: NodeJS.WritableStream;
}

const SHOWN_SUBJECT_CHARS = 500;

/** The question for a permission request, as shown on the terminal. */
export function permissionQuestion({ identity, tool, effect, subject, why }: PermissionRequest): string {
  const shown = subject.length > SHOWN_SUBJECT_CHARS ? `${subject.slice(0, SHOWN_SUBJECT_CHARS)}…` : subject;
  const because = why === undefined ? "" : `(asked because ${why})\n`;
  return `\n${identity} wants to run ${tool} (${effect}):\n  ${shown.replace(/\n/g, "\n  ")}\n${because}allow? [y/N] `;
}

/**
 * Asks on a terminal: the prompt on stderr, a y/n line from stdin; anything but
 * y/yes denies. Questions are asked one at a time, since the Lead and teammates
 * can ask at once and two prompts must not share one line of input.
 */
export function createTtyAsker(streams: AskerStreams = { input: process.stdin, output: process.stderr }): PermissionAsker {
  let queue: Promise<unknown> = Promise.resolve();
  return (request, signal) => {
    const answer = queue.then(() => askOnce(streams, request, signal));
    queue = answer.catch(() => {});
    return answer;
  };
}

/** The asker when stdin and stderr are a terminal, else none (headless: the policy denies with a fix). */
export function ttyAskerIfInteractive(): PermissionAsker | undefined {
  return process.stdin.isTTY && process.stderr.isTTY ? createTtyAsker() : undefined;
}

/** Only y or yes (any case) allows; anything else, an empty line included, denies. */
export function isYes(line: string): boolean {
  return /^\s*y(es)?\s*$/i.test(line);
}

async function askOnce(streams: AskerStreams, request: PermissionRequest, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  if (streams.input.readableEnded) throw new Error("stdin is closed");
  const readline = createInterface({ input: streams.input, output: streams.output, terminal: false });
  // A question whose input ends (stdin closed, ^D) would otherwise wait for ever.
  const closed = new Promise<null>((resolve) => readline.once("close", () => resolve(null)));
  try {
    const line = await Promise.race([readline.question(permissionQuestion(request), { signal }), closed]);
    if (line === null) throw new Error("stdin closed before an answer");
    return isYes(line);
  } catch (error) {
    if (signal.aborted) return false;
    throw error;
  } finally {
    readline.close();
  }
}
