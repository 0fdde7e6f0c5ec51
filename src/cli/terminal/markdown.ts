/**
 * The model's markdown on a terminal: headings bold and underlined, **bold**,
 * `inline code` and fenced code blocks (indented, in colour). Only for a
 * terminal with colour; piped output and NO_COLOR get the text as written.
 */

const BOLD = "\x1b[1m";
const UNDERLINE = "\x1b[4m";
const CODE = "\x1b[36m";
const DIM = "\x1b[2m";
const RESET = "\x1b[0m";

const FENCE = /^\s*(```|~~~)/;

/** Carried from line to line: inside a fenced code block or not. */
export interface MarkdownState {
  fence: string | undefined;
}

/** One whole line (without its newline), rendered; updates `state` at fences. */
export function renderLine(line: string, state: MarkdownState): string {
  const fence = FENCE.exec(line);
  if (state.fence !== undefined) {
    if (fence && fence[1] === state.fence) {
      state.fence = undefined;
      return `${DIM}${line.trim()}${RESET}`;
    }
    return `    ${CODE}${line}${RESET}`;
  }
  if (fence) {
    state.fence = fence[1];
    return `${DIM}${line.trim()}${RESET}`;
  }
  const heading = /^(#{1,6})\s+(.*)$/.exec(line);
  if (heading) return `${BOLD}${heading[1] === "#" ? UNDERLINE : ""}${inline(heading[2] as string)}${RESET}`;
  return inline(line);
}

/** `code` and **bold** within a line; a lone marker stays as written. */
function inline(text: string): string {
  return text
    .split(/(`[^`\n]+`)/)
    .map((part) => {
      if (part.length > 2 && part.startsWith("`") && part.endsWith("`")) return `${CODE}${part.slice(1, -1)}${RESET}`;
      return part.replace(/\*\*([^*\n]+)\*\*/g, `${BOLD}$1${RESET}`).replace(/__([^_\n]+)__/g, `${BOLD}$1${RESET}`);
    })
    .join("");
}

/** A whole text rendered line by line. */
export function renderMarkdown(text: string): string {
  const state: MarkdownState = { fence: undefined };
  return text
    .split("\n")
    .map((line) => renderLine(line, state))
    .join("\n");
}

/**
 * Renders text that streams in: a piece is shown as it comes (raw), and when
 * its line is complete the line is drawn again rendered — back to the line's
 * start and erased — as long as it fits on one row of the terminal; a longer
 * line (it wrapped) stays as written.
 */
export class MarkdownStream {
  #line = "";
  readonly #state: MarkdownState = { fence: undefined };

  constructor(
    private readonly write: (text: string) => void,
    private readonly columns: () => number,
  ) {}

  /** Text for the terminal: pieces of lines, newlines where the answer has them. */
  readonly push = (text: string): void => {
    let out = "";
    let rest = text;
    for (let at = rest.indexOf("\n"); at >= 0; at = rest.indexOf("\n")) {
      const piece = rest.slice(0, at);
      const line = this.#line + piece;
      const rendered = renderLine(line, this.#state);
      // The line's start is on this row only when it did not wrap.
      if (rendered !== line && line.length < this.columns()) out += `\r\x1b[K${rendered}\n`;
      else out += `${piece}\n`;
      this.#line = "";
      rest = rest.slice(at + 1);
    }
    this.#line += rest;
    out += rest;
    if (out !== "") this.write(out);
  };
}
