import { Terminal } from "@xterm/headless";

/**
 * A headless xterm.js a unit test writes into, as a terminal in the usual
 * mode (a newline returns to the start of the row, as a tty's ONLCR does): the
 * rows a person would see after the writes, wrapping and erasing included.
 */
export class XtermScreen {
  readonly #xterm: Terminal;
  #pending: Promise<void> = Promise.resolve();

  constructor(cols: number, rows = 24) {
    this.#xterm = new Terminal({ cols, rows, allowProposedApi: true, scrollback: 500, convertEol: true });
  }

  /** Writes `text` (in order with earlier writes). */
  readonly write = (text: string): void => {
    const xterm = this.#xterm;
    this.#pending = this.#pending.then(() => new Promise<void>((resolve) => xterm.write(text, resolve)));
  };

  /** Every row written (scrolled-off ones included), right-trimmed, without the empty rows at the end. */
  async rows(): Promise<string[]> {
    await this.#pending;
    const buffer = this.#xterm.buffer.active;
    const rows = Array.from({ length: buffer.length }, (_, i) => (buffer.getLine(i)?.translateToString(true) ?? "").trimEnd());
    while (rows.length > 0 && rows[rows.length - 1] === "") rows.pop();
    return rows;
  }

  /** The cursor: row (from the top of everything written) and column. */
  async cursor(): Promise<{ row: number; col: number }> {
    await this.#pending;
    const buffer = this.#xterm.buffer.active;
    return { row: buffer.baseY + buffer.cursorY, col: buffer.cursorX };
  }
}
