import { z } from "zod";
import type { TeammateRuntime } from "../team/teammate-runtime.ts";
import { defineTool } from "../core/tool.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const SubmitPlanInput = lazySchema(() =>
  z.strictObject({
    plan: z.string().min(1).describe("What you will change and how, file by file, and how you will check it."),
  }),
);
export type SubmitPlanInput = z.infer<typeof SubmitPlanInput>;

/** A teammate spawned with plan_mode_required proposes before it may edit. */
export function submitPlanTool(team: TeammateRuntime) {
  return defineTool({
    name: "submit_plan",
    description:
      "You work read-only until the Lead approves your plan. Explore with your read tools, then submit the plan here " +
      "and end your turn: the Lead's answer (plan_approval_response) arrives as your next message, with feedback if it rejects it.",
    input: SubmitPlanInput,
    effect: "coordinate",
    subject: () => "",
    async run(input, context) {
      const requestId = await team.submitPlan(context.identity, input.plan);
      return { content: `plan submitted (request_id ${requestId}); end your turn now and wait for the Lead's review` };
    },
  });
}
