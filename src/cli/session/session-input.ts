import type { Interface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { ANSWER_KEY_CHARS, CONFIRM_ENTER_MS } from "../../permissions/tty-asker.ts";

export interface SessionStreams {
  input: Readable;
  /** Where the prompt and the echo of typed text go (stderr: stdout keeps the answers). */
  output: Writable;
  /** A terminal: line editing, history, Ctrl-C as an event. */
  terminal: boolean;
  /** Tab completion on a terminal: the candidates for the line typed so far. */
  completer?: (line: string) => [string[], string];
}

const PROMPT = "> ";
/** Back to the start of the line and erase it. */
const CLEAR_LINE = "\r\x1b[K";

/**
 * The user's side of an interactive session, over one readline interface: the
 * next request, answers to permission questions (a pending question takes the
 * next line, so a y/n never becomes a request), and output that arrives while
 * the prompt is shown (teammates reporting) printed above it, the prompt and
 * what was typed redrawn below.
 */
export class SessionInput {
  readonly #rl: Interface;
  readonly #terminal: boolean;
  readonly #output: Writable;
  readonly #input: Readable;
  /** When a single key last answered a question (an Enter right after it only confirms it). */
  #keyAnsweredAt = 0;
  readonly #queued: string[] = [];
  #waiting: ((line: string | null) => void) | undefined;
  #answering: ((line: string | null) => void) | undefined;
  #questions: Promise<unknown> = Promise.resolve();
  #dialogs: Promise<unknown> = Promise.resolve();
  #closed = false;
  /** Questions waiting for the line being typed to be entered. */
  readonly #afterLine: (() => void)[] = [];
  /** Ctrl-C on a terminal (readline turns it into an event instead of a signal). */
  onInterrupt: () => void = () => this.close();

  constructor(streams: SessionStreams) {
    this.#terminal = streams.terminal;
    this.#output = streams.output;
    this.#input = streams.input;
    // Required here, not imported at the top: the one-file bundle hoists a static
    // import of a builtin to its start, and node:readline (with the stream modules it
    // loads) cost every command's start-up 1–2 ms, `mailbox show` included.
    const { createInterface } = require("node:readline") as typeof import("node:readline");
    this.#rl = createInterface({
      input: streams.input,
      output: streams.output,
      terminal: streams.terminal,
      prompt: PROMPT,
      ...(streams.terminal && streams.completer ? { completer: streams.completer } : {}),
    });
    this.#rl.on("line", (line) => {
      const waiting = this.#waiting;
      this.#waiting = undefined;
      if (waiting) waiting(line);
      else this.#queued.push(line); // typed ahead, during a turn
      for (const ask of this.#afterLine.splice(0)) ask();
    });
    this.#rl.on("close", () => {
      this.#closed = true;
      for (const resolve of [this.#waiting, this.#answering]) resolve?.(null);
      this.#waiting = this.#answering = undefined;
      for (const ask of this.#afterLine.splice(0)) ask();
    });
    this.#rl.on("SIGINT", () => this.onInterrupt());
  }

  /** Shows the prompt and resolves with the next request, or null at the end of input (Ctrl-D). */
  next(): Promise<string | null> {
    const queued = this.#queued.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.#closed) return Promise.resolve(null);
    this.#rl.prompt();
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  /** Asks `question` and resolves with the line that answers it (null if input ends); one question at a time. */
  /** `singleKey`: y a n N e answer on their own, without Enter (a permission question's choice). */
  ask(question: string, signal: AbortSignal, singleKey = false): Promise<string | null> {
    const answer = this.#questions.then(() => this.#askOnce(question, signal, singleKey));
    this.#questions = answer.catch(() => {});
    return answer;
  }

  /** Runs `dialog` (several questions, e.g. a permission and its reason) with no other dialog's question between. */
  exclusive<T>(dialog: () => Promise<T>): Promise<T> {
    const result = this.#dialogs.then(dialog);
    this.#dialogs = result.catch(() => {});
    return result;
  }

  /** Prints through `write` without tearing the prompt: above it when it is shown, redrawn after. */
  interject(write: () => void): void {
    const prompting = this.#terminal && this.#waiting !== undefined;
    if (prompting) this.#output.write(CLEAR_LINE);
    write();
    // `true` keeps the cursor where the user was typing.
    if (prompting) this.#rl.prompt(true);
  }

  close(): void {
    this.#rl.close();
  }

  /** Drops what was typed at the prompt (Ctrl-C's first press): to its end, then everything before the cursor. */
  clearLine(): void {
    if (!this.#terminal || this.#rl.line.length === 0) return;
    this.#rl.write(null, { ctrl: true, name: "e" });
    this.#rl.write(null, { ctrl: true, name: "u" });
  }

  async #askOnce(question: string, signal: AbortSignal, singleKey: boolean): Promise<string | null> {
    if (this.#closed || signal.aborted) return null;
    // Text typed at the prompt is that prompt's: the question waits until the line is entered.
    if (this.#terminal && this.#waiting !== undefined && this.#rl.line.length > 0) {
      this.interject(() => this.#output.write("agent: a permission question is waiting; it is asked once you enter this line\n"));
      await new Promise<void>((resolve) => this.#afterLine.push(resolve));
      if (this.#closed || signal.aborted) return null;
    }
    return new Promise((resolve) => {
      const prompting = this.#terminal && this.#waiting !== undefined;
      const done = (line: string | null) => {
        this.#answering = undefined;
        resolve(line);
        // The request prompt the question replaced, shown again.
        if (prompting && !this.#closed) this.#rl.prompt(true);
      };
      // After readline's own listener has put the key on the line: a lone answer key is entered at once.
      const onKey = (key: string | undefined) => {
        if (key !== undefined && this.#rl.line === key && ANSWER_KEY_CHARS.has(key)) {
          this.#keyAnsweredAt = Date.now();
          this.#rl.write(null, { name: "return" });
        }
      };
      const keys = singleKey && this.#terminal;
      let settled = false;
      const finish = (line: string | null) => {
        if (settled) return;
        settled = true;
        if (keys) this.#input.off("keypress", onKey);
        done(line);
      };
      this.#answering = finish;
      if (prompting) this.#output.write(CLEAR_LINE);
      if (keys) this.#input.on("keypress", onKey);
      const answered = (line: string) => {
        // The Enter that confirmed the previous key answer, typed a moment after it: not this answer.
        if (line === "" && Date.now() - this.#keyAnsweredAt < CONFIRM_ENTER_MS) this.#rl.question("", { signal }, answered);
        else finish(line);
      };
      // The question takes the next line ahead of the "line" listener.
      this.#rl.question(question, { signal }, answered);
      signal.addEventListener("abort", () => finish(null), { once: true });
    });
  }
}
