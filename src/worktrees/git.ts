/** What one git command did. */
export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs git in `cwd` and waits for it. Hooks are switched off: the runtime runs
 * git outside the sandbox, and a hook a sandboxed agent wrote into the
 * repository must not run with the runtime's rights. The variables that would
 * point git at another repository (set when the agent itself runs inside a git
 * hook) are dropped.
 */
export async function git(cwd: string, args: readonly string[], env: Record<string, string> = {}): Promise<GitResult> {
  const base: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || /^GIT_(DIR|WORK_TREE|INDEX_FILE|COMMON_DIR|OBJECT_DIRECTORY|PREFIX)$/.test(key)) continue;
    base[key] = value;
  }
  let child: Bun.Subprocess<"ignore", "pipe", "pipe">;
  try {
    child = Bun.spawn(["git", "-c", "core.hooksPath=/dev/null", ...args], {
      cwd,
      env: { ...base, GIT_TERMINAL_PROMPT: "0", LC_ALL: "C", ...env },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
  } catch (error) {
    // No git installed (or no such directory): an answer, like any other failure.
    return { code: 127, stdout: "", stderr: `git could not be started: ${(error as Error).message}` };
  }
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

/** The first line of git's complaint, for one-line errors. */
export function firstLine(result: GitResult): string {
  const line = (result.stderr.trim() || result.stdout.trim()).split("\n").find((l) => l.trim() !== "") ?? "";
  return line.replace(/^(fatal|error): /, "") || `git exited with code ${result.code}`;
}
