import type { Readable } from "node:stream";
import type { PermissionAnswer, PermissionAsker, PermissionRequest } from "./policy.ts";
import { NO_PALETTE, type Palette, paletteFor, previewCall } from "./preview.ts";
import { discardTypedAhead, isTerminal } from "../process/terminal.ts";

/** Runs a question with the terminal to itself; `write` prints the question (the terminal's owner, Screen.question). */
export type AskAround = <T>(ask: (write: (text: string) => void) => Promise<T>) => Promise<T>;

export interface AskerStreams {
  input: Readable;
  /** Where the prompt goes: stderr, so stdout keeps only the result. */
  output: NodeJS.WritableStream;
  palette?: Palette;
  /**
   * Runs each question with the terminal to itself (RunOutput.whileAsking:
   * the status block off the screen, other output held until the answer),
   * printing it through the `write` it is given instead of `output`.
   */
  around?: AskAround;
}

/** stdin as a terminal: raw mode lets one key answer without Enter. */
interface KeyInput extends Readable {
  isTTY?: boolean;
  setRawMode?: (raw: boolean) => unknown;
}

/**
 * The keys that answer on their own, without Enter: the answers for this call
 * only. `a` and `N` change what is asked for the rest of the session, so they
 * need Enter: a sentence typed into the question (`add a readme`) never makes a rule.
 */
export const ANSWER_KEY_CHARS = new Set(["y", "n", "e"]);
/** An Enter this soon after a key answer is the habit of confirming it, not an answer to what comes next. */
export const CONFIRM_ENTER_MS = 1000;
const CTRL_C = "\x03";
const CTRL_D = "\x04";
const BACKSPACES = new Set(["\x7f", "\b"]);

/** The choices, as the question lists them. */
export const ANSWER_KEYS = "[y]es once, [a]lways this session (Enter), [n]o, [N]ever this session (Enter), [e] no and tell the model why";

/** The question for a permission request, as shown on the terminal: who, what the call will do, the choices. */
export function permissionQuestion(request: PermissionRequest, palette: Palette = NO_PALETTE): string {
  const { identity, tool, effect, why, remember } = request;
  const because = why === undefined ? "" : `(asked because ${why})\n`;
  const shown = previewCall(request, palette).map((line) => `  ${line.replace(/\n/g, "\n  ")}\n`).join("");
  const always = remember && remember.allow.length > 0 ? `(a adds: ${remember.allow.join(", ")})\n` : "";
  return `\n${identity} wants to run ${tool} (${effect}):\n${shown}${because}${always}allow? ${ANSWER_KEYS}: `;
}

export type AnswerKey = "yes" | "always" | "no" | "never" | "explain";

