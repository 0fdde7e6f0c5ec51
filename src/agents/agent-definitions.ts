import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { PermissionMode } from "../config/config.ts";
import { isLooserMode } from "../config/modes.ts";
import { isErrno } from "../storage/atomic-file.ts";
import { Isolation } from "../worktrees/teammate-worktree.ts";
import { lazySchema } from "../core/lazy-schema.ts";

/** The tools a teammate may have; a definition's `tools` picks among them. */
export const TEAMMATE_TOOL_NAMES = ["shell", "read_file", "write_file", "send_message"] as const;

/** The frontmatter of `.agent/agents/<name>.md`. */
export const AgentDefinitionFrontmatter = lazySchema(() =>
  z.strictObject({
    name: z.string().regex(/^[a-z][a-z0-9-]{0,39}$/, "must be a lowercase slug such as reviewer or api-writer"),
    description: z.string().trim().min(1),
    model: z.string().trim().min(1).optional(),
    tools: z.array(z.enum(TEAMMATE_TOOL_NAMES)).min(1).optional(),
    permissionMode: PermissionMode.optional(),
    /** "worktree": spawned in its own git worktree and branch, unless the spawn says otherwise. */
    isolation: Isolation.optional(),
    /** Its teammates claim unblocked tasks of the task graph when idle (docs/team.md#self-claiming-teammates). */
    autoClaim: z.boolean().optional(),
    /** Globs of workspace paths its teammates own (docs/files.md#ownership). */
    owns: z.array(z.string().min(1)).min(1).optional(),
  }),
);
export type AgentDefinitionFrontmatter = z.infer<typeof AgentDefinitionFrontmatter>;

export interface AgentDefinition extends AgentDefinitionFrontmatter {
  path: string;
  /** The body after the frontmatter: added to the teammate's system prompt. */
  prompt: string;
}

export interface DefinitionProblem {
  path: string;
  problem: string;
}

const FRONTMATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/;

/** Parses one definition file's text; throws an Error naming what is wrong. */
export function parseAgentDefinition(path: string, text: string): AgentDefinition {
  const match = FRONTMATTER.exec(text);
  if (!match) throw new Error("it does not start with --- frontmatter holding name and description");
  let data: unknown;
  try {
    data = Bun.YAML.parse(match[1]!);
  } catch (error) {
    throw new Error(`frontmatter is not valid YAML: ${(error as Error).message}`);
  }
  const parsed = AgentDefinitionFrontmatter.safeParse(data);
  if (!parsed.success) {
    throw new Error(`frontmatter: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(top)"} ${i.message}`).join("; ")}`);
  }
  return { ...parsed.data, path, prompt: text.slice(match[0].length).trim() };
}

/**
 * The teammate definitions of a workspace: `.agent/agents/*.md`. Invalid ones
 * are reported in `problems` (the runtime warns once) and left out; of two with
 * one name the first by file name wins and the other is a problem.
 */
export class AgentDefinitions {
  private constructor(
    readonly definitions: AgentDefinition[],
    readonly problems: DefinitionProblem[],
  ) {}

  /**
   * `ceiling`: the project is not trusted, so no definition may run looser than
   * this mode; one that asks for more runs under the Lead's mode instead (the
   * trust layer has already told the user, src/trust/).
   */
  static load(workspace: string, options: { ceiling?: PermissionMode } = {}): AgentDefinitions {
    const root = join(workspace, ".agent", "agents");
    let files: string[];
    try {
      files = readdirSync(root, { withFileTypes: true })
        .filter((entry) => entry.isFile() && entry.name.endsWith(".md"))
        .map((entry) => entry.name)
        .sort();
    } catch (error) {
      if (isErrno(error, "ENOENT") || isErrno(error, "ENOTDIR")) return new AgentDefinitions([], []);
      throw error;
    }
    const definitions: AgentDefinition[] = [];
    const problems: DefinitionProblem[] = [];
    for (const file of files) {
      const path = join(root, file);
      try {
        const definition = parseAgentDefinition(path, readFileSync(path, "utf8"));
        const { ceiling } = options;
        if (ceiling !== undefined && definition.permissionMode !== undefined && isLooserMode(definition.permissionMode, ceiling)) delete definition.permissionMode;
        if (definitions.some((d) => d.name === definition.name)) throw new Error(`another definition is already named "${definition.name}"`);
        definitions.push(definition);
      } catch (error) {
        problems.push({ path, problem: (error as Error).message });
      }
    }
    return new AgentDefinitions(definitions, problems);
  }

  static empty(): AgentDefinitions {
    return new AgentDefinitions([], []);
  }

  find(name: string): AgentDefinition | undefined {
    return this.definitions.find((definition) => definition.name === name);
  }

  /** The definitions as they go into the Lead's system prompt; empty when there are none. */
  promptSection(): string {
    if (this.definitions.length === 0) return "";
    const lines = this.definitions.map((definition) => `- ${definition.name}: ${definition.description}`);
    return ['Teammate definitions you can spawn with spawn_teammate {agent: "<name>"}:', ...lines].join("\n");
  }
}
