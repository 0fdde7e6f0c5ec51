import { join } from "node:path";
import { defineCommand } from "citty";
import { CorruptStateFileError, MessageNotFoundError } from "../../core/errors.ts";
import { assertMessageId } from "../../core/message-format.ts";
import type { FoundMessage } from "../../mailbox/store.ts";
import { globalArgs, jsonArg, sessionArg } from "../args.ts";
import { requireAdminSession } from "../context.ts";
import { openSessionMailbox } from "../session-mailbox.ts";
import { storeArg } from "../store/store-arg.ts";
import { formatTable, writeJson, writeOut } from "../output.ts";

export const showCommand = defineCommand({
  meta: { name: "show", description: "One message, whole: its fields, state, agent and content" },
  args: {
    id: { type: "positional", required: true, valueHint: "id", description: "Message id (a canonical lowercase UUID)" },
    ...sessionArg,
    ...storeArg,
    ...jsonArg,
    ...globalArgs,
  },
  async run({ args }) {
    const id = assertMessageId(args.id);
    const session = requireAdminSession(args);
    const stateDir = session.dir;
    const mailbox = await openSessionMailbox(session, args);
    let found: FoundMessage | null;
    try {
      found = (await mailbox.store.agents()).length === 0 ? null : await mailbox.store.find(id);
    } finally {
      await mailbox.close();
    }
    if (!found) throw new MessageNotFoundError(id, `in session ${session.meta.id}`);
    // Quarantine is where unreadable files are meant to be, so they are shown as
    // evidence; anywhere else an unreadable file is corrupt state, and says so.
    if (!found.message && found.state !== "quarantine") {
      const path = join(stateDir, "mailboxes", found.agent, found.state, found.file);
      throw new CorruptStateFileError(path, found.reason ?? "not a valid message");
    }
    if (args.json) await writeJson(foundJson(found));
    else await writeOut(foundText(found));
  },
});

function foundJson(found: FoundMessage) {
  const { agent, state, file, message, raw, reason } = found;
  return { agent, state, file, message, ...(message ? {} : { raw }), ...(reason === undefined ? {} : { reason }) };
}

function foundText(found: FoundMessage): string {
  const { message } = found;
  const fields: [string, string][] = [
    ["agent", found.agent],
    ["state", found.state],
    ["file", found.file],
  ];
  if (found.reason !== undefined) fields.push(["reason", found.reason]);
  if (message) {
    fields.push(
      ["id", message.id],
      ["kind", message.kind],
      ["sender", message.sender],
      ["recipient", message.recipient],
      ["createdAtUtc", message.createdAtUtc],
    );
  }
  const body = message ? message.content : (found.raw ?? "");
  // The content is printed verbatim after a blank line; a final newline is added
  // only so the shell prompt does not run into it (`--json` is byte-exact).
  return `${formatTable(fields.map(([k, v]) => [`${k}:`, v]))}\n${body}${body.endsWith("\n") ? "" : "\n"}`;
}
