import { z } from "zod";
import type { SkillCatalog } from "../skills/skill-catalog.ts";
import { defineTool } from "../core/tool.ts";
import { lazySchema } from "../core/lazy-schema.ts";

export const LoadSkillInput = lazySchema(() =>
  z.strictObject({
    name: z.string().min(1).describe("The skill's name, as listed in the system prompt."),
  }),
);
export type LoadSkillInput = z.infer<typeof LoadSkillInput>;

export function loadSkillTool(catalog: SkillCatalog) {
  return defineTool({
    name: "load_skill",
    description: "Load the full instructions of one of the workspace's skills (skills/<name>/SKILL.md), listed in the system prompt.",
    input: LoadSkillInput,
    effect: "read",
    subject: (input) => input.name,
    async run(input) {
      const skill = catalog.find(input.name);
      if (!skill) {
        const known = catalog.skills.map((s) => s.name);
        throw new Error(
          `no skill named "${input.name}"; ${known.length > 0 ? `available: ${known.join(", ")}` : "this workspace has no skills (skills/<name>/SKILL.md)"}`,
        );
      }
      return { content: skill.text };
    },
  });
}
