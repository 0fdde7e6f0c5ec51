import type { AttachmentStore } from "./attachment-store.ts";

/** How much of an over-cap message travels in the message itself. */
export const PREVIEW_BYTES = 16 * 1024;

/** A byte that continues a UTF-8 character (10xxxxxx): no character starts there. */
function continues(bytes: Uint8Array, at: number): boolean {
  return at < bytes.length && (bytes[at]! & 0xc0) === 0x80;
}

/** `at`, moved back to the start of the character it falls in. */
function charStart(bytes: Uint8Array, at: number, floor = 0): number {
  while (at > floor && continues(bytes, at)) at -= 1;
  return at;
}

/** Content stored whole as an attachment, and its first part that travels in its place. */
export interface AttachedContent {
  id: string;
  /** The whole content's bytes. */
  size: number;
  /** The first part: whole characters, at most the bytes asked for. */
  preview: string;
  /** Bytes in the preview: the offset to read on from. */
  kept: number;
}

/**
 * Stores `content` as an attachment, durable before this returns (before
 * anything naming it is sent or saved, so a crash never leaves a reference to
 * nothing), and cuts its first `previewBytes` between characters.
 */
export async function attachWithPreview(content: string, previewBytes: number, store: AttachmentStore): Promise<AttachedContent> {
  const bytes = Buffer.from(content, "utf8");
  const { id, size } = await store.put(bytes);
  const kept = charStart(bytes, Math.min(previewBytes, bytes.length));
  return { id, size, preview: bytes.subarray(0, kept).toString("utf8"), kept };
}

/**
 * What an over-cap message carries instead of its content: its first part (at
 * most PREVIEW_BYTES, and half the cap, so the note fits under a small
 * configured cap) and a note naming the attachment and where to read on.
 */
export async function spillToAttachment(content: string, maxContentBytes: number, store: AttachmentStore): Promise<string> {
  const { id, size, preview, kept } = await attachWithPreview(content, Math.min(PREVIEW_BYTES, Math.floor(maxContentBytes / 2)), store);
  return (
    `${preview}\n\n[… ${size - kept} more bytes in attachment ${id} (${size} bytes in all, over the ` +
    `mailbox cap of ${maxContentBytes}); read them with read_attachment, id "${id}", offset ${kept}]`
  );
}

/** A range of an attachment as text: bytes [start, end) of size. */
export interface AttachmentRange {
  text: string;
  start: number;
  end: number;
  size: number;
}

/**
 * Bytes [offset, offset + limit) of an attachment, both ends moved back to the
 * start of the character they fall in: every range is whole characters, and
 * ranges read at consecutive offsets (or each from the last one's end) join into
 * the content byte for byte. `limit` must be at least 4 (one character).
 */
export async function readAttachmentRange(store: AttachmentStore, id: string, offset: number, limit: number): Promise<AttachmentRange | undefined> {
  // Three bytes before the offset to find its character's start, one after the end to see whether it cuts one.
  const base = Math.max(0, offset - 3);
  const read = await store.read(id, base, offset - base + limit + 1);
  if (!read) return undefined;
  const { size, bytes } = read;
  if (offset >= size) return { text: "", start: size, end: size, size };
  const start = charStart(bytes, offset - base);
  const wanted = Math.min(offset + limit, size) - base;
  const end = charStart(bytes, wanted, start);
  return { text: Buffer.from(bytes.subarray(start, end)).toString("utf8"), start: base + start, end: base + end, size };
}
