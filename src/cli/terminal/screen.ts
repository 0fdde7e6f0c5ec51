import { terminalSafe, visibleControls } from "../../security/terminal-text.ts";

/** Which of the process's two streams text goes to; on a terminal both show on the same screen. */
export type Channel = "out" | "err";
/** Where the screen's bytes go, in the order it makes them. */
export type ScreenSink = (text: string, channel: Channel) => void;

/** The line editor's line (the session's `> ` prompt and what was typed), as the screen moves it. */
export interface InputLine {
  /** Rows from the line's first row down to the cursor (a long typed line wraps). */
  cursorRow(): number;
  /** Draws the prompt and the typed text again from the start of a row, the cursor where it was. */
  redraw(): void;
}

/** The status block: lines kept below the log, redrawn in place. */
export interface StatusLines {
  render: () => string[];
  /** Wraps each line (a dim colour); identity when colour is off. */
  style?: (line: string) => string;
}

export interface ScreenOptions {
  /** Terminal width (never the 0 some terminals report: terminalColumns). */
  columns: () => number;
  /** The channels that are this terminal (both by default); text for another one goes straight to the sink. */
  channels?: readonly Channel[];
}

/** Back to the start of the row, then erase it and everything below. */
const ERASE_BELOW = "\r\x1b[J";
/** Escape sequences (CSI, OSC to BEL or ST, two-byte ones): they move nothing along a row. */
const ESCAPES = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/g;

/**
 * The one owner of a terminal: every writer — the answer streaming in, log
 * lines, notes and errors, the status block, permission questions and the
 * session's line editor — goes through it, so none draws over another.
 *
 * From the top down the screen is the log (scrolling), then the bottom: the
 * status block, then the input line. Anything printed to the log first takes
 * the bottom off, and once the log's row is complete the bottom is drawn again
 * below it; while a line of the log is half printed (an answer streaming) the
 * bottom stays off. A message always starts on a fresh row, and never breaks
 * a row of the answer: one that comes while the row is half printed follows
 * it once it ends (the answer's newline, or endLine when it is cut).
 *
 * A question takes the terminal to itself: queued behind the one on screen,
 * the bottom taken off and not redrawn, everything else printed meanwhile held
 * and printed, in order, once it is answered.
 */
export class Screen {
  readonly #sink: ScreenSink;
  /** The sink itself, for the line editor's own bytes (what the user typed, its cursor moves). */
  readonly #editorSink: ScreenSink;
  readonly #o: ScreenOptions;
  /** Characters on the log's last row after the cursor moved to its start (0: a fresh row). */
  #column = 0;
  #status: StatusLines | undefined;
  /** Rows the status block takes on screen now. */
  #statusRows = 0;
  #input: InputLine | undefined;
  /** The input line is on screen now (the cursor is on it). */
  #inputShown = false;
  /** A question is on screen. */
  #asking = false;
  readonly #held: { text: string; channel: Channel; message: boolean }[] = [];
  /** Messages that came while the answer's row was half printed: they follow it once it ends. */
  readonly #afterRow: { text: string; channel: Channel }[] = [];
  #questions: Promise<unknown> = Promise.resolve();
  /** Aborted when another question is asked: the question on screen (or queued) that yields to it. */
  #giveWay: AbortController | undefined;

  constructor(sink: ScreenSink, options: ScreenOptions) {
    // The last gate: whatever a writer forgot to make visible is shown, not obeyed, on the terminal.
    this.#sink = (text, channel) => sink(this.#mine(channel) ? terminalSafe(text) : text, channel);
    this.#editorSink = sink;
    this.#o = options;
  }

  /** True while the log's last row is half printed. */
  get midLine(): boolean {
    return this.#column > 0;
  }

  /** True while a question has the terminal. */
  get asking(): boolean {
    return this.#asking;
  }

