import { closeSync, openSync, readSync } from "node:fs";
import { UsageError } from "../core/errors.ts";

/** Input past the cap: refused as soon as it passes, with what was read up to then. */
export class InputTooLargeError extends UsageError {
  constructor(what: string, maxBytes: number) {
    super(
      `${what} passed ${maxBytes} bytes, the cap on a message (config mailbox.maxContentBytes); stopped reading it: ` +
        "send less, or put it in a file in the workspace and name that file instead",
    );
  }
}

/**
 * All of stdin, but never more than `maxBytes`: once it passes them, reading
 * stops and the input is refused, so `yes | agent mailbox send …` ends at once
 * instead of filling memory until the pipe closes.
 */
export async function readStdinUpTo(maxBytes: number, what = "stdin", stream: ReadableStream<Uint8Array> = Bun.stdin.stream()): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new InputTooLargeError(what, maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total);
}

/** A file read as readStdinUpTo reads stdin: a FIFO or a growing file too is refused once past `maxBytes`. */
export function readFileUpTo(path: string, maxBytes: number, what = path): Uint8Array {
  const fd = openSync(path, "r");
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(64 * 1024);
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      total += n;
      if (total > maxBytes) throw new InputTooLargeError(what, maxBytes);
      chunks.push(chunk.subarray(0, n));
    }
    return Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}
