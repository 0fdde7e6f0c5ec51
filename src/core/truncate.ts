/** Text cut to a size the model can take, and how much was left out. */
export interface CappedText {
  text: string;
  /** Characters left out after `text`. */
  omitted: number;
}

export function capText(text: string, maxChars: number): CappedText {
  if (text.length <= maxChars) return { text, omitted: 0 };
  return { text: text.slice(0, maxChars), omitted: text.length - maxChars };
}

/** The note the model sees where output was cut, so it never mistakes a prefix for the whole. */
export function truncationNote(omitted: number, hint?: string): string {
  if (omitted <= 0) return "";
  return `[… ${omitted} more characters truncated${hint ? `; ${hint}` : ""}]`;
}

/** `text`, followed on its own line by the truncation note when something was cut. */
export function withTruncationNote({ text, omitted }: CappedText, hint?: string): string {
  if (omitted <= 0) return text;
  return `${text}${text.endsWith("\n") || text === "" ? "" : "\n"}${truncationNote(omitted, hint)}`;
}

/**
 * Reads a byte stream as UTF-8, keeping the first `maxChars` characters and only
 * counting the rest, so a command printing gigabytes costs no memory.
 */
export async function readCapped(
  reader: { read(): Promise<{ done: boolean; value?: Uint8Array }> },
  maxChars: number,
): Promise<CappedText> {
  const decoder = new TextDecoder();
  let text = "";
  let omitted = 0;
  const take = (chunk: string) => {
    const room = maxChars - text.length;
    if (room > 0) text += chunk.slice(0, room);
    omitted += Math.max(0, chunk.length - Math.max(0, room));
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done || !value) break;
    take(decoder.decode(value, { stream: true }));
  }
  take(decoder.decode());
  return { text, omitted };
}
