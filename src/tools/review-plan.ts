import { z } from "zod";
import type { TeammateRuntime } from "../team/teammate-runtime.ts";
import { defineTool } from "../core/tool.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const ReviewPlanInput = lazySchema(() =>
  z.strictObject({
    name: z.string().describe("The teammate whose plan it is."),
    request_id: z.string().describe("The request_id of its plan_approval_request event."),
    approve: z.boolean().describe("true lets it carry out the plan with your permission mode; false keeps it read-only."),
    feedback: z.string().describe("What to change (on a rejection) or to keep in mind (on an approval)."),
  }),
);
export type ReviewPlanInput = z.infer<typeof ReviewPlanInput>;

/** The Lead's answer to a teammate's plan_approval_request. */
export function reviewPlanTool(team: TeammateRuntime) {
  return defineTool({
    name: "review_plan",
    description:
      "Approve or reject the plan a teammate spawned with plan_mode_required submitted (a plan_approval_request event). " +
      "Approval lets it edit from its next turn; rejection sends your feedback and it stays read-only to revise the plan.",
    input: ReviewPlanInput,
    effect: "coordinate",
    subject: (input) => input.name,
    async run(input) {
      await team.reviewPlan(input.name, input.request_id, input.approve, input.feedback);
      return {
        content: `${input.approve ? "approved" : "rejected"} ${input.name}'s plan (request_id ${input.request_id}); ` +
          (input.approve ? "it carries it out with your permission mode from its next turn" : "it stays in plan mode and revises the plan"),
      };
    },
  });
}
