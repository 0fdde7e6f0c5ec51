/**
 * What a terminal shows after `output`: a small emulator of the few controls
 * the agent writes (\r, \n, cursor up, erase below, erase line; colours are
 * dropped), so a test can check the final screen rather than the byte stream.
 */
export function finalScreen(output: string): string[] {
  const lines: string[] = [""];
  let row = 0;
  let col = 0;
  const put = (char: string) => {
    const line = lines[row] ?? "";
    lines[row] = line.padEnd(col, " ").slice(0, col) + char + line.slice(col + 1);
    col += 1;
  };
  for (let i = 0; i < output.length; i++) {
    const char = output[i] as string;
    if (char === "\x1b" && output[i + 1] === "[") {
      const match = /^\x1b\[([0-9;?]*)([A-Za-z])/.exec(output.slice(i));
      if (!match) continue;
      i += match[0].length - 1;
      const n = Number.parseInt(match[1] || "1", 10);
      if (match[2] === "A") row = Math.max(0, row - n);
      else if (match[2] === "J") lines.splice(row + 1), (lines[row] = (lines[row] ?? "").slice(0, col));
      else if (match[2] === "K") lines[row] = (lines[row] ?? "").slice(0, col);
      else if (match[2] === "G") col = n - 1;
      continue;
    }
    if (char === "\r") col = 0;
    else if (char === "\n") {
      row += 1;
      col = 0;
      if (lines[row] === undefined) lines[row] = "";
    } else if (char >= " ") put(char);
  }
  return lines.map((line) => line.trimEnd());
}
