import { z } from "zod";
import { ATTACHMENT_ID, type AttachmentStore } from "../attachments/attachment-store.ts";
import { readAttachmentRange } from "../attachments/attachment-text.ts";
import { defineTool } from "../core/tool.ts";
import { lazySchema } from "../core/lazy-schema.ts";

/** Bytes a call returns by default and at most: under the size at which a tool result is moved out of the history. */
export const ATTACHMENT_READ_BYTES = 32 * 1024;

export const ReadAttachmentInput = lazySchema(() =>
  z.strictObject({
    id: z.string().regex(ATTACHMENT_ID, "an attachment id is 32 hex digits, as its note names it").describe("The attachment's id, as the note in the message or tool result names it."),
    offset: z.number().int().min(0).optional().describe("First byte to return; default 0. The note says where its first part ended."),
    limit: z.number().int().min(1024).max(ATTACHMENT_READ_BYTES).optional().describe(`How many bytes to return; default and at most ${ATTACHMENT_READ_BYTES}.`),
  }),
);
export type ReadAttachmentInput = z.infer<typeof ReadAttachmentInput>;

/**
 * Reads on in a message too large for the mailbox (a teammate's long answer),
 * or in a tool result compaction saved: the message or the history kept its
 * first part and this attachment's id. The first line
 * of the result says which bytes follow and where to continue; the text after
 * it is the content exactly, cut only between characters.
 */
export function readAttachmentTool(attachments: AttachmentStore) {
  return defineTool({
    name: "read_attachment",
    description:
      "Read the rest of a message that was too large for the mailbox, or of a tool result too large to keep in your history: " +
      `its note names an attachment id and the offset its first part ended at. Returns up to ${ATTACHMENT_READ_BYTES} bytes from \`offset\`, after one line saying which ` +
      "bytes they are and the offset to continue from.",
    input: ReadAttachmentInput,
    effect: "read",
    subject: (input) => input.id,
    async run(input) {
      const offset = input.offset ?? 0;
      const range = await readAttachmentRange(attachments, input.id, offset, input.limit ?? ATTACHMENT_READ_BYTES);
      if (!range) throw new Error(`no attachment ${input.id} in this session; use the id a message names`);
      const { text, start, end, size } = range;
      if (offset > size) throw new Error(`offset ${offset} is past the end of attachment ${input.id}, which has ${size} bytes`);
      const next = end < size ? `continue with offset ${end}` : "the end";
      return { content: `[attachment ${input.id}: bytes ${start}-${end} of ${size}; ${next}]\n${text}` };
    },
  });
}
