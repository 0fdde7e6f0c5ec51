import type { Readable } from "node:stream";
import type { PermissionAnswer, PermissionAsker, PermissionRequest } from "./policy.ts";
import { NO_PALETTE, type Palette, paletteFor, previewCall } from "./preview.ts";

export interface AskerStreams {
  input: Readable;
  /** Where the prompt goes: stderr, so stdout keeps only the result. */
  output: NodeJS.WritableStream;
  palette?: Palette;
}

/** The choices, as the question lists them. */
export const ANSWER_KEYS = "[y]es once, [a]lways this session, [n]o, [N]ever this session, [e] no and tell the model why";

/** The question for a permission request, as shown on the terminal: who, what the call will do, the choices. */
export function permissionQuestion(request: PermissionRequest, palette: Palette = NO_PALETTE): string {
  const { identity, tool, effect, why, remember } = request;
  const because = why === undefined ? "" : `(asked because ${why})\n`;
  const shown = previewCall(request, palette).map((line) => `  ${line.replace(/\n/g, "\n  ")}\n`).join("");
  const always = remember && remember.allow.length > 0 ? `(a adds: ${remember.allow.join(", ")})\n` : "";
  return `\n${identity} wants to run ${tool} (${effect}):\n${shown}${because}${always}allow? ${ANSWER_KEYS}: `;
}

export type AnswerKey = "yes" | "always" | "no" | "never" | "explain";

/**
 * y/yes, a/always, N/never (capital N: lower-case n is a plain no), e/explain;
 * anything else, an empty line included, is a no.
 */
export function parseAnswerKey(line: string): AnswerKey {
  const word = line.trim();
  if (/^y(es)?$/i.test(word)) return "yes";
  if (/^a(lways)?$/i.test(word)) return "always";
  if (word === "N" || /^never$/i.test(word)) return "never";
  if (/^e(xplain)?$/i.test(word)) return "explain";
  return "no";
}

/** Only y or yes (any case) allows; kept for callers that want a plain yes/no. */
export function isYes(line: string): boolean {
  return parseAnswerKey(line) === "yes";
}

/**
 * One question through `ask` (which shows a prompt and resolves with the line
 * typed, or null when input ends): the call, then for `e` a second line, the
 * reason the model is told. `note` prints the rules an always/never answer added.
 */
export async function askPermission(
  request: PermissionRequest,
  ask: (prompt: string) => Promise<string | null>,
  note: (text: string) => void,
  palette: Palette = NO_PALETTE,
): Promise<PermissionAnswer> {
  const line = await ask(permissionQuestion(request, palette));
  if (line === null) return { answer: "no" };
  const key = parseAnswerKey(line);
  if (key === "explain") {
    const reason = await ask("why not? (sent to the model): ");
    return reason === null || reason.trim() === "" ? { answer: "no" } : { answer: "no", reason: reason.trim() };
  }
  if (key === "always" || key === "never") {
    const rules = key === "always" ? request.remember?.allow : request.remember?.deny;
    if (rules && rules.length > 0) note(`added ${key === "always" ? "allow" : "deny"} rule${rules.length === 1 ? "" : "s"} for this session: ${rules.join(", ")}\n`);
  }
  return { answer: key };
}

/**
 * Asks on a terminal: the prompt on stderr, the answer from stdin. Questions
 * are asked one at a time, since the Lead and teammates can ask at once and
 * two prompts must not share one line of input.
 */
export function createTtyAsker(streams: AskerStreams = { input: process.stdin, output: process.stderr, palette: paletteFor(process.stderr) }): PermissionAsker {
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

async function askOnce(streams: AskerStreams, request: PermissionRequest, signal: AbortSignal): Promise<PermissionAnswer> {
  if (signal.aborted) return { answer: "no" };
  if (streams.input.readableEnded) throw new Error("stdin is closed");
  // Loaded on the first question, not at every start (~40 ms from the sources, on the way to the first model request).
  const { createInterface } = await import("node:readline/promises");
  const readline = createInterface({ input: streams.input, output: streams.output, terminal: false });
  // A question whose input ends (stdin closed, ^D) would otherwise wait for ever.
  const closed = new Promise<null>((resolve) => readline.once("close", () => resolve(null)));
  const ask = async (prompt: string) => {
    const line = await Promise.race([readline.question(prompt, { signal }), closed]);
    if (line === null) throw new Error("stdin closed before an answer");
    return line;
  };
  try {
    return await askPermission(request, ask, (text) => streams.output.write(text), streams.palette);
  } catch (error) {
    if (signal.aborted) return { answer: "no" };
    throw error;
  } finally {
    readline.close();
  }
}
