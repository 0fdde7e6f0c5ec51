import { defineCommand } from "citty";
import { USER, assertTeammateName } from "../../core/agent-name.ts";
import { systemClock } from "../../core/clock.ts";
import { UnknownAgentError, UsageError } from "../../core/errors.ts";
import { uuidV7Source } from "../../core/ids.ts";
import { type MailboxMessage, createMessage } from "../../core/message.ts";
import { TeammateUnavailableError } from "../../team/teammate-runtime.ts";
import { globalArgs, jsonArg, sessionArg } from "../args.ts";
import { readContent } from "../content.ts";
import { configuredContentCap } from "../session-mailbox.ts";
import { requireAdminSession } from "../context.ts";
import { writeJson, writeOut } from "../output.ts";
import { openAdminStores } from "../store/session-stores.ts";
import { storeArg } from "../store/store-arg.ts";

export const teamSendCommand = defineCommand({
  meta: { name: "send", description: `Message a teammate as the operator (sender "${USER}") and print the message id` },
  args: {
    name: { type: "positional", required: true, valueHint: "name", description: "The teammate" },
    text: { type: "positional", required: false, valueHint: "text", description: "The message, sent byte-for-byte" },
    wait: { type: "boolean", description: "Wait for the teammate's answer to this message and print it (its content; the whole message with --json)" },
    "content-file": { type: "string", valueHint: "path|-", description: "Read the message from a file, or - for stdin, instead of TEXT" },
    ...sessionArg,
    ...storeArg,
    ...jsonArg,
    ...globalArgs,
  },
  async run({ args }) {
    const name = assertTeammateName(args.name);
    if ((args.text === undefined) === (args["content-file"] === undefined)) {
      throw new UsageError("give the message as TEXT (agent team send NAME TEXT) or with --content-file PATH (- for stdin), not both");
    }
    const content = await readContent({ content: args.text, contentFile: args["content-file"] }, undefined, await configuredContentCap(args.workspace));
    const session = requireAdminSession(args);
    // The store the session's runtime uses: with PostgreSQL the send's NOTIFY wakes a running Lead or worker.
    const stores = await openAdminStores(args, session);
    let message: MailboxMessage;
    try {
      // Only to a teammate of the session: a typo must not start a mailbox nobody reads.
      const teammate = (await stores.stores.team.read()).find((t) => t.name === name);
      if (!teammate) throw new UnknownAgentError(name, "run `agent team list` to see the teammates");
      if (teammate.state === "failed") {
        throw new TeammateUnavailableError(`teammate ${name} is failed and takes no messages; run \`agent team reset ${name}\` first`);
      }
      // Persisted as shutdown only when it approved a shutdown request: it is done for good.
      if (teammate.state === "shutdown") {
        throw new TeammateUnavailableError(
          `teammate ${name} is shutdown (it approved the Lead's shutdown request) and takes no messages; spawn a new one, or free the name with \`agent team rm ${name}\``,
        );
      }
      message = createMessage({ sender: USER, recipient: name, kind: "message", content }, { clock: systemClock, ids: uuidV7Source });
      await stores.mailbox.send(message);
      if (args.wait) {
        const { answerTo } = await import("./reply-run.ts");
        const reply = await answerTo(message, { session, stores, flags: args });
        if (args.json) await writeJson(reply);
        else await writeOut(reply.content.endsWith("\n") ? reply.content : `${reply.content}\n`);
        return;
      }
    } finally {
      await stores.close();
    }
    if (args.json) await writeJson(message);
    else await writeOut(`${message.id}\n`);
  },
});
