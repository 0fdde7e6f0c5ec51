import { Terminal } from "@xterm/headless";
import { deadline } from "../support/deadline.ts";

export interface ScreenSize {
  cols: number;
  rows: number;
  /** What the PTY tells the program its width is, when not `cols` (0: a terminal that reports none). */
  reportedCols?: number;
}

/**
 * A command on a real pseudo-terminal (Bun's PTY) whose output is fed into a
 * headless xterm.js of the same size, so a test reads the screen a person would
 * see (wrapping, scrolling, erased lines gone), not the byte stream.
 * `waitFor(text)` polls the visible rows; `type` writes keys. The child goes
 * into `terminals`, killed after the test (terminalsKilledAfterEach).
 */
export function onXterm(terminals: Bun.Subprocess[], command: string[], env: Record<string, string>, size: ScreenSize, timeoutMs = 15_000) {
  const xterm = new Terminal({ cols: size.cols, rows: size.rows, allowProposedApi: true, scrollback: 1000 });
  let pending = 0;
  let bytes = "";
  const decoder = new TextDecoder();
  // A terminal reporting another width than it shows: set inside, before the program starts.
  const reported = size.reportedCols;
  const argv = reported === undefined ? command : ["sh", "-c", `stty cols ${reported} && exec "$@"`, "sh", ...command];
  const child = Bun.spawn(argv, {
    // The terminal it emulates (under TERM=dumb, as some CI systems set it, there is no status block).
    env: { ...process.env, TERM: "xterm-256color", NO_COLOR: "1", ...env },
    terminal: {
      cols: size.cols,
      rows: size.rows,
      data: (_terminal, data) => {
        bytes += decoder.decode(data, { stream: true });
        pending += 1;
        xterm.write(data, () => (pending -= 1));
      },
    },
  });
  terminals.push(child);
  /** The visible rows now, right-trimmed. */
  const rows = (): string[] => {
    const buffer = xterm.buffer.active;
    return Array.from({ length: xterm.rows }, (_, i) => buffer.getLine(buffer.viewportY + i)?.translateToString(true) ?? "");
  };
  /** Every row written so far, scrolled-off ones included. */
  const all = (): string[] => {
    const buffer = xterm.buffer.active;
    return Array.from({ length: buffer.length }, (_, i) => buffer.getLine(i)?.translateToString(true) ?? "");
  };
  const settled = async () => {
    while (pending > 0) await Bun.sleep(5);
  };
  const waitFor = async (wanted: string | RegExp, what: () => string[] = rows) => {
    const end = Date.now() + deadline(timeoutMs);
    for (;;) {
      await settled();
      const screen = what().join("\n");
      if (typeof wanted === "string" ? screen.includes(wanted) : wanted.test(screen)) return screen;
      if (Date.now() > end) throw new Error(`${String(wanted)} never showed; the screen:\n${screen}\nbytes: ${JSON.stringify(bytes.slice(-3000))}`);
      await Bun.sleep(20);
    }
  };
  const type = (keys: string) => child.terminal!.write(keys);
  return { child, rows, all, waitFor, settled, type, bytes: () => bytes };
}
