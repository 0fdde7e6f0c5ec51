import { APPENDED_INSTRUCTIONS_TAG, ENVIRONMENT_TAG, PROJECT_INSTRUCTIONS_TAG } from "../core/prompt-sections.ts";
import type { EnvironmentFacts } from "./environment.ts";
import { INSTRUCTIONS_MAX_BYTES, type ProjectInstructions } from "./project-instructions.ts";

/** What every agent of a runtime (Lead, teammates, subagents) is told beside its own role. */
export interface PromptContext {
  instructions?: ProjectInstructions;
  /** config `appendSystemPrompt` and `--append-system-prompt`, joined. */
  append?: string;
  environment: EnvironmentFacts;
}

/**
 * The sections added after an agent's own prompt, each clearly delimited so the
 * model can tell the project's words from ours. The environment comes last: it
 * changes daily, and everything before it stays a stable prefix for caching.
 */
export function contextSections(context: PromptContext): string {
  const sections: string[] = [];
  const { instructions, append, environment } = context;
  if (instructions) {
    const cut =
      instructions.cutFromBytes === undefined
        ? ""
        : `\n[${instructions.file} is ${instructions.cutFromBytes} bytes: only its first ${INSTRUCTIONS_MAX_BYTES} are included here; read the file for the rest]`;
    sections.push(
      `The project's instructions, from ${instructions.file} in the workspace: follow them unless the user says otherwise.`,
      `<${PROJECT_INSTRUCTIONS_TAG} file="${instructions.file}">\n${instructions.text.trimEnd()}${cut}\n</${PROJECT_INSTRUCTIONS_TAG}>`,
    );
  }
  if (append !== undefined && append.trim() !== "") {
    sections.push(`<${APPENDED_INSTRUCTIONS_TAG}>\n${append.trim()}\n</${APPENDED_INSTRUCTIONS_TAG}>`);
  }
  sections.push(`<${ENVIRONMENT_TAG}>\n${environmentLines(environment).join("\n")}\n</${ENVIRONMENT_TAG}>`);
  return sections.join("\n\n");
}

function environmentLines({ platform, date, git }: EnvironmentFacts): string[] {
  const repo = !git.repository
    ? "no"
    : git.branch !== undefined
      ? `yes, on branch ${git.branch}`
      : git.detachedAt !== undefined
        ? `yes, detached at ${git.detachedAt}`
        : "yes";
  return ["Working directory: . (the workspace)", `Platform: ${platform}`, `Today's date: ${date}`, `Git repository: ${repo}`];
}
