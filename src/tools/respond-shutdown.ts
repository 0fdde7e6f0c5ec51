import { z } from "zod";
import type { TeammateRuntime } from "../team/teammate-runtime.ts";
import { defineTool } from "../core/tool.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const RespondShutdownInput = lazySchema(() =>
  z.strictObject({
    approve: z.boolean().describe("true to stop now (your work is finished or can be dropped); false to keep working."),
    reason: z.string().min(1).describe("Why, for the Lead: what is done, or what you still have to finish."),
  }),
);
export type RespondShutdownInput = z.infer<typeof RespondShutdownInput>;

/** A teammate's answer to the Lead's shutdown_request, in the turn that request arrives in. */
export function respondShutdownTool(team: TeammateRuntime) {
  return defineTool({
    name: "respond_shutdown",
    description:
      "Answer the Lead's shutdown_request: approve to stop once this turn ends (you take no more messages), " +
      "or refuse with the reason (e.g. you are in the middle of a task). Only in the turn the request arrives in.",
    input: RespondShutdownInput,
    effect: "coordinate",
    subject: () => "",
    async run(input, context) {
      const { approve, already } = await team.respondShutdown(context.identity, input.approve, input.reason);
      if (already) return { content: `you already answered this shutdown request (${approve ? "approved" : "refused"}); that answer stands` };
      return { content: approve ? "shutdown approved: end your turn now with a one-line summary" : "shutdown refused: the Lead has your reason; carry on" };
    },
  });
}
