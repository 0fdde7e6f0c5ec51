import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { ensureDir, fsyncDir, isErrno, writeFileAtomic } from "../storage/atomic-file.ts";
import { ATTACHMENT_ID, type Attachment, type AttachmentBytes, type AttachmentStore, attachmentIdOf } from "./attachment-store.ts";

/**
 * The file backend's attachments: `<state-dir>/attachments/<id>`, one file per
 * content, written as every state file is (temp, fsync, rename, fsync of the
 * directory). They go with the session dir (`agent sessions rm`, `prune`).
 */
export class FileAttachments implements AttachmentStore {
  readonly #stateDir: string;
  readonly #dir: string;

  constructor(stateDir: string) {
    this.#stateDir = stateDir;
    this.#dir = join(stateDir, "attachments");
  }

  async put(bytes: Uint8Array): Promise<Attachment> {
    const id = attachmentIdOf(bytes);
    const path = join(this.#dir, id);
    // Only ever renamed into place whole and synced: one of the right size is this content.
    if (statSync(path, { throwIfNoEntry: false })?.size === bytes.length) return { id, size: bytes.length };
    if (statSync(this.#dir, { throwIfNoEntry: false }) === undefined) {
      ensureDir(this.#dir);
      // The new directory's own entry, so the file's rename below is not lost with it.
      fsyncDir(this.#stateDir);
    }
    writeFileAtomic(path, bytes);
    return { id, size: bytes.length };
  }

  async read(id: string, offset: number, length: number): Promise<AttachmentBytes | undefined> {
    if (!ATTACHMENT_ID.test(id)) return undefined;
    let fd: number;
    try {
      fd = openSync(join(this.#dir, id), "r");
    } catch (error) {
      if (isErrno(error, "ENOENT")) return undefined;
      throw error;
    }
    try {
      const size = fstatSync(fd).size;
      const wanted = Math.max(0, Math.min(length, size - offset));
      const bytes = Buffer.allocUnsafe(wanted);
      let got = 0;
      while (got < wanted) {
        const n = readSync(fd, bytes, got, wanted - got, offset + got);
        if (n === 0) break;
        got += n;
      }
      return { size, bytes: bytes.subarray(0, got) };
    } finally {
      closeSync(fd);
    }
  }
}
