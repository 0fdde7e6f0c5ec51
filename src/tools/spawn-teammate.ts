import { z } from "zod";
import type { AgentDefinitions } from "../agents/agent-definitions.ts";
import { type TeammateRuntime, TeammateUnavailableError } from "../team/teammate-runtime.ts";
import { Isolation } from "../worktrees/teammate-worktree.ts";
import { defineTool } from "../core/tool.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const SpawnTeammateInput = lazySchema(() =>
  z.strictObject({
    name: z.string().describe('Name of the teammate: a lowercase slug such as "alice" or "api-writer" ("lead" is yours).'),
    role: z.string().describe('What the teammate is, e.g. "backend engineer" or "tester".'),
    prompt: z.string().describe("Its first task, complete: it does not see your conversation."),
    agent: z.string().optional().describe("A teammate definition listed in your instructions: its prompt, tools, permission mode and model."),
    model: z.string().optional().describe("The model it uses, instead of the definition's or yours."),
    plan_mode_required: z
      .boolean()
      .optional()
      .describe("true: it works read-only and must submit a plan you approve with review_plan before it may edit or run commands."),
    auto_claim: z
      .boolean()
      .optional()
      .describe("When idle, it claims the oldest unblocked pending task of the task graph, works it, completes it and reports (you get task_claimed, then the result)."),
    owns: z
      .array(z.string().min(1))
      .optional()
      .describe('Workspace paths it owns, as globs (e.g. ["src/api/**"]): a write there by anyone else asks first.'),
  }),
);
export type SpawnTeammateInput = z.infer<typeof SpawnTeammateInput>;

/** In a git workspace the tool also takes `isolation`. */
export const SpawnTeammateGitInput = lazySchema(() =>
  SpawnTeammateInput.unwrap().extend({
    isolation: Isolation.optional().describe(
      '"worktree": it works in its own git worktree on branch agent/<session>/<name>, so teammates editing at once do not collide; ' +
        'merge its branch with merge_teammate. "none": the shared workspace.',
    ),
  }),
);
export type SpawnTeammateGitInput = z.infer<typeof SpawnTeammateGitInput>;

export interface SpawnTeammateOptions {
  /** True in a git workspace: the schema offers `isolation` (it is only there where it works). */
  git?: boolean;
  /** The configured default (config `team.isolation`). */
  isolation?: Isolation;
  /** The configured default (config `team.autoClaim`), for spawns that neither say nor use a definition that does. */
  autoClaim?: boolean;
}

export function spawnTeammateTool(team: TeammateRuntime, definitions: AgentDefinitions, options: SpawnTeammateOptions = {}) {
  const input: z.ZodType<SpawnTeammateGitInput> = options.git ? SpawnTeammateGitInput : SpawnTeammateInput;
  return defineTool({
    name: "spawn_teammate",
    description:
      "Start a persistent teammate with its own history and tools (shell, read_file, write_file, send_message) working " +
      "on `prompt` in parallel with you. Returns at once; its result arrives later as a message from it. " +
      "Send it follow-up work with send_message: it remembers its earlier turns.",
    input,
    effect: "coordinate",
    concurrent: true,
    subject: (input) => input.name,
    async run(input) {
      const definition = input.agent === undefined ? undefined : definitions.find(input.agent);
      if (input.agent !== undefined && !definition) {
        const known = definitions.definitions.map((d) => d.name);
        throw new TeammateUnavailableError(
          `no teammate definition named "${input.agent}" (${known.length > 0 ? `known: ${known.join(", ")}` : "there is no .agent/agents/<name>.md"})`,
        );
      }
      const model = input.model?.trim() || definition?.model;
      // The call's choice, else the definition's, else the configured default.
      const isolation = input.isolation ?? definition?.isolation ?? options.isolation ?? "none";
      const autoClaim = input.auto_claim ?? definition?.autoClaim ?? options.autoClaim ?? false;
      const owns = input.owns ?? definition?.owns;
      const teammate = await team.spawn(input.name, input.role, input.prompt, {
        ...(definition ? { agent: definition.name } : {}),
        ...(model ? { model } : {}),
        ...(input.plan_mode_required ? { planModeRequired: true } : {}),
        ...(isolation === "worktree" ? { isolation } : {}),
        ...(autoClaim ? { autoClaim } : {}),
        ...(owns && owns.length > 0 ? { owns } : {}),
      });
      const where = teammate.worktree ? `, in its own worktree on branch ${teammate.worktree.branch}` : "";
      return {
        content:
          `spawned ${teammate.name} (${teammate.role}${definition ? `, from definition ${definition.name}` : ""}${model ? `, model ${model}` : ""}${where}` +
          `${input.plan_mode_required ? ", in plan mode until you approve its plan" : ""}); ` +
          "it is working on the task and will report back with a message" +
          (autoClaim ? "; when idle it claims unblocked tasks of the task graph" : "") +
          (teammate.previous !== undefined ? `; ${teammate.previous}` : ""),
      };
    },
  });
}
