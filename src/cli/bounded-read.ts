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
  return readRest(reader, await reader.read(), maxBytes, what);
}

/**
 * As readStdinUpTo, unless the writer stays silent: undefined when neither data
 * nor EOF arrives within `quietMs` (a parent that holds stdin open and writes
 * nothing), and stdin is then left alone. Once a first byte arrives it is read to EOF.
 */
export async function readStdinUnlessSilent(
  maxBytes: number,
  what: string,
  quietMs: number,
  stream: ReadableStream<Uint8Array> = Bun.stdin.stream(),
): Promise<Uint8Array | undefined> {
  const reader = stream.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const silence = new Promise<"silent">((resolve) => {
    timer = setTimeout(() => resolve("silent"), quietMs);
  });
  const first = await Promise.race([reader.read(), silence]);
  clearTimeout(timer);
  if (first === "silent") {
    // Nothing more is read; the pending read must not keep the pipe in use.
    void reader.cancel().catch(() => {});
    return undefined;
  }
  return readRest(reader, first, maxBytes, what);
}

type Chunk = { done: true; value?: Uint8Array } | { done: false; value: Uint8Array };
interface ChunkReader {
  read(): Promise<Chunk>;
  cancel(): Promise<void>;
}

async function readRest(
  reader: ChunkReader,
  first: Chunk,
  maxBytes: number,
  what: string,
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (let next = first; !next.done; next = await reader.read()) {
    total += next.value.length;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new InputTooLargeError(what, maxBytes);
    }
    chunks.push(next.value);
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
