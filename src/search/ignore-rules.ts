import { readFileSync } from "node:fs";
import { join } from "node:path";
import ignore, { type Ignore } from "ignore";
import { isErrno } from "../storage/atomic-file.ts";

/** Files whose rules apply to their directory and everything below it; a later file's rules win. */
export const IGNORE_FILES = [".gitignore", ".ignore"] as const;

/** Git matches ignore patterns case-insensitively only where the file system is. */
const IGNORE_CASE = process.platform === "darwin" || process.platform === "win32";

/** The rules one directory adds, tested with paths relative to that directory. */
interface RuleFrame {
  /** The directory, relative to the workspace, with a trailing "/" ("" for the workspace). */
  prefix: string;
  rules: Ignore;
}

function readRules(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    // A missing file is the common case; an unreadable one adds no rules rather than stopping a search.
    if (isErrno(error, "ENOENT") || isErrno(error, "ENOTDIR") || isErrno(error, "EACCES") || isErrno(error, "EISDIR")) return undefined;
    throw error;
  }
}

/**
 * The ignore rules in force at one directory of a walk: its own ignore files
 * and those of its ancestors up to the workspace. As in git, the deepest file
 * that says anything about a path decides (a `!pattern` below can re-include
 * what a pattern above excluded), and a directory once excluded is never
 * entered, so nothing below it can come back.
 */
export class IgnoreRules {
  private constructor(private readonly frames: readonly RuleFrame[]) {}

  /** No rules at all: what `include_ignored` walks with. */
  static none(): IgnoreRules {
    return new IgnoreRules([]);
  }

  /** The rules of the workspace root: `.git/info/exclude` (weakest), then its ignore files. */
  static atWorkspace(workspace: string): IgnoreRules {
    const extra = readRules(join(workspace, ".git", "info", "exclude"));
    return IgnoreRules.none().enter(workspace, "", { before: extra });
  }

  /**
   * The rules inside `dir` (relative path `relative`, "" for the workspace):
   * these rules plus `dir`'s own ignore files. A caller that has listed `dir`
   * says which ignore files are there, which spares a failed open per
   * directory on a large tree.
   */
  enter(dir: string, relative: string, options: { present?: readonly string[]; before?: string } = {}): IgnoreRules {
    const files = options.present ?? IGNORE_FILES;
    const texts = [options.before, ...files.map((name) => readRules(join(dir, name)))].filter(
      (text): text is string => text !== undefined && text.trim() !== "",
    );
    if (texts.length === 0) return this;
    const rules = ignore({ ignorecase: IGNORE_CASE });
    for (const text of texts) rules.add(text);
    return new IgnoreRules([...this.frames, { prefix: relative === "" ? "" : `${relative}/`, rules }]);
  }

  /** Whether the entry at `relative` (to the workspace) is excluded; directories are matched with a trailing "/". */
  ignores(relative: string, isDirectory: boolean): boolean {
    for (let i = this.frames.length - 1; i >= 0; i--) {
      const frame = this.frames[i]!;
      const own = relative.slice(frame.prefix.length) + (isDirectory ? "/" : "");
      const verdict = frame.rules.test(own);
      if (verdict.ignored) return true;
      if (verdict.unignored) return false;
    }
    return false;
  }
}
