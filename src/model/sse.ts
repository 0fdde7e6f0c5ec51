/**
 * Server-sent events from a response body, as the chat-completions stream sends
 * them: `data:` lines, an empty line ending each event. Written here rather than
 * taken from the SDK so that every way a stream can end badly — a reset, a
 * close before the last event, silence — reaches the retry loop as one error
 * we classify ourselves.
 */
export interface SseEvent {
  /** The `event:` field; "message" when absent. */
  event: string;
  data: string;
}

/** Thrown when no bytes arrive for the idle limit: the connection is open but the stream is dead. */
export class StreamIdleError extends Error {}

export interface SseReadOptions {
  /** Longest wait for the next bytes. */
  idleMs: number;
  /** The first bytes of the body, decoded: kept for the error of a body that is not a stream. */
  onPrefix?: (text: string) => void;
}

const PREFIX_BYTES = 200;

export async function* readSse(body: ReadableStream<Uint8Array>, options: SseReadOptions): AsyncGenerator<SseEvent> {
  const reader: Reader = body.getReader() as Reader;
  const decoder = new TextDecoder();
  let buffer = "";
  let prefix: Uint8Array = new Uint8Array(0);
  let event = "message";
  let data: string[] = [];
  /** One line of the stream: the event it ends (a blank line after data), or none. */
  const line = (text: string): SseEvent | undefined => {
    if (text === "") {
      const done = data.length > 0 ? { event, data: data.join("\n") } : undefined;
      event = "message";
      data = [];
      return done;
    }
    if (text.startsWith(":")) return undefined; // a comment: keep-alive
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    const value = colon < 0 ? "" : text.slice(colon + 1).replace(/^ /, "");
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
    else if (field === "error") {
      // Not SSE, but what llama.cpp's server sends when a stream fails: `error: {…}`.
      event = "error";
      data.push(value);
    }
    return undefined;
  };
  try {
    for (;;) {
      const { done, value } = await readWithin(reader, options.idleMs);
      if (done) break;
      if (prefix.length < PREFIX_BYTES && options.onPrefix) {
        prefix = concat(prefix, value.subarray(0, PREFIX_BYTES - prefix.length));
        options.onPrefix(new TextDecoder().decode(prefix));
      }
      buffer += decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
        // A CR that ends what was read may be half a CRLF: the next read says.
        if (newline === buffer.length - 1 && buffer[newline] === "\r") break;
        const ended = line(buffer.slice(0, newline));
        buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
        if (ended) yield ended;
      }
    }
    // The rest: a last line without its end, or one ended by a lone CR; then the
    // last event, even without its blank line (the server closed right after it).
    buffer += decoder.decode();
    for (const rest of buffer.split(/\r\n|\r|\n/)) {
      const ended = line(rest);
      if (ended) yield ended;
    }
    if (data.length > 0) yield { event, data: data.join("\n") };
  } finally {
    // Also after an idle timeout, with a read still pending: cancelling ends it.
    reader.cancel().catch(() => {});
  }
}

interface Reader {
  read(): Promise<{ done: true; value?: undefined } | { done: false; value: Uint8Array }>;
  cancel(): Promise<void>;
}

async function readWithin(reader: Reader, idleMs: number): Promise<Awaited<ReturnType<Reader["read"]>>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const idle = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StreamIdleError(`no data for ${idleMs} ms`)), idleMs);
  });
  try {
    return await Promise.race([reader.read(), idle]);
  } finally {
    clearTimeout(timer);
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
