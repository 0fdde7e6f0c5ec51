import { z } from "zod";
import type { TeammateRuntime } from "../team/teammate-runtime.ts";
import { defineTool } from "./tool.ts";

export const SpawnTeammateInput = z.strictObject({
  name: z.string().describe('Name of the teammate: a lowercase slug such as "alice" or "api-writer" ("lead" is yours).'),
  role: z.string().describe('What the teammate is, e.g. "backend engineer" or "tester".'),
  prompt: z.string().describe("Its first task, complete: it does not see your conversation."),
});
export type SpawnTeammateInput = z.infer<typeof SpawnTeammateInput>;

export function spawnTeammateTool(team: TeammateRuntime) {
  return defineTool({
    name: "spawn_teammate",
    description:
      "Start a persistent teammate with its own history and tools (shell, read_file, write_file, send_message) working " +
      "on `prompt` in parallel with you. Returns at once; its result arrives later as a message from it. " +
      "Send it follow-up work with send_message: it remembers its earlier turns.",
    input: SpawnTeammateInput,
    effect: "coordinate",
    subject: (input) => input.name,
    async run(input) {
      const teammate = await team.spawn(input.name, input.role, input.prompt);
      return {
        content:
          `spawned ${teammate.name} (${teammate.role}); it is working on the task and will report back with a message` +
          (teammate.previous !== undefined ? `; ${teammate.previous}` : ""),
      };
    },
  });
}
