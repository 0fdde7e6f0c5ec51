/** The one region where two texts differ, by lines: what a stale-write refusal and `agent changes --diff` show. */
export interface ChangedRegion {
  /** 1-based first changed line, in both texts (the lines before it are the same). */
  first: number;
  /** The changed lines of the old text and of the new. */
  removed: string[];
  added: string[];
}

/** Splits on newlines keeping no terminators; a final newline makes no extra empty line. */
function linesOf(text: string): string[] {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/**
 * The region between the longest common prefix and suffix of lines: one hunk
 * covering every change. Coarser than a real diff when a file changed in two
 * distant places, but linear, and enough to tell a model where to look again.
 */
export function changedRegion(before: string, after: string): ChangedRegion | undefined {
  const a = linesOf(before);
  const b = linesOf(after);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  if (start === endA && start === endB) return undefined;
  return { first: start + 1, removed: a.slice(start, endA), added: b.slice(start, endB) };
}

/** "lines 10–14" (or "line 10", or "after line 9" for a pure deletion) of the new text. */
export function regionLines(region: ChangedRegion): string {
  if (region.added.length === 0) return region.first === 1 ? "at the start" : `after line ${region.first - 1}`;
  const last = region.first + region.added.length - 1;
  return last === region.first ? `line ${region.first}` : `lines ${region.first}–${last}`;
}

/** A unified-diff-like hunk, each side cut to `maxLines` lines. */
export function formatRegion(region: ChangedRegion, maxLines = 12): string {
  const side = (mark: string, lines: string[]) => {
    const shown = lines.slice(0, maxLines).map((line) => `${mark}${line}`);
    if (lines.length > maxLines) shown.push(`${mark}… ${lines.length - maxLines} more lines`);
    return shown;
  };
  const header = `@@ -${region.first},${region.removed.length} +${region.first},${region.added.length} @@`;
  return [header, ...side("-", region.removed), ...side("+", region.added)].join("\n");
}
