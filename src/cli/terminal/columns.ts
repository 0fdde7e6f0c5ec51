/** What a terminal that reports no width (0 or unset, as some PTYs and serial lines do) is taken to be. */
export const FALLBACK_COLUMNS = 80;

/**
 * The width to lay lines out in: the terminal's own when it reports one, else
 * 80. A reported 0 must not become the width: every line would be cut to
 * almost nothing.
 */
export function terminalColumns(stream: { columns?: number }): number {
  const columns = stream.columns;
  return columns !== undefined && Number.isFinite(columns) && columns > 0 ? columns : FALLBACK_COLUMNS;
}
