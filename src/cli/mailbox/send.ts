import { defineCommand } from "citty";
import { LEAD, assertAgentName } from "../../core/agent-name.ts";
import { systemClock } from "../../core/clock.ts";
import { UnknownAgentError } from "../../core/errors.ts";
import { uuidV7Source } from "../../core/ids.ts";
import { PLAIN_KINDS, type MessageKind, createMessage } from "../../core/message.ts";
import { globalArgs, jsonArg, sessionArg } from "../args.ts";
import { readContent } from "../content.ts";
import { findAdminSession, sendingSession } from "../context.ts";
import { configuredContentCap, openSessionMailbox } from "../session-mailbox.ts";
import { storeArg } from "../store/store-arg.ts";
import { writeJson, writeOut } from "../output.ts";

export const sendCommand = defineCommand({
  meta: { name: "send", description: "Put a message in an agent's mailbox (ready/) and print its id" },
  args: {
    to: { type: "string", required: true, valueHint: "name", description: "Recipient: lead, or an agent with a mailbox" },
    from: { type: "string", required: true, valueHint: "name", description: "Sender name" },
    content: { type: "string", valueHint: "text", description: "Message content, sent byte-for-byte" },
    "content-file": { type: "string", valueHint: "path|-", description: "Read the content from a file, or - for stdin" },
    kind: { type: "enum", options: [...PLAIN_KINDS], default: "message", description: "Message kind" },
    ...sessionArg,
    ...storeArg,
    ...jsonArg,
    ...globalArgs,
  },
  async run({ args }) {
    // Names first: nothing is read or written for a line that names a bad agent.
    const recipient = assertAgentName(args.to);
    const sender = assertAgentName(args.from);
    const cap = await configuredContentCap(args.workspace);
    const content = await readContent({ content: args.content, contentFile: args["content-file"] }, undefined, cap);
    // Sending creates no mailboxes: a typo in --to must not start a queue nobody reads.
    const session = findAdminSession(args);
    const unknown = () =>
      new UnknownAgentError(recipient, "only lead and agents that already have a mailbox can receive; run `agent mailbox list` to see them");
    if (recipient !== LEAD && !session) throw unknown();
    const mailbox = await openSessionMailbox(session ?? sendingSession(args), args, { configured: true });
    const message = createMessage(
      { sender, recipient, kind: args.kind as MessageKind, content },
      { clock: systemClock, ids: uuidV7Source },
    );
    try {
      if (recipient !== LEAD && !(await mailbox.store.agents()).includes(recipient)) throw unknown();
      await mailbox.store.send(message);
    } finally {
      await mailbox.close();
    }
    if (args.json) await writeJson(message);
    else await writeOut(`${message.id}\n`);
  },
});
