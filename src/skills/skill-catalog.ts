import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { isErrno } from "../storage/atomic-file.ts";
import { lazySchema } from "../core/lazy-schema.ts";

/** The frontmatter a SKILL.md must start with. */
export const SkillFrontmatter = lazySchema(() =>
  z.object({
    name: z.string().min(1),
    description: z.string().min(1),
  }),
);
export type SkillFrontmatter = z.infer<typeof SkillFrontmatter>;

export interface Skill extends SkillFrontmatter {
  /** Directory name under skills/. */
  dir: string;
  path: string;
  /** The whole file, frontmatter included. */
  text: string;
}

export interface SkillProblem {
  path: string;
  problem: string;
}

const FRONTMATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/;

/**
 * The skills of a workspace: `skills/<name>/SKILL.md`, each starting with YAML
 * frontmatter holding `name` and `description`. A skill that cannot be read is
 * reported, not silently dropped.
 */
export class SkillCatalog {
  private constructor(
    readonly skills: Skill[],
    readonly problems: SkillProblem[],
  ) {}

  static load(workspace: string): SkillCatalog {
    const root = join(workspace, "skills");
    let dirs: string[];
    try {
      dirs = readdirSync(root, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
        .sort();
    } catch (error) {
      if (isErrno(error, "ENOENT") || isErrno(error, "ENOTDIR")) return new SkillCatalog([], []);
      throw error;
    }
    const skills: Skill[] = [];
    const problems: SkillProblem[] = [];
    for (const dir of dirs) {
      const path = join(root, dir, "SKILL.md");
      try {
        const text = readFileSync(path, "utf8");
        const match = FRONTMATTER.exec(text);
        if (!match) throw new Error("it does not start with --- frontmatter holding name and description");
        const parsed = SkillFrontmatter.safeParse(Bun.YAML.parse(match[1]!));
        if (!parsed.success) throw new Error(`frontmatter: ${parsed.error.issues.map((i) => `${i.path.join(".")} ${i.message}`).join("; ")}`);
        skills.push({ ...parsed.data, dir, path, text });
      } catch (error) {
        if (isErrno(error, "ENOENT")) continue;
        problems.push({ path, problem: (error as Error).message });
      }
    }
    return new SkillCatalog(skills, problems);
  }

  find(name: string): Skill | undefined {
    return this.skills.find((skill) => skill.name === name) ?? this.skills.find((skill) => skill.dir === name);
  }

  /** The catalog as it goes into the Lead's system prompt; empty when there are no skills. */
  promptSection(): string {
    if (this.skills.length === 0) return "";
    const lines = this.skills.map((skill) => `- ${skill.name}: ${skill.description}`);
    return ["Skills you can load with load_skill when a task calls for one:", ...lines].join("\n");
  }
}
