import { z } from "zod";
import { agentNameProblem } from "./agent-name.ts";
import { lazySchema } from "./lazy-schema.ts";

/** An agent name inside a zod schema; the rules are agentNameProblem's. */
export const AgentName = lazySchema(() =>
  z.string().superRefine((name, ctx) => {
    const problem = agentNameProblem(name);
    if (problem) ctx.addIssue({ code: "custom", message: `invalid agent name: ${problem}` });
  }),
);
export type AgentName = z.infer<typeof AgentName>;
