import { lstatSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { type GitLaunch, firstLine, git } from "./git.ts";
import { UnsafeRepositoryError } from "./worktree-errors.ts";

/** One entry of `git config --list --show-scope --show-origin`. */
export interface GitConfigEntry {
  scope: string;
  origin: string;
  /** As git prints it: section and name lower-case, a subsection as written. */
  key: string;
  /** Absent for a bare `name` line (a boolean true). */
  value?: string;
}

/** Names (the key's last part) that make git start a program, whatever the section: filters, drivers, helpers, tools. */
const PROGRAM_NAMES = new Set([
  "process",
  "clean",
  "smudge",
  "textconv",
  "command",
  "driver",
  "cmd",
  "program",
  "helper",
  "uploadpack",
  "receivepack",
  "sshcommand",
  "pager",
  "editor",
  "askpass",
  "gitproxy",
  "hookspath",
  "external",
  "difffilter",
  "packobjectshook",
  "alternaterefscommand",
  "sendmailcmd",
  "browser",
]);
/** Sections every key of which names a program or another config file. */
const PROGRAM_SECTIONS = new Set(["include", "includeif", "pager", "man", "browser", "difftool", "mergetool"]);
const BOOLEAN = /^(|true|false|yes|no|on|off|1|0)$/i;

/**
 * Why this entry would make git run a program (or read config from elsewhere,
 * or work on another tree), or undefined when it would not. A deny list by the
 * key's shape, so a new driver or tool of an old kind is caught too.
 */
export function executableSetting(entry: GitConfigEntry): string | undefined {
  const key = entry.key;
  const section = key.slice(0, key.indexOf(".")).toLowerCase();
  const name = key.slice(key.lastIndexOf(".") + 1).toLowerCase();
  const value = entry.value ?? "";
  if (PROGRAM_SECTIONS.has(section)) return section.startsWith("include") ? "it includes another config file" : "it names a program";
  if (key.toLowerCase() === "core.fsmonitor") return BOOLEAN.test(value) ? undefined : "it names a program git runs on every status";
  if (key.toLowerCase() === "core.worktree") return "it points git at another working tree";
  if (section === "alias" && value.trimStart().startsWith("!")) return "the alias runs a shell command";
  if (section === "submodule" && name === "update" && value.trimStart().startsWith("!")) return "it runs a shell command";
  if (PROGRAM_NAMES.has(name) && value !== "") return "it names a program";
  return undefined;
}

/** Parses `git config --list --null --show-scope --show-origin`. */
export function parseConfigList(stdout: string): GitConfigEntry[] {
  const fields = stdout.split("\0");
  const entries: GitConfigEntry[] = [];
  for (let i = 0; i + 2 < fields.length; i += 3) {
    const [scope = "", origin = "", pair = ""] = fields.slice(i, i + 3);
    const newline = pair.indexOf("\n");
    entries.push(newline < 0 ? { scope, origin, key: pair } : { scope, origin, key: pair.slice(0, newline), value: pair.slice(newline + 1) });
  }
  return entries;
}

/**
 * The repository's effective config at `cwd` (the local file, a worktree's,
 * whatever those include), after refusing it when any of it would make git run
 * a program. Read by git itself (which runs nothing to list config), so a
 * `commondir` or `config.worktree` the check did not expect is still read.
 */
export async function checkedConfig(cwd: string, launch?: GitLaunch): Promise<GitConfigEntry[]> {
  const listed = await git(cwd, ["config", "--list", "--null", "--show-scope", "--show-origin"], {}, launch);
  if (listed.code !== 0) throw new UnsafeRepositoryError(`refusing to run git in ${cwd}: its config cannot be read (${firstLine(listed)}); fix or remove it, then retry`);
  const entries = parseConfigList(listed.stdout);
  for (const entry of entries) {
    // Ours: the command line's hardening and the empty global file.
    if (entry.scope === "command") continue;
    const why = executableSetting(entry);
    if (why !== undefined) {
      const where = entry.origin.replace(/^file:/, "");
      throw new UnsafeRepositoryError(
        `refusing to run git in ${cwd}: ${where} sets ${entry.key} (${why}); remove it (git config --file ${where} --unset-all ${entry.key}) and retry`,
      );
    }
  }
  return entries;
}

/**
 * A teammate's worktree is only the runtime's to run git in while its `.git`
 * is a plain file pointing at this repository's `worktrees/<name>` admin
 * directory: a `.git` rewritten to `gitdir: elsewhere` would hand git another
 * repository's config.
 */
export function assertWorktreePointer(worktreePath: string, commonDir: string): void {
  const dotGit = join(worktreePath, ".git");
  const refuse = (why: string) =>
    new UnsafeRepositoryError(`refusing to run git in ${worktreePath}: its .git ${why}; remove the worktree (agent team rm) and spawn the teammate again`);
  let text: string;
  try {
    if (!lstatSync(dotGit).isFile()) throw refuse("is not the file git worktree wrote");
    text = readFileSync(dotGit, "utf8");
  } catch (error) {
    if (error instanceof UnsafeRepositoryError) throw error;
    throw refuse(`cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  const pointer = /^gitdir: (.+)\n?$/.exec(text)?.[1];
  if (pointer === undefined) throw refuse("is not a single `gitdir:` line");
  let target: string;
  try {
    target = realpathSync(resolve(worktreePath, pointer));
  } catch {
    throw refuse(`points at ${pointer}, which does not exist`);
  }
  let admin: string;
  try {
    admin = realpathSync(join(commonDir, "worktrees"));
  } catch {
    throw refuse(`points at ${pointer}, but the repository has no worktrees directory`);
  }
  if (dirname(target) !== admin) throw refuse(`points at ${relative(worktreePath, target) || target}, outside ${admin}`);
}
