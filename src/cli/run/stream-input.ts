import { UsageError } from "../../core/errors.ts";

// `--input-format stream-json`: user messages as JSON lines on stdin, the shape
// Claude Code's SDK writes: {"type":"user","message":{"role":"user","content":"…" | [blocks]}}.

/** The text of one input line; a usage error naming the line when it is not a user message. */
export function userMessageText(line: string, lineNumber: number): string {
  const where = `stdin line ${lineNumber}`;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw new UsageError(`--input-format stream-json: ${where} is not JSON (${(error as Error).message}); send one {"type":"user","message":{...}} object per line`);
  }
  return messageText(value, lineNumber);
}

/** The text of one input line's JSON value; a usage error naming the line when it is not a user message. */
export function messageText(value: unknown, lineNumber: number): string {
  const where = `stdin line ${lineNumber}`;
  const record = value as { type?: unknown; message?: { role?: unknown; content?: unknown } } | null;
  if (typeof record !== "object" || record === null || record.type !== "user" || typeof record.message !== "object" || record.message === null) {
    throw new UsageError(`--input-format stream-json: ${where} is not a user message; send {"type":"user","message":{"role":"user","content":"..."}}`);
  }
  const content = record.message.content;
  const text =
    typeof content === "string"
      ? content
      : Array.isArray(content)
        ? content
            .filter((block): block is { type: "text"; text: string } => typeof block === "object" && block !== null && block.type === "text" && typeof block.text === "string")
            .map((block) => block.text)
            .join("\n")
        : undefined;
  if (text === undefined || text.trim() === "") {
    throw new UsageError(`--input-format stream-json: ${where} has no text: give message.content as a string or a list of {"type":"text","text":"..."} blocks`);
  }
  return text;
}

/**
 * Each user message of `lines` as it arrives, until EOF: a turn starts as soon
 * as its line is complete, so a driver may wait for the result before writing
 * the next one. Blank lines are skipped.
 */
export async function* userMessages(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  for await (const { line, number } of inputLines(chunks)) yield userMessageText(line, number);
}

/** Each non-blank line of stdin as it is complete, numbered from 1; a usage error when it is not UTF-8. */
export async function* inputLines(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<{ line: string; number: number }> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let buffered = "";
  let lineNumber = 0;
  const decode = (chunk?: Uint8Array) => {
    try {
      return chunk === undefined ? decoder.decode() : decoder.decode(chunk, { stream: true });
    } catch {
      throw new UsageError("--input-format stream-json: stdin is not valid UTF-8 text");
    }
  };
  for await (const chunk of chunks) {
    buffered += decode(chunk);
    let newline: number;
    while ((newline = buffered.indexOf("\n")) !== -1) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      lineNumber += 1;
      if (line.trim() !== "") yield { line, number: lineNumber };
    }
  }
  buffered += decode();
  if (buffered.trim() !== "") yield { line: buffered, number: lineNumber + 1 };
}
