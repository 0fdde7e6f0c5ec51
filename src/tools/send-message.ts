import { z } from "zod";
import type { TeammateRuntime } from "../team/teammate-runtime.ts";
import { defineTool } from "../core/tool.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const SendMessageInput = lazySchema(() =>
  z.strictObject({
    to: z.string().describe('Who gets it: "lead" or the name of a teammate.'),
    content: z.string().min(1).describe("The message, complete: the recipient sees nothing else of your conversation."),
  }),
);
export type SendMessageInput = z.infer<typeof SendMessageInput>;

/** The sender is the calling agent's trusted identity, never part of the input. */
export function sendMessageTool(team: TeammateRuntime) {
  return defineTool({
    name: "send_message",
    description:
      "Send a message to the lead or to a teammate through the durable mailbox. It is delivered even if the recipient " +
      "is busy. The recipient sees who sent it (from: your name); its answer comes back to you, later, as a result message " +
        "naming yours in in_reply_to — a teammate's answer to a task goes to the Lead instead.",
    input: SendMessageInput,
    effect: "coordinate",
    subject: (input) => input.to,
    async run(input, context) {
      const message = await team.send(context.identity, input.to, input.content);
      return { content: `sent message ${message.id} to ${input.to}` };
    },
  });
}
