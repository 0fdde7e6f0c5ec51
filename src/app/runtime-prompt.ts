import { environmentFacts } from "../instructions/environment.ts";
import { readInstructionChain } from "../instructions/project-instructions.ts";
import { contextSections } from "../instructions/prompt-context.ts";
import type { RuntimeBase } from "./runtime-context.ts";

/** What every agent's system prompt ends with, and whether the workspace is in git (worktrees and merges need it). */
export interface RuntimePrompt {
  withContext: (prompt: string) => string;
  inGit: boolean;
}

/** Every agent of the runtime reads the same project instructions and environment, once per runtime. */
export function promptContext({ settings, context, clock }: RuntimeBase): RuntimePrompt {
  const environment = environmentFacts(context.workspace, clock);
  const sections = contextSections({
    instructions: readInstructionChain(context.workspace, context.startDir ?? "", context.userConfigDir),
    startDir: context.startDir ?? "",
    append: settings.appendSystemPrompt,
    environment,
  });
  return { withContext: (prompt) => `${prompt}\n\n${sections}`, inGit: environment.git.repository };
}
