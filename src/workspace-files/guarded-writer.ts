import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import type { PathFence } from "../core/tool.ts";
import { isErrno } from "../storage/atomic-file.ts";
import type { FileScope, FileWrite, WorkspaceFiles } from "./workspace-files.ts";

/** A replay's fence: the state root, and the guarded files, which a replay must know. */
export type ReplayFence = PathFence & Required<Pick<PathFence, "guardedWrite">>;

/** Where a replay writes: the workspace and the `--add-dir` directories (real, absolute) its session's run recorded. */
export interface ReplayScope {
  workspace: string;
  addDirs?: readonly string[];
}

/**
 * The door of a replay of recorded paths (agent rewind putting the file
 * journal back) into the user's tree: the same writes as the file tools'
 * (WorkspaceFiles: opened beneath the workspace, checked where they land,
 * atomic), on stricter terms. The paths were real when recorded, so no symlink
 * on one is followed, in a parent or the file itself (SymlinkOnPathError); and
 * a guarded file — git's, the agent's configuration, a hook's script — is
 * written or removed only when a person named that very path (`named`,
 * relative to the workspace): nobody was asked about this write, and a hook's
 * or the journal's say-so is no one's.
 */
export class GuardedWriter {
  readonly scope: FileScope & ReplayScope;
  readonly #files: WorkspaceFiles;
  readonly #fence: ReplayFence;
  readonly #named: ReadonlySet<string>;
  readonly #real: string;

  constructor(files: WorkspaceFiles, scope: ReplayScope, fence: ReplayFence, named: readonly string[] = []) {
    this.#files = files;
    this.#fence = fence;
    this.#real = realpathSync(scope.workspace);
    this.#named = new Set(named.map((path) => resolve(this.#real, path)));
    this.scope = {
      workspace: scope.workspace,
      ...(scope.addDirs ? { addDirs: scope.addDirs } : {}),
      fence,
      links: "refuse",
      approvedGuarded: (absolute) => this.#named.has(absolute),
    };
  }

  /** Why writing `path` needs a person to name it (and nobody has), or undefined. */
  unnamedGuard(path: string): string | undefined {
    const absolute = resolve(this.#real, path);
    if (this.#named.has(absolute)) return undefined;
    return this.#fence.guardedWrite(absolute);
  }

  /** The file's bytes now; undefined when there is none (or a file stands where a directory was). A symlink on the path is SymlinkOnPathError. */
  read(path: string): Buffer | undefined {
    try {
      return this.#files.read(this.scope, path).bytes ?? undefined;
    } catch (error) {
      if (isErrno(error, "ENOENT") || isErrno(error, "ENOTDIR")) return undefined;
      throw error;
    }
  }

  write(path: string, data: Uint8Array): FileWrite {
    return this.#files.write(this.scope, path, data);
  }

  remove(path: string): boolean {
    return this.#files.remove(this.scope, path).removed;
  }
}
