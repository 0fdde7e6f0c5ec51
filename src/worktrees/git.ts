/** What one git command did. */
export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Turns git's argv into the argv actually started (the sandbox around it); identity when unsandboxed. */
export type GitLaunch = (argv: string[], cwd: string) => string[];

/**
 * Settings given on every git command line, over whatever the repository says:
 * nothing git would start on its own (fsmonitor, hooks, ssh, an external diff,
 * a pager, an editor, a credential helper, the `ext::` transport). The
 * repository's own config is checked for these before git runs in it
 * (git-safety.ts); these are the second line.
 */
const HARDENING = [
  "core.fsmonitor=false",
  "core.hooksPath=/dev/null",
  "core.sshCommand=",
  "core.gitProxy=",
  "core.askPass=",
  "core.pager=cat",
  "core.editor=:",
  "sequence.editor=:",
  "credential.helper=",
  "protocol.ext.allow=never",
  "diff.external=",
  "commit.gpgSign=false",
  "tag.gpgSign=false",
  // A nested repository's config is not checked: git is kept from running in it
  // (status would start a git there, and its filters with it).
  "submodule.recurse=false",
  "diff.ignoreSubmodules=dirty",
].flatMap((setting) => ["-c", setting]);

/** The variables git is given from the agent's environment; everything else (API keys, every GIT_*) is left out. */
const KEPT_ENV = ["PATH", "HOME", "USER", "LOGNAME", "LANG", "TZ"];

/**
 * git's environment: built from a short list, not inherited, so no key reaches
 * it and no `GIT_*` of the parent (GIT_DIR, GIT_CONFIG_COUNT/KEY/VALUE, GIT_EXEC_PATH,
 * GIT_SSH_COMMAND) steers it. No system config, and an empty global one: the
 * user's identity is read once and passed explicitly (readGlobalIdentity).
 */
export function gitEnv(extra: Record<string, string> = {}, from: Record<string, string | undefined> = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of KEPT_ENV) {
    const value = from[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", GIT_TERMINAL_PROMPT: "0", LC_ALL: "C", ...extra };
}

/**
 * Runs git in `cwd`, hardened (HARDENING, gitEnv), and waits for it; `launch`
 * puts it in the sandbox. git's own failures are answers (the code and stderr),
 * as is a git that cannot be started (code 127).
 */
export async function git(cwd: string, args: readonly string[], env: Record<string, string> = {}, launch?: GitLaunch): Promise<GitResult> {
  // A sandbox that cannot start throws here: git is refused, not run without it.
  const argv = launch ? launch(["git", ...HARDENING, ...args], cwd) : ["git", ...HARDENING, ...args];
  let child: Bun.Subprocess<"ignore", "pipe", "pipe">;
  try {
    child = Bun.spawn(argv, { cwd, env: gitEnv(env), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  } catch (error) {
    // No git installed (or no such directory): an answer, like any other failure.
    return { code: 127, stdout: "", stderr: `git could not be started: ${(error as Error).message}` };
  }
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

/** The user's name and email from their global git config, or {} (run outside any repository: it reads one file of the user's). */
export async function readGlobalIdentity(from: Record<string, string | undefined> = process.env): Promise<{ name?: string; email?: string }> {
  // The user's own global file, wherever they keep it: the one read that is not of the repository.
  const env = gitEnv({}, from);
  delete env.GIT_CONFIG_GLOBAL;
  for (const name of ["XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL"]) if (from[name] !== undefined) env[name] = from[name]!;
  const argv = ["git", "config", "--global", "--no-includes", "--null", "--get-regexp", "^user\\.(name|email)$"];
  try {
    const child = Bun.spawn(argv, { cwd: "/", env, stdin: "ignore", stdout: "pipe", stderr: "ignore" });
    const [stdout] = await Promise.all([new Response(child.stdout).text(), child.exited]);
    const identity: { name?: string; email?: string } = {};
    for (const entry of stdout.split("\0")) {
      const [key, value] = [entry.slice(0, entry.indexOf("\n")), entry.slice(entry.indexOf("\n") + 1)];
      if (key === "user.name" && value !== "") identity.name = value;
      if (key === "user.email" && value !== "") identity.email = value;
    }
    return identity;
  } catch {
    return {};
  }
}

/** The first line of git's complaint, for one-line errors. */
export function firstLine(result: GitResult): string {
  const line = (result.stderr.trim() || result.stdout.trim()).split("\n").find((l) => l.trim() !== "") ?? "";
  return line.replace(/^(fatal|error): /, "") || `git exited with code ${result.code}`;
}
