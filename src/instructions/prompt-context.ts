import { APPENDED_INSTRUCTIONS_TAG, ENVIRONMENT_TAG, PROJECT_INSTRUCTIONS_TAG, USER_INSTRUCTIONS_TAG } from "../core/prompt-sections.ts";
import type { EnvironmentFacts } from "./environment.ts";
import { INSTRUCTIONS_MAX_BYTES, type ProjectInstructions } from "./project-instructions.ts";

/** What every agent of a runtime (Lead, teammates, subagents) is told beside its own role. */
export interface PromptContext {
  /** The user's AGENTS.md, then the project's from the workspace root down to where the user is. */
  instructions?: ProjectInstructions[];
  /** config `appendSystemPrompt` and `--append-system-prompt`, joined. */
  append?: string;
  environment: EnvironmentFacts;
  /** Where the user started the agent, relative to the workspace ("" at its root). */
  startDir?: string;
}

/**
 * The sections added after an agent's own prompt, each clearly delimited so the
 * model can tell the project's words from ours. The environment comes last: it
 * changes daily, and everything before it stays a stable prefix for caching.
 */
export function contextSections(context: PromptContext): string {
  const sections: string[] = [];
  const { instructions = [], append, environment } = context;
  if (instructions.length > 0) {
    const files = instructions.map((file) => file.file).join(", then ");
    sections.push(`Instructions from ${files}: follow them unless the user says otherwise; where they disagree, the later (nearer to where the user is) wins.`);
    for (const file of instructions) sections.push(instructionsBlock(file));
  }
  if (append !== undefined && append.trim() !== "") {
    sections.push(`<${APPENDED_INSTRUCTIONS_TAG}>\n${append.trim()}\n</${APPENDED_INSTRUCTIONS_TAG}>`);
  }
  sections.push(`<${ENVIRONMENT_TAG}>\n${environmentLines(environment, context.startDir ?? "").join("\n")}\n</${ENVIRONMENT_TAG}>`);
  return sections.join("\n\n");
}

/** One instructions file as a delimited block, so the model can tell the file's words from ours. */
export function instructionsBlock(instructions: ProjectInstructions): string {
  const cut =
    instructions.cutFromBytes === undefined
      ? ""
      : `\n[${instructions.file} is ${instructions.cutFromBytes} bytes: only its first ${INSTRUCTIONS_MAX_BYTES} are included here; read the file for the rest]`;
  const tag = instructions.scope === "user" ? USER_INSTRUCTIONS_TAG : PROJECT_INSTRUCTIONS_TAG;
  return `<${tag} file="${instructions.file}">\n${instructions.text.trimEnd()}${cut}\n</${tag}>`;
}

function environmentLines({ platform, date, git }: EnvironmentFacts, startDir: string): string[] {
  const repo = !git.repository
    ? "no"
    : git.branch !== undefined
      ? `yes, on branch ${git.branch}`
      : git.detachedAt !== undefined
        ? `yes, detached at ${git.detachedAt}`
        : "yes";
  const where =
    startDir === ""
      ? ["Working directory: . (the workspace)"]
      : ["Working directory: . (the workspace: the repository's root; paths are relative to it)", `The user is in: ${startDir}/ (start there)`];
  return [...where, `Platform: ${platform}`, `Today's date: ${date}`, `Git repository: ${repo}`];
}