/** Whether `line` is one of the answers (an empty line, Enter alone, is a no): anything else was not typed for the question. */
export function isAnswer(line: string): boolean {
  return /^\s*(y(es)?|a(lways)?|n(o)?|N|never|e(xplain)?|)\s*$/i.test(line);
}

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
  /** `key`: the allow? question, which a single key may answer; the reason after `e` is a line. */
  ask: (prompt: string, answer: "key" | "line") => Promise<string | null>,
  note: (text: string) => void,
  palette: Palette = NO_PALETTE,
): Promise<PermissionAnswer> {
  let line = await ask(permissionQuestion(request, palette), "key");
  // Text that is no answer (a sentence meant for the prompt) answers nothing: the question is asked again.
  while (line !== null && !isAnswer(line)) line = await ask(`not an answer: type y, n or e, or a or N then Enter: `, "key");
  if (line === null) return { answer: "no" };
  const key = parseAnswerKey(line);
  if (key === "explain") {
    const reason = await ask("why not? (sent to the model): ", "line");
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
  const keys = { lastAt: 0 };
  const around: AskAround = streams.around ?? ((ask) => ask((text) => streams.output.write(text)));
  return (request, signal) => {
    const answer = queue.then(() => around((write) => askOnce(streams.input, write, streams.palette, request, signal, keys)));
    queue = answer.catch(() => {});
    return answer;
  };
}

/** The asker when stdin and stderr are a terminal, else none (headless: the policy denies with a fix). */
export function ttyAskerIfInteractive(around?: AskAround): PermissionAsker | undefined {
  if (!isTerminal(0) || !isTerminal(2)) return undefined;
  return createTtyAsker({ input: process.stdin, output: process.stderr, palette: paletteFor(process.stderr), ...(around ? { around } : {}) });
}

type Write = (text: string) => void;

async function askOnce(
  stdin: Readable,
  write: Write,
  palette: Palette | undefined,
  request: PermissionRequest,
  signal: AbortSignal,
  keys: { lastAt: number },
): Promise<PermissionAnswer> {
  if (signal.aborted) return { answer: "no" };
  if (stdin.readableEnded) throw new Error("stdin is closed");
  const input = stdin as KeyInput;
  const raw = input.isTTY === true && typeof input.setRawMode === "function";
  const ask = async (prompt: string, answer: "key" | "line") => {
    const line = raw && answer === "key" ? await readAnswerKey(input, write, prompt, signal, keys) : await readLine(input, write, prompt, signal, keys);
    if (line === null) throw new Error("stdin closed before an answer");
    return line;
  };
  try {
    return await askPermission(request, ask, write, palette);
  } catch (error) {
    if (signal.aborted) return { answer: "no" };
    throw error;
  }
}

/** A line from stdin in the terminal's own line mode; an Enter that only confirmed the key before is skipped. */
async function readLine(input: Readable, write: Write, prompt: string, signal: AbortSignal, keys: { lastAt: number }): Promise<string | null> {
  // Loaded on the first question, not at every start (~40 ms from the sources, on the way to the first model request).
  const { createInterface } = await import("node:readline/promises");
  // No output: the prompt goes through `write` (the terminal's owner), the terminal echoes the typing.
  const readline = createInterface({ input, terminal: false });
  // A question whose input ends (stdin closed, ^D) would otherwise wait for ever.
  const closed = new Promise<null>((resolve) => readline.once("close", () => resolve(null)));
  try {
    write(prompt);
    let line = await Promise.race([readline.question("", { signal }), closed]);
    if (line === "" && Date.now() - keys.lastAt < CONFIRM_ENTER_MS) line = await Promise.race([readline.question("", { signal }), closed]);
    return line;
  } finally {
    readline.close();
  }
}

/**
 * The answer to `allow?` from a raw terminal: y n e answer at once (the key is
 * echoed) when pressed alone into an empty line; anything else — a or N, keys
 * typed ahead, a paste — is typed as a word and ends with Enter (an
 * empty line is a no). Ctrl-C is passed on as the SIGINT it would have been,
 * Ctrl-D ends the input.
 */
function readAnswerKey(input: KeyInput, write: Write, prompt: string, signal: AbortSignal, keys: { lastAt: number }): Promise<string | null> {
  // Keys typed before the question was drawn were not typed for it.
  const fd = (input as { fd?: unknown }).fd;
  if (typeof fd === "number") discardTypedAhead(fd);
  while (input.read() !== null) {
    // Read into the stream before the question: dropped too.
  }
  write(prompt);
  return new Promise((resolve) => {
    let typed = "";
    const finish = (answer: string | null) => {
      input.off("data", onData);
      input.off("end", onEnd);
      signal.removeEventListener("abort", onAbort);
      input.setRawMode?.(false);
      input.pause();
      write("\n");
      resolve(answer);
    };
    const onEnd = () => finish(null);
    const onAbort = () => finish(null);
    const onData = (chunk: Buffer | string) => {
      const text = chunk.toString();
      // Several characters at once were typed ahead or pasted: text for the line, never a one-key answer.
      const burst = [...text].length > 1;
      for (const char of text) {
        if (char === CTRL_C) {
          // A no; the signal then stops the run as it would have without raw mode.
          finish("");
          process.kill(process.pid, "SIGINT");
          return;
        }
        if (char === CTRL_D) return finish(null);
        if (char === "\r" || char === "\n") {
          // The Enter that confirmed the previous question's key, typed a moment after it.
          if (typed === "" && Date.now() - keys.lastAt < CONFIRM_ENTER_MS) continue;
          return finish(typed);
        }
        if (BACKSPACES.has(char)) {
          if (typed.length > 0) {
            typed = typed.slice(0, -1);
            write("\b \b");
          }
          continue;
        }
        if (typed === "" && !burst && ANSWER_KEY_CHARS.has(char)) {
          write(char);
          keys.lastAt = Date.now();
          return finish(char);
        }
        if (char >= " ") {
          typed += char;
          write(char);
        }
      }
    };
    input.setRawMode?.(true);
    input.on("data", onData);
    input.once("end", onEnd);
    signal.addEventListener("abort", onAbort, { once: true });
    input.resume();
  });
}
