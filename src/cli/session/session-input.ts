import type { Interface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { ANSWER_KEY_CHARS, CONFIRM_ENTER_MS } from "../../permissions/tty-asker.ts";
import { terminalColumns } from "../terminal/columns.ts";
import { rowsDown } from "../terminal/markdown.ts";
import type { InputLine, Screen } from "../terminal/screen.ts";
import type { Key, KeySource } from "./team-picker.ts";

export interface SessionStreams {
  input: Readable;
  /** Where the prompt and the echo of typed text go (stderr: stdout keeps the answers). */
  output: Writable;
  /** The terminal's owner: the editor's writes go through it, and it moves the input line when others print. */
  screen: Screen;
  /** A terminal: line editing, history, Ctrl-C as an event. */
  terminal: boolean;
  /** Tab completion on a terminal: the candidates for the line typed so far. */
  completer?: (line: string) => [string[], string];
}

const PROMPT = "> ";

/** What readline keeps of the rows it drew (not in its types): reset once the screen has erased them. */
type Readline = Interface & { prevRows?: number };

/**
 * The user's side of an interactive session, over one readline interface: the
 * next request, answers to permission questions (a question takes the next
 * line, so a y/n never becomes a request). The prompt and what was typed are
 * the screen's input line: output arriving meanwhile prints above it and the
 * line is redrawn below, the typed text kept.
 */
export class SessionInput implements KeySource {
  readonly #rl: Readline;
  readonly #terminal: boolean;
  readonly #input: Readable;
  readonly #screen: Screen;
  readonly #columns: () => number;
  /** When a single key last answered a question (an Enter right after it only confirms it). */
  #keyAnsweredAt = 0;
  readonly #queued: string[] = [];
  #waiting: ((line: string | null) => void) | undefined;
  #answering: ((line: string | null) => void) | undefined;
  #questions: Promise<unknown> = Promise.resolve();
  #dialogs: Promise<unknown> = Promise.resolve();
  #closed = false;
  /** Questions waiting for the line being typed to be entered and acted on (or erased). */
  readonly #afterLine: (() => void)[] = [];
  /** The prompt and typed text, as the screen moves them. */
  readonly #line: InputLine = {
    cursorRow: () => this.#rl.getCursorPos().rows,
    redraw: () => {
      // The screen erased the rows readline drew: it must not move up over them again.
      this.#rl.prevRows = 0;
      this.#rl.prompt(true);
    },
  };
  /** What sees keys before the line editor, newest last. */
  readonly #keyHandlers: ((key: Key) => boolean)[] = [];
  /** Ctrl-C on a terminal (readline turns it into an event instead of a signal). */
  onInterrupt: () => void = () => this.close();

  constructor(streams: SessionStreams) {
    this.#terminal = streams.terminal;
    this.#input = streams.input;
    this.#screen = streams.screen;
    const tty = streams.output as Writable & { columns?: number; rows?: number; isTTY?: boolean };
    this.#columns = () => terminalColumns(tty);
    // Required here, not imported at the top: the one-file bundle hoists a static
    // import of a builtin to its start, and node:readline (with the stream modules it
    // loads) cost every command's start-up 1–2 ms, `mailbox show` included.
    const { createInterface } = require("node:readline") as typeof import("node:readline");
    this.#rl = createInterface({
      input: streams.input,
      output: editorOutput(streams.screen, tty, this.#columns),
      terminal: streams.terminal,
      prompt: PROMPT,
      ...(streams.terminal && streams.completer ? { completer: streams.completer } : {}),
    });
    this.#rl.on("line", (line) => {
      const waiting = this.#waiting;
      this.#waiting = undefined;
      if (waiting) {
        // readline moved below the entered line: it stays in the log, as typed.
        const shown = `${PROMPT}${line}`;
        this.#screen.inputDone(rowsDown(shown, this.#columns()) + 1, shown);
        waiting(line);
      } else {
        // Typed ahead, during a turn: kept for the next prompt; a question that waited for it may go on.
        this.#queued.push(line);
        this.handled();
      }
    });
    this.#rl.on("close", () => {
      this.#closed = true;
      this.#screen.closeInput();
      for (const resolve of [this.#waiting, this.#answering]) resolve?.(null);
      this.#waiting = this.#answering = undefined;
      this.handled();
    });
    this.#rl.on("SIGINT", () => this.onInterrupt());
    this.#hookKeys();
  }

  /** Shows the prompt and resolves with the next request, or null at the end of input (Ctrl-D). */
  next(): Promise<string | null> {
    // The line before was acted on: a question that waited for it may be asked.
    this.handled();
    const queued = this.#queued.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.#closed) return Promise.resolve(null);
    const line = new Promise<string | null>((resolve) => {
      this.#waiting = resolve;
    });
    this.#screen.showInput(this.#line);
    return line;
  }

  /**
   * The line just entered is being acted on (a turn of the Lead starts): a
   * question that waited for it is asked now, not after the whole turn.
   */
  handled(): void {
    for (const ask of this.#afterLine.splice(0)) ask();
  }

  /** Asks `question` and resolves with the line that answers it (null if input ends); one question at a time. */
  /** `singleKey`: y n e pressed alone answer without Enter (a permission question's choice; a and N need Enter). */
  ask(question: string, signal: AbortSignal, singleKey = false): Promise<string | null> {
    const answer = this.#questions.then(() => this.#askOnce(question, signal, singleKey));
    this.#questions = answer.catch(() => {});
    return answer;
  }

  /**
   * Runs `dialog` (several questions, e.g. a permission and its reason) with
   * the terminal to itself and no other dialog's question between. Text typed
   * at the prompt is that prompt's: while a line is half typed, `notice` (the
   * question) is shown above it, the typed text kept below, and the dialog
   * waits until the line is entered and acted on, or erased.
   */
  async exclusive<T>(dialog: () => Promise<T>, signal: AbortSignal, notice?: string): Promise<T> {
    const result = this.#dialogs.then(async () => {
      await this.#lineFree(signal, notice);
      return this.#screen.question(dialog);
    });
    this.#dialogs = result.catch(() => {});
    return result;
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

  /** Resolves once no half-typed line is at the prompt (at once when there is none). */
  async #lineFree(signal: AbortSignal, notice: string | undefined): Promise<void> {
    // Also text typed ahead during a turn: it belongs to the next prompt, not to this question.
    if (!this.#terminal || this.#rl.line.length === 0 || this.#closed) return;
    if (notice !== undefined) this.#screen.message(`${notice}(asked once the line you are typing is entered, or erased)\n`);
    await new Promise<void>((resolve) => {
      const free = () => {
        this.#input.off("keypress", onKey);
        signal.removeEventListener("abort", free);
        resolve();
      };
      // After readline's own listener has changed the line: erased to nothing (not entered), it is free.
      const onKey = (_char: string | undefined, key: { name?: string } | undefined) => {
        const entered = key?.name === "return" || key?.name === "enter";
        if (this.#rl.line.length === 0 && !entered) queueMicrotask(free);
      };
      this.#input.on("keypress", onKey);
      signal.addEventListener("abort", free, { once: true });
      this.#afterLine.push(free);
    });
  }

  /** Every key goes to `handler` before the line editor until the returned function is called (newest handler first). */
  takeKeys(handler: (key: Key) => boolean): () => void {
    this.#keyHandlers.push(handler);
    return () => {
      const at = this.#keyHandlers.indexOf(handler);
      if (at >= 0) this.#keyHandlers.splice(at, 1);
    };
  }

  /** Types `text` at the prompt as if from the keyboard. */
  type(text: string): void {
    if (!this.#closed) this.#rl.write(text);
  }

  /**
   * readline's key handler, wrapped: a key a handler used (Ctrl-T, the /team
   * list's arrows) never reaches the line. `_ttyWrite` is readline's own method
   * (Node's and Bun's); without it no key is taken, and typing works as before.
   */
  #hookKeys(): void {
    const rl = this.#rl as Interface & { _ttyWrite?: (sequence: string | undefined, key: Key | undefined) => void };
    const original = rl._ttyWrite;
    if (!this.#terminal || typeof original !== "function") return;
    rl._ttyWrite = (sequence, key) => {
      const seen = key ?? { sequence };
      for (const handler of [...this.#keyHandlers].reverse()) if (handler(seen)) return;
      original.call(rl, sequence, key);
    };
  }

  async #askOnce(question: string, signal: AbortSignal, singleKey: boolean): Promise<string | null> {
    if (this.#closed || signal.aborted) return null;
    return new Promise((resolve) => {
      // The request prompt the question replaces comes back when the screen's question ends.
      const done = (line: string | null) => {
        this.#answering = undefined;
        resolve(line);
      };
      // How many characters came with the key: several at once were pasted or typed ahead, not pressed for the question.
      let chunk = 0;
      const onData = (data: Buffer | string) => {
        chunk = [...data.toString()].length;
      };
      // After readline's own listener has put the key on the line: a lone answer key is entered at once.
      const onKey = (key: string | undefined) => {
        if (key !== undefined && chunk <= 1 && this.#rl.line === key && ANSWER_KEY_CHARS.has(key)) {
          this.#keyAnsweredAt = Date.now();
          this.#rl.write(null, { name: "return" });
        }
      };
      const keys = singleKey && this.#terminal;
      let settled = false;
      const finish = (line: string | null) => {
        if (settled) return;
        settled = true;
        if (keys) {
          this.#input.off("keypress", onKey);
          this.#input.off("data", onData);
        }
        done(line);
      };
      this.#answering = finish;
      // The screen took the prompt's rows off before the question.
      this.#rl.prevRows = 0;
      if (keys) {
        // Before readline's own listener, which makes the keypresses of a chunk.
        this.#input.prependListener("data", onData);
        this.#input.on("keypress", onKey);
      }
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

/**
 * readline's output: what it writes goes through the screen (the input line
 * is the screen's to move); the width is the terminal's, 80 when it reports 0,
 * so a long line wraps where the terminal wraps it.
 */
function editorOutput(screen: Screen, tty: Writable & { rows?: number; isTTY?: boolean }, columns: () => number): Writable {
  const output = {
    write(data: string | Uint8Array, encoding?: unknown, callback?: unknown): boolean {
      screen.editorWrite(typeof data === "string" ? data : new TextDecoder().decode(data));
      const done = typeof encoding === "function" ? encoding : callback;
      if (typeof done === "function") done();
      return true;
    },
    get columns() {
      return columns();
    },
    get rows() {
      return tty.rows;
    },
    isTTY: tty.isTTY,
    // Resizes are the terminal's: readline listens on it.
    on: (event: string, listener: (...args: unknown[]) => void) => (tty.on(event, listener), output),
    once: (event: string, listener: (...args: unknown[]) => void) => (tty.once(event, listener), output),
    off: (event: string, listener: (...args: unknown[]) => void) => (tty.off(event, listener), output),
    removeListener: (event: string, listener: (...args: unknown[]) => void) => (tty.removeListener(event, listener), output),
  };
  return output as unknown as Writable;
}
