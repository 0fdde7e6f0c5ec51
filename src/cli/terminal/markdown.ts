import { visibleControls } from "../../security/terminal-text.ts";
import { FALLBACK_COLUMNS } from "./columns.ts";
import { BOLD, CODE, DIM, type InlineOptions, inlineSpans, RESET, type Span, UNDERLINE, wrapSpans } from "./markdown-inline.ts";
import { isTable, isTableLine, renderTable } from "./markdown-table.ts";

/**
 * The model's markdown on a terminal, laid out to its width: headings,
 * paragraphs and list items wrapped on the text as shown (markers removed
 * first), lists nested and numbered, block quotes behind a `│ ` bar (never
 * `>`: that looks like the session's prompt), tables aligned, links as text and
 * URL, fenced code under its language. Only for a terminal with colour; piped
 * output and NO_COLOR get the text as written.
 *
 * Line by line, so it can follow a streaming answer: every line is drawn as
 * soon as it is complete, except a table's, held until the table ends (its
 * column widths depend on every row).
 */

export interface MarkdownOptions {
  /** The terminal's width now; 0 or less is taken as 80. */
  columns: () => number;
  /** OSC 8 hyperlinks for links (terminalHyperlinks); else `text (url)`. */
  hyperlinks?: boolean;
}

const FENCE = /^\s*(`{3,}|~{3,})\s*([^`\s]*)/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)(\s+#+)?\s*$/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TASK = /^\[([ xX])\]\s+(.*)$/;
const BULLETS = ["•", "◦", "▪"];

/** Lays out whole lines of markdown; carries fences and held table rows from line to line. */
export class MarkdownBlocks {
  #fence: string | undefined;
  #table: string[] = [];

  constructor(private readonly options: MarkdownOptions) {}

  /** The rows one more complete line (without its newline) draws: none while a table is held. */
  line(whole: string): string[] {
    // A model writing \r\n: the \r would send the cursor back over the row.
    const line = whole.endsWith("\r") ? whole.slice(0, -1) : whole;
    const width = this.#width();
    if (this.#fence !== undefined) {
      const fence = FENCE.exec(line);
      if (fence && (fence[1] as string).startsWith(this.#fence) && line.trim() === fence[1]) {
        this.#fence = undefined;
        return [`${DIM}${"─".repeat(Math.min(width, 3))}${RESET}`];
      }
      return wrapSpans([{ text: line.replace(/\t/g, "    "), style: CODE }], Math.max(1, width - 2)).map((row) => `  ${row.text}`);
    }
    if (isTableLine(line)) {
      this.#table.push(line);
      return [];
    }
    const held = this.flush();
    return [...held, ...this.#block(line, width)];
  }

  /** The held table's rows (at the end of the answer, or before a line that is not part of it). */
  flush(): string[] {
    const lines = this.#table;
    if (lines.length === 0) return [];
    this.#table = [];
    const width = this.#width();
    if (isTable(lines)) return renderTable(lines, width, this.#inline());
    return lines.flatMap((line) => this.#block(line, width));
  }

  #width(): number {
    const columns = this.options.columns();
    return Number.isFinite(columns) && columns > 0 ? Math.floor(columns) : FALLBACK_COLUMNS;
  }

  #inline(): InlineOptions {
    return { hyperlinks: this.options.hyperlinks === true };
  }

  #block(line: string, width: number): string[] {
    if (line.trim() === "") return [""];
    const fence = FENCE.exec(line);
    if (fence) {
      this.#fence = (fence[1] as string).slice(0, 3);
      const language = fence[2] ?? "";
      return [`${DIM}${"─".repeat(Math.min(width, 3))}${language === "" ? "" : ` ${language}`}${RESET}`];
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const style = BOLD + (heading[1] === "#" ? UNDERLINE : "");
      return this.#wrap(inlineSpans(heading[2] as string, this.#inline(), style), width, "", "");
    }
    if (RULE.test(line)) return [`${DIM}${"─".repeat(width)}${RESET}`];
    const quote = QUOTE.exec(line);
    if (quote) {
      const bar = `${DIM}│${RESET} `;
      if (width < 4) return this.#block(quote[1] as string, width);
      return this.#block(quote[1] as string, width - 2).map((row) => (row === "" ? `${DIM}│${RESET}` : bar + row));
    }
    const item = ITEM.exec(line);
    if (item) {
      const indent = Math.min(Math.floor(columnsOf(item[1] as string) / 2) * 2, Math.floor(width / 2));
      const depth = indent / 2;
      const marker = /\d/.test(item[2] as string) ? (item[2] as string) : (BULLETS[depth % BULLETS.length] as string);
      let text = item[3] as string;
      const task = TASK.exec(text);
      let box = "";
      if (task) {
        box = task[1] === " " ? "☐ " : "☑ ";
        text = task[2] as string;
      }
      const first = `${" ".repeat(indent)}${marker} ${box}`;
      return this.#wrap(inlineSpans(text, this.#inline()), width, first, " ".repeat(Bun.stringWidth(first)));
    }
    // A paragraph line; its indentation (a list item's continuation) kept on every row.
    const indent = " ".repeat(Math.min(columnsOf(/^\s*/.exec(line)?.[0] ?? ""), Math.floor(width / 2)));
    return this.#wrap(inlineSpans(line.trim(), this.#inline()), width, indent, indent);
  }

  /** Wrapped rows, `first` before the first and `rest` before the others (same width). */
  #wrap(spans: Span[], width: number, first: string, rest: string): string[] {
    const room = width - Bun.stringWidth(first);
    if (room < 1) return wrapSpans(spans, width).map((row) => row.text);
    return wrapSpans(spans, room).map((row, index) => (index === 0 ? first : rest) + row.text);
  }
}

function columnsOf(space: string): number {
  return space.replace(/\t/g, "    ").length;
}

/** A whole text laid out (an answer printed at once). */
export function renderMarkdown(text: string, options: MarkdownOptions): string {
  const blocks = new MarkdownBlocks(options);
  // The renderer's bytes are its own: the text's control characters are shown, never passed on.
  const lines = visibleControls(text).split("\n");
  const last = lines.pop() as string;
  const out = lines.flatMap((line) => [...blocks.line(line)]);
  // The text's last line has no newline: laid out, and the held table with it.
  const tail = last === "" ? blocks.flush() : [...blocks.line(last), ...blocks.flush()];
  return [...out, ...tail].map((row) => `${row}\n`).join("").slice(0, last === "" ? undefined : -1);
}

/**
 * Markdown that streams in: a piece is shown as it comes (as written), and
 * when its line is complete, what was shown of it is erased — back up the rows
 * it wrapped onto — and the line drawn laid out. `end()` at the end of a reply
 * draws a held table and a last line without a newline.
 */
export class MarkdownStream {
  /** The incomplete line, already on screen as written. */
  #line = "";
  readonly #blocks: MarkdownBlocks;

  constructor(
    private readonly write: (text: string) => void,
    private readonly options: MarkdownOptions,
  ) {
    this.#blocks = new MarkdownBlocks(options);
  }

  /** Text for the terminal: pieces of lines, newlines where the answer has them. */
  readonly push = (text: string): void => {
    let out = "";
    let rest = visibleControls(text);
    for (let at = rest.indexOf("\n"); at >= 0; at = rest.indexOf("\n")) {
      out += this.#erase();
      const line = this.#line + rest.slice(0, at);
      this.#line = "";
      out += this.#blocks
        .line(line)
        .map((row) => `${row}\n`)
        .join("");
      rest = rest.slice(at + 1);
    }
    this.#line += rest;
    out += rest;
    if (out !== "") this.write(out);
  };

  /** The reply is over: its last line (no newline came) and a held table are drawn. */
  readonly end = (): void => {
    let out = this.#erase();
    const rows = this.#line === "" ? this.#blocks.flush() : [...this.#blocks.line(this.#line), ...this.#blocks.flush()];
    this.#line = "";
    out += rows.map((row) => `${row}\n`).join("");
    if (out !== "") this.write(out);
  };

  /** Back to the start of the shown incomplete line, erasing it (and everything below). */
  #erase(): string {
    if (this.#line === "") return "";
    const columns = this.options.columns();
    const up = rowsDown(this.#line, Number.isFinite(columns) && columns > 0 ? Math.floor(columns) : FALLBACK_COLUMNS);
    return `\r${up > 0 ? `\x1b[${up}A` : ""}\x1b[J`;
  }
}

/**
 * How many rows below its first the cursor is after a terminal `width` wide
 * printed `text` from the start of a row: a character that does not fit wraps
 * (a row filled to its last column leaves the cursor on it until the next
 * one), a tab moves to the next stop of 8 without wrapping.
 */
export function rowsDown(text: string, width: number): number {
  let row = 0;
  let column = 0;
  for (const char of text) {
    if (char === "\t") {
      column = Math.min(width - 1, (Math.floor(column / 8) + 1) * 8);
      continue;
    }
    const wide = Bun.stringWidth(char);
    if (wide === 0) continue;
    if (column + wide > width) {
      row += 1;
      column = 0;
    }
    column += wide;
  }
  return row;
}
