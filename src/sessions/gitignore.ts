import { join } from "node:path";
import { ensureDir, isErrno, writeNewFileSynced } from "../storage/atomic-file.ts";

/** The one `.agent/.gitignore`: written by the first run, and by `agent init`. */
export const AGENT_GITIGNORE = `# Written by agent: the state and your personal settings stay out of git;
# config.json (project settings) is meant to be committed.
state/
config.local.json
`;

/**
 * Writes `<workspace>/.agent/.gitignore` unless one exists: created exclusively,
 * so a file the user wrote (or another run wrote a moment ago) is never replaced.
 */
export function ensureAgentGitignore(workspace: string): void {
  const dir = join(workspace, ".agent");
  ensureDir(dir);
  try {
    writeNewFileSynced(join(dir, ".gitignore"), AGENT_GITIGNORE);
  } catch (error) {
    if (!isErrno(error, "EEXIST")) throw error;
  }
}
