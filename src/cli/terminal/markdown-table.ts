import { BOLD, DIM, type InlineOptions, inlineSpans, plain, RESET, type Row, type Span, wrapSpans } from "./markdown-inline.ts";

/**
 * A markdown table laid out to the terminal's width: columns as wide as their
 * widest cell while that fits, else the widest ones narrowed and their cells
 * wrapped; when even narrow columns do not fit, each row is shown as
 * `header: value` lines. Only once the whole table has arrived: column widths
 * depend on every row.
 */

const SEPARATOR = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
/** Narrower than this a column is unreadable; the table becomes records. */
const NARROWEST = 4;
const GAP = " │ ";

/** A line that belongs to a table (it starts with a pipe). */
export function isTableLine(line: string): boolean {
  return line.trimStart().startsWith("|");
}

/** Whether `lines` are a table: a header row, then a separator row. */
export function isTable(lines: string[]): boolean {
  return lines.length >= 2 && SEPARATOR.test(lines[1] as string) && (lines[1] as string).includes("-");
}

/** The cells of one row: split at pipes that are not escaped or inside `code`. */
function cells(line: string): string[] {
  let text = line.trim();
  if (text.startsWith("|")) text = text.slice(1);
  if (text.endsWith("|") && !text.endsWith("\\|")) text = text.slice(0, -1);
  const out: string[] = [];
  let cell = "";
  let code = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    if (char === "\\" && text[i + 1] === "|") {
      cell += "|";
      i++;
    } else if (char === "`") {
      code = !code;
      cell += char;
    } else if (char === "|" && !code) {
      out.push(cell.trim());
      cell = "";
    } else cell += char;
  }
  out.push(cell.trim());
  return out;
}

type Align = "left" | "right" | "center";

function alignments(separator: string): Align[] {
  return cells(separator).map((cell) => (cell.startsWith(":") && cell.endsWith(":") ? "center" : cell.endsWith(":") ? "right" : "left"));
}

function pad(row: Row, width: number, align: Align): string {
  const room = Math.max(0, width - row.width);
  if (align === "right") return " ".repeat(room) + row.text;
  if (align === "center") return " ".repeat(Math.floor(room / 2)) + row.text + " ".repeat(room - Math.floor(room / 2));
  return row.text + " ".repeat(room);
}

/** The table's lines, none wider than `width` columns. */
export function renderTable(lines: string[], width: number, options: InlineOptions): string[] {
  const align = alignments(lines[1] as string);
  const rows = [lines[0] as string, ...lines.slice(2)].map((line) => cells(line).map((cell) => inlineSpans(cell, options)));
  const count = Math.max(...rows.map((row) => row.length));
  for (const row of rows) while (row.length < count) row.push([]);
  const natural = Array.from({ length: count }, (_, column) => Math.max(1, ...rows.map((row) => Bun.stringWidth(plain(row[column] as Span[])))));
  const room = width - GAP.length * (count - 1);
  if (room < NARROWEST * count) return records(rows, width);
  const widths = [...natural];
  // Narrow the widest column a column at a time until the table fits.
  while (widths.reduce((a, b) => a + b, 0) > room) {
    const widest = widths.indexOf(Math.max(...widths));
    widths[widest] = (widths[widest] as number) - 1;
  }
  const out: string[] = [];
  rows.forEach((row, index) => {
    const wrapped = row.map((cell, column) => wrapSpans(index === 0 ? restyle(cell, BOLD) : cell, widths[column] as number));
    const height = Math.max(...wrapped.map((cell) => cell.length));
    for (let line = 0; line < height; line++) {
      const parts = wrapped.map((cell, column) => pad(cell[line] ?? { text: "", width: 0 }, widths[column] as number, align[column] ?? "left"));
      out.push(parts.join(` ${DIM}│${RESET} `).trimEnd());
    }
    if (index === 0) out.push(`${DIM}${widths.map((w) => "─".repeat(w)).join("─┼─")}${RESET}`);
  });
  return out;
}

function restyle(spans: Span[], style: string): Span[] {
  return spans.map((span) => ({ ...span, style: style + span.style }));
}

/** Too many columns for the width: each row as `header: value` lines, rows apart by a blank line. */
function records(rows: Span[][][], width: number): string[] {
  const [header = [], ...body] = rows;
  const out: string[] = [];
  body.forEach((row, index) => {
    if (index > 0) out.push("");
    row.forEach((cell, column) => {
      const name = restyle(header[column] ?? [], BOLD);
      for (const line of wrapSpans([...name, { text: ": ", style: "" }, ...cell], width)) out.push(line.text);
    });
  });
  return out;
}
