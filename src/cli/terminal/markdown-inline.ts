/**
 * Markdown within one line — `code`, **bold**, *italic*, ~~struck~~ and
 * [links](url) — as styled spans, and those spans wrapped to a width measured
 * on the text a person sees (Bun.stringWidth), never on the markers.
 */

export const RESET = "\x1b[0m";
export const BOLD = "\x1b[1m";
export const DIM = "\x1b[2m";
export const ITALIC = "\x1b[3m";
export const UNDERLINE = "\x1b[4m";
export const STRIKE = "\x1b[9m";
export const CODE = "\x1b[36m";

/** A run of text in one style; `url` makes it an OSC 8 hyperlink. */
export interface Span {
  text: string;
  style: string;
  url?: string;
}

/** How a line is laid out: hyperlinks only where the terminal shows them (hyperlinks.ts). */
export interface InlineOptions {
  hyperlinks: boolean;
}

// One alternative per construct; the first that matches at a position wins.
// Underscores open only after a space or an opening bracket or quote: in paths
// and names (src/__init__.py, my_var) they are text.
const INLINE =
  /(`+)(.+?)\1(?!`)|\*\*(?=\S)(.+?)(?<=\S)\*\*|(?<![^\s(["'])__(?=\S)(.+?)(?<=\S)__(?!\w)|~~(?=\S)(.+?)(?<=\S)~~|\[([^\]\n]+)\]\(([^()\s]+)\)|<(https?:\/\/[^>\s]+)>|(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=\S)\*(?![\w*])|(?<![^\s(["'])_(?=[^\s_])([^_\n]+?)(?<=\S)_(?![\w_])/g;

/** The spans of one line of markdown; a lone marker stays as written. */
export function inlineSpans(text: string, options: InlineOptions, style = ""): Span[] {
  const spans: Span[] = [];
  let at = 0;
  for (const match of text.matchAll(INLINE)) {
    const index = match.index;
    if (index > at) spans.push({ text: text.slice(at, index), style });
    at = index + match[0].length;
    const [, , code, bold, boldUnder, struck, linkText, linkUrl, autolink, italic, italicUnder] = match;
    if (code !== undefined) spans.push({ text: code.trim() === "" ? code : code.trim(), style: style + CODE });
    else if (bold !== undefined || boldUnder !== undefined) spans.push(...inlineSpans((bold ?? boldUnder) as string, options, style + BOLD));
    else if (struck !== undefined) spans.push(...inlineSpans(struck, options, style + STRIKE));
    else if (italic !== undefined || italicUnder !== undefined) spans.push(...inlineSpans((italic ?? italicUnder) as string, options, style + ITALIC));
    else if (autolink !== undefined) spans.push(link(autolink, autolink, options, style)[0] as Span);
    else if (linkText !== undefined && linkUrl !== undefined) spans.push(...link(linkText, linkUrl, options, style));
  }
  if (at < text.length) spans.push({ text: text.slice(at), style });
  return spans.filter((span) => span.text !== "");
}

/** A link: underlined text carrying its URL where hyperlinks work, else the text then the URL in brackets. */
function link(text: string, url: string, options: InlineOptions, style: string): Span[] {
  if (options.hyperlinks) return inlineSpans(text, { hyperlinks: false }, style + UNDERLINE).map((span) => ({ ...span, url }));
  const shown = inlineSpans(text, options, style + UNDERLINE);
  if (text === url) return shown;
  return [...shown, { text: " ", style }, { text: `(${url})`, style: style + DIM }];
}

/** A span as escape codes. */
function paint(span: Span): string {
  const styled = span.style === "" ? span.text : `${span.style}${span.text}${RESET}`;
  return span.url === undefined ? styled : `\x1b]8;;${span.url}\x1b\\${styled}\x1b]8;;\x1b\\`;
}

/** One laid-out row: its escape codes and the columns it takes. */
export interface Row {
  text: string;
  width: number;
}

/** The plain text of spans (what a person reads). */
export function plain(spans: Span[]): string {
  return spans.map((span) => span.text).join("");
}

/**
 * Spans wrapped at spaces to rows of at most `width` columns; a word wider
 * than a row is cut where the row ends. Spaces where a row breaks are dropped.
 */
export function wrapSpans(spans: Span[], width: number): Row[] {
  const room = Math.max(1, width);
  const rows: Row[] = [];
  let row: Span[] = [];
  let used = 0;
  const close = () => {
    while (row.length > 0 && /^\s+$/.test((row[row.length - 1] as Span).text)) used -= Bun.stringWidth((row.pop() as Span).text);
    rows.push({ text: merged(row).map(paint).join(""), width: used });
    row = [];
    used = 0;
  };
  for (const word of words(spans)) {
    const space = word.every((span) => /^\s+$/.test(span.text));
    const wide = word.reduce((sum, span) => sum + Bun.stringWidth(span.text), 0);
    if (space) {
      if (used === 0 && rows.length > 0) continue;
      if (used + wide > room) {
        close();
        continue;
      }
      row.push(...word);
      used += wide;
      continue;
    }
    if (used + wide > room && used > 0) close();
    if (wide <= room) {
      row.push(...word);
      used += wide;
      continue;
    }
    // Wider than a whole row: cut it, character by character.
    for (const span of word) {
      let piece = "";
      for (const char of span.text) {
        const cw = Bun.stringWidth(char);
        if (used + Bun.stringWidth(piece) + cw > room) {
          if (piece !== "") row.push({ ...span, text: piece });
          used += Bun.stringWidth(piece);
          piece = "";
          if (used > 0) close();
        }
        piece += char;
      }
      if (piece !== "") {
        row.push({ ...span, text: piece });
        used += Bun.stringWidth(piece);
      }
    }
  }
  if (row.length > 0 || rows.length === 0) close();
  return rows;
}

/** Neighbours in the same style as one span: one escape code per run, not per word. */
function merged(spans: Span[]): Span[] {
  const out: Span[] = [];
  for (const span of spans) {
    const last = out[out.length - 1];
    if (last && last.style === span.style && last.url === span.url) out[out.length - 1] = { ...last, text: last.text + span.text };
    else out.push(span);
  }
  return out;
}

/** Spans regrouped into words and runs of spaces; a word may cross spans (`**bold**,`). */
function words(spans: Span[]): Span[][] {
  const out: Span[][] = [];
  let word: Span[] = [];
  let inSpace: boolean | undefined;
  for (const span of spans) {
    for (const part of span.text.split(/(\s+)/)) {
      if (part === "") continue;
      const space = /^\s+$/.test(part);
      if (inSpace !== undefined && space !== inSpace) {
        out.push(word);
        word = [];
      }
      inSpace = space;
      word.push({ ...span, text: space ? part.replace(/\t/g, "    ") : part });
    }
  }
  if (word.length > 0) out.push(word);
  return out;
}
