/** A stored attachment: its content-addressed id and its size in bytes. */
export interface Attachment {
  id: string;
  size: number;
}

/** Bytes read from an attachment: where they start and the attachment's whole size. */
export interface AttachmentBytes {
  size: number;
  bytes: Uint8Array;
}

/**
 * Where a session keeps what did not fit in a message (docs/mailbox.md,
 * "Attachments"): the files of its state dir, or rows of the PostgreSQL store.
 * An id names its content (sha256), so storing the same content twice — a
 * replayed turn's result — is one attachment.
 */
export interface AttachmentStore {
  /** Stores `bytes` and resolves only once they would survive a crash. */
  put(bytes: Uint8Array): Promise<Attachment>;
  /** Up to `length` bytes from byte `offset`; undefined when the session has no such attachment. */
  read(id: string, offset: number, length: number): Promise<AttachmentBytes | undefined>;
}

/** 32 hex digits: the first half of the content's sha256. */
export const ATTACHMENT_ID = /^[0-9a-f]{32}$/;

export function attachmentIdOf(bytes: Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex").slice(0, 32);
}
