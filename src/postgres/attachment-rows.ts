import type { SQL } from "bun";
import { ATTACHMENT_ID, type Attachment, type AttachmentBytes, type AttachmentStore, attachmentIdOf } from "../attachments/attachment-store.ts";
import { stateError } from "./state-rows.ts";

/**
 * A session's attachments in PostgreSQL (`agent_attachments`): stored by one
 * process (a worker's teammate), read by any other (the Lead's). A put has
 * committed when it resolves; a range is cut out by the server, so a read never
 * fetches the whole content.
 */
export class PgAttachments implements AttachmentStore {
  constructor(
    readonly sql: SQL,
    readonly session: string,
  ) {}

  async put(bytes: Uint8Array): Promise<Attachment> {
    const id = attachmentIdOf(bytes);
    try {
      await this.sql`
        INSERT INTO agent_attachments (session, id, bytes) VALUES (${this.session}, ${id}, ${Buffer.from(bytes)})
        ON CONFLICT (session, id) DO NOTHING`;
    } catch (error) {
      throw stateError("storing an attachment", error, "the message that needed it was not sent");
    }
    return { id, size: bytes.length };
  }

  async read(id: string, offset: number, length: number): Promise<AttachmentBytes | undefined> {
    if (!ATTACHMENT_ID.test(id)) return undefined;
    try {
      const [row] = await this.sql`
        SELECT octet_length(bytes) AS size, substring(bytes FROM ${offset + 1} FOR ${length}) AS part
        FROM agent_attachments WHERE session = ${this.session} AND id = ${id}`;
      return row ? { size: Number(row.size), bytes: Buffer.from(row.part as Uint8Array) } : undefined;
    } catch (error) {
      throw stateError(`reading attachment ${id}`, error, "nothing was changed");
    }
  }
}