  /** Text as it comes (an answer streaming in): no line ending added, the row may stay open. */
  write(text: string, channel: Channel = "out"): void {
    if (text === "") return;
    if (!this.#mine(channel)) return this.#sink(text, channel);
    if (this.#asking) this.#held.push({ text, channel, message: false });
    else this.#print(text, channel);
  }

  /** A log line, a note or an error: on a row of its own, its last line ended. */
  message(text: string, channel: Channel = "err"): void {
    if (text === "") return;
    const whole = text.endsWith("\n") ? text : `${text}\n`;
    if (!this.#mine(channel)) return this.#sink(whole, channel);
    if (this.#asking) this.#held.push({ text: whole, channel, message: true });
    // Never inside a row of the answer: a teammate's line waits for the row to end.
    else if (this.#column > 0) this.#afterRow.push({ text: whole, channel });
    else this.#print(whole, channel);
  }

  /** Ends a half-printed row (an answer cut short): what follows, even from elsewhere, starts on a fresh one. */
  endLine(channel: Channel = "out"): void {
    if (this.#column > 0 && !this.#asking) this.#print("\n", channel);
  }

  /** Shows `status` below the log from now on (undefined: no block); drawn at once when the row is free. */
  setStatus(status: StatusLines | undefined): void {
    this.#status = status;
    this.refresh();
  }

  /** Draws the bottom again (the status block's lines changed, time moved). */
  refresh(): void {
    if (this.#asking || this.#column > 0) return;
    this.#drawBottom(this.#eraseBottom());
  }

  /** The line editor shows its prompt: kept at the bottom, below the status block, until `inputDone`. */
  showInput(input: InputLine): void {
    this.#input = input;
    if (this.#asking) return;
    if (this.#column > 0) this.#print("\n", "err");
    else this.#drawBottom(this.#eraseBottom());
  }

  /**
   * The editor's line was entered: it ends the input line (the editor moved the
   * cursor below it, `rows` rows down from its start), which stays in the log.
   * The status block above it is moved below it.
   */
  inputDone(rows: number, shown: string): void {
    const wasShown = this.#inputShown;
    this.#input = undefined;
    this.#inputShown = false;
    this.#column = 0;
    if (!wasShown || this.#statusRows === 0) return;
    const up = this.#statusRows + rows;
    this.#statusRows = 0;
    this.#drawBottom(`\x1b[${up}A${ERASE_BELOW}${shown}\n`);
  }

  /** The line editor stops taking lines (Ctrl-D, the session ends): its line stays, what follows starts below it. */
  closeInput(): void {
    const shown = this.#inputShown;
    this.#input = undefined;
    this.#inputShown = false;
    if (shown) this.#sink("\n", "err");
    this.#column = 0;
  }

  /** What the line editor writes (its prompt, echo, cursor moves): its own business, on the input line. */
  editorWrite(text: string): void {
    this.#editorSink(text, "err");
  }

  /**
   * Runs `ask` with the terminal to itself, after any question already on
   * screen: `write` prints the question (and `ask` reads the answer); the
   * status block and the input line are taken off and stay off, other output
   * waits. Afterwards, held output is printed and the bottom drawn again.
   * With `yields`, the next question asked aborts `gaveWay`: `ask` should then
   * end at once, so a list the user browses never keeps a question waiting.
   */
  question<T>(ask: (write: (text: string) => void, gaveWay: AbortSignal) => Promise<T>, options: { yields?: boolean } = {}): Promise<T> {
    // Something the user only browses (the /team list) gives way to any question asked after it.
    this.#giveWay?.abort();
    const gaveWay = new AbortController();
    if (options.yields) this.#giveWay = gaveWay;
    const turn = this.#questions.then(async () => {
      // The question starts on a row of its own, after what waited for the row to end.
      this.endLine();
      this.#asking = true;
      const erase = this.#eraseBottom();
      if (erase !== "") this.#sink(erase, "err");
      try {
        return await ask((text) => {
          this.#sink(text, "err");
          this.#track(text);
        }, gaveWay.signal);
      } finally {
        if (this.#giveWay === gaveWay) this.#giveWay = undefined;
        // The answer ended its row (Enter, or the key answer's newline).
        this.#column = 0;
        this.#asking = false;
        for (const { text, channel, message } of this.#held.splice(0)) {
          if (message) this.message(text, channel);
          else this.write(text, channel);
        }
        this.refresh();
      }
    });
    this.#questions = turn.catch(() => {});
    return turn;
  }

  /** Takes the status block off for good, erasing it (before the final answer). */
  clearStatus(): void {
    this.#status = undefined;
    if (this.#asking) return;
    const erase = this.#eraseBottom();
    if (erase !== "") this.#sink(erase, "err");
    if (this.#column === 0) this.#drawBottom("");
  }

  #mine(channel: Channel): boolean {
    return this.#o.channels?.includes(channel) ?? true;
  }

  #print(text: string, channel: Channel): void {
    const erase = this.#eraseBottom();
    // Lines waiting for the answer's row go right after the last row this text ends.
    const ends = this.#afterRow.length > 0 ? text.lastIndexOf("\n") + 1 : 0;
    if (ends > 0) {
      this.#sink(`${erase}${text.slice(0, ends)}`, channel);
      for (const line of this.#afterRow.splice(0)) this.#sink(line.text, line.channel);
      if (ends < text.length) this.#sink(text.slice(ends), channel);
    } else this.#sink(`${erase}${text}`, channel);
    this.#track(text);
    if (this.#column === 0) this.#drawBottom("");
  }

  /** The log's row after `text`: ended by a newline or a carriage return, else longer. */
  #track(text: string): void {
    const plain = text.replace(ESCAPES, "");
    const end = Math.max(plain.lastIndexOf("\n"), plain.lastIndexOf("\r"));
    this.#column = end < 0 ? this.#column + plain.length : plain.length - end - 1;
  }

  /** Bytes that take the bottom off the screen, the cursor left at the start of the row it began on. */
  #eraseBottom(): string {
    let up = this.#statusRows;
    const drawn = up > 0 || this.#inputShown;
    if (this.#inputShown && this.#input) up += this.#input.cursorRow();
    this.#statusRows = 0;
    this.#inputShown = false;
    if (!drawn) return "";
    return `${up > 0 ? `\x1b[${up}A` : ""}${ERASE_BELOW}`;
  }

  /** Writes `before`, then the status block and the input line (the log's row is fresh). */
  #drawBottom(before: string): void {
    let out = before;
    if (this.#status && !this.#asking) {
      // A line as wide as the terminal would wrap and throw the redraw's count of rows off.
      const width = Math.max(10, this.#o.columns() - 1);
      const style = this.#status.style ?? ((line: string) => line);
      // Teammates' names and tasks come from a model: shown, not obeyed, before the line is cut to the width.
      const lines = this.#status
        .render()
        .map(visibleControls)
        .map((line) => (line.length > width ? `${line.slice(0, width - 1)}…` : line));
      this.#statusRows = lines.length;
      out += lines.map((line) => `${style(line)}\n`).join("");
    }
    if (out !== "") this.#sink(out, "err");
    if (this.#input && !this.#asking) {
      this.#inputShown = true;
      this.#input.redraw();
    }
  }
}
