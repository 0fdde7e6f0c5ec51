/** Erase from the cursor to the end of the screen. */
const ERASE_BELOW = "\x1b[J";
const REDRAW_MS = 1000;

export interface StatusBlockOptions {
  /** The lines to show now (each clipped to the terminal's width). */
  render: () => string[];
  /** Terminal width; lines longer than this would wrap and break the in-place redraw. */
  columns: () => number;
  /** False while something else owns the cursor's line (an answer half printed): no drawing then. */
  mayDraw?: () => boolean;
  /** Wraps each line (a dim colour); identity when colour is off. */
  style?: (line: string) => string;
  redrawMs?: number;
}

/**
 * A block of status lines kept below a scrolling log on a terminal: every log
 * write erases the block, prints the text, and draws the block again, all in
 * one write, so the log scrolls above and the block stays at the bottom. A
 * timer redraws it (elapsed times move); `clear()` erases it for good, before
 * the final answer.
 */
export class StatusBlock {
  readonly #write: (text: string) => void;
  readonly #o: StatusBlockOptions;
  /** Lines on screen now (the cursor is at the start of the line below them). */
  #shown = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  #cleared = false;
  /** A question is on screen: the block stays off it (no redraw) until resume(). */
  #suspended = false;

  constructor(write: (text: string) => void, options: StatusBlockOptions) {
    this.#write = write;
    this.#o = options;
  }

  start(): void {
    if (this.#timer || this.#cleared) return;
    this.#timer = setInterval(() => this.refresh(), this.#o.redrawMs ?? REDRAW_MS);
    // Never the reason the process stays alive.
    this.#timer.unref?.();
  }

  /** Prints `text` (whole lines) above the block. */
  log(text: string): void {
    this.#write(`${this.#erase()}${text}${this.#draw()}`);
  }

  /** Draws the block again with fresh lines. */
  refresh(): void {
    if (this.#cleared || !this.#mayDraw()) return;
    this.#write(`${this.#erase()}${this.#draw()}`);
  }

  /** Takes the block off the screen until the next log or refresh (an answer is about to print). */
  hide(): void {
    const erase = this.#erase();
    if (erase !== "") this.#write(erase);
  }

  /**
   * Takes the block off the screen and keeps it off (the timer draws nothing,
   * a log line prints without it) until resume(): a question is about to be
   * asked below, and a redraw would erase it.
   */
  suspend(): void {
    this.#suspended = true;
    this.hide();
  }

  /** Draws the block again after suspend(). */
  resume(): void {
    if (!this.#suspended) return;
    this.#suspended = false;
    this.refresh();
  }

  /** Erases the block and stops drawing it. */
  clear(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    this.hide();
    this.#cleared = true;
  }

  #mayDraw(): boolean {
    return !this.#suspended && (this.#o.mayDraw?.() ?? true);
  }

  #erase(): string {
    if (this.#shown === 0) return "";
    const up = `\x1b[${this.#shown}A`;
    this.#shown = 0;
    return `${up}\r${ERASE_BELOW}`;
  }

  #draw(): string {
    if (this.#cleared || !this.#mayDraw()) return "";
    // The caller gives a real width (terminalColumns: never the 0 some terminals report).
    const width = Math.max(10, this.#o.columns() - 1);
    const lines = this.#o.render().map((line) => (line.length > width ? `${line.slice(0, width - 1)}…` : line));
    this.#shown = lines.length;
    const style = this.#o.style ?? ((line: string) => line);
    return lines.map((line) => `${style(line)}\n`).join("");
  }
}
