import { z } from "zod";
import type { TeammateRuntime } from "../team/teammate-runtime.ts";
import { defineTool } from "../core/tool.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const RequestShutdownInput = lazySchema(() =>
  z.strictObject({
    name: z.string().describe("The teammate to shut down."),
    reason: z.string().min(1).describe("Why, in a sentence: the teammate's model reads it when it decides."),
  }),
);
export type RequestShutdownInput = z.infer<typeof RequestShutdownInput>;

/** The Lead asks a teammate to finish and stop; the answer comes back as a shutdown_response event. */
export function requestShutdownTool(team: TeammateRuntime) {
  return defineTool({
    name: "request_shutdown",
    description:
      "Ask a teammate to shut down once its current turn ends. It answers with a shutdown_response message: " +
      "approved (it stops and takes no more messages) or refused with its reason (e.g. it is in the middle of a task).",
    input: RequestShutdownInput,
    effect: "coordinate",
    subject: (input) => input.name,
    async run(input) {
      const message = await team.requestShutdown(input.name, input.reason);
      return { content: `asked ${input.name} to shut down (request_id ${message.id}); its shutdown_response will arrive as a message` };
    },
  });
}
