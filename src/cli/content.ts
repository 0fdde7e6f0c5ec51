import { UsageError } from "../core/errors.ts";
import { DEFAULT_MAX_CONTENT_BYTES } from "../core/message-format.ts";
import { InputTooLargeError, readFileUpTo, readStdinUpTo } from "./bounded-read.ts";

/** Where a message's content comes from: `--content TEXT` or `--content-file PATH|-`. */
export interface ContentSource {
  content?: string;
  contentFile?: string;
}

// fatal: invalid bytes are refused, not replaced with U+FFFD. ignoreBOM: a leading
// byte-order mark is content too — the message is delivered byte-for-byte.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Reads the content exactly as given: never trimmed, `-` reads all of stdin.
 * A file or stdin is read no further than `maxBytes` (the mailbox's cap): past
 * it, the content is refused at once.
 */
export async function readContent(
  source: ContentSource,
  readStdin: (maxBytes: number) => Promise<Uint8Array> = (maxBytes) => readStdinUpTo(maxBytes, "the content on stdin"),
  maxBytes: number = DEFAULT_MAX_CONTENT_BYTES,
): Promise<string> {
  const { content, contentFile } = source;
  if ((content === undefined) === (contentFile === undefined)) {
    throw new UsageError("give the message content with exactly one of --content TEXT or --content-file PATH (- for stdin)");
  }
  const text = content ?? decode(await readBytes(contentFile as string, readStdin, maxBytes), contentFile as string);
  if (text.length === 0) {
    const from = content !== undefined ? "--content" : contentFile === "-" ? "stdin" : contentFile;
    throw new UsageError(`the message content from ${from} is empty; a message needs at least one character`);
  }
  return text;
}

async function readBytes(path: string, readStdin: (maxBytes: number) => Promise<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  if (path === "-") return readStdin(maxBytes);
  if (path.length === 0) throw new UsageError("--content-file needs a path, or - for stdin");
  try {
    return readFileUpTo(path, maxBytes, `--content-file ${path}`);
  } catch (error) {
    if (error instanceof InputTooLargeError) throw error;
    const code = (error as { code?: string }).code;
    const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : (error as Error).message;
    throw new UsageError(`cannot read --content-file ${path}: ${why}`);
  }
}

function decode(bytes: Uint8Array, path: string): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new UsageError(`--content-file ${path === "-" ? "- (stdin)" : path} is not valid UTF-8 text; messages carry text only`);
  }
}
