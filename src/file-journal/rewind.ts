import { isAbsolute } from "node:path";
import { AgentError } from "../core/errors.ts";
import { isErrno } from "../storage/atomic-file.ts";
import { addedRootOf } from "../workspace-files/added-dirs.ts";
import type { GuardedWriter } from "../workspace-files/guarded-writer.ts";
import { SymlinkOnPathError } from "../workspace-files/open-beneath.ts";
import { type FileLedger, contentHash } from "./file-ledger.ts";
import type { ContentRef, NumberedEntry } from "./journal-records.ts";

/** One file a rewind puts back: to `target` (null: removed, it did not exist then). */
export interface RewindStep {
  path: string;
  target: ContentRef;
  /** Why it cannot be put back without --force (or at all, when `fatal`). */
  refused?: string;
  fatal?: boolean;
  /** Why it is left as it is: a path outside the workspace and the session's added directories. */
  skipped?: string;
}

/**
 * What a rewind to the moment `since` (an ISO instant: a checkpoint's start)
 * does: every file an agent (or `agent`, when given) changed since, back to its
 * content before the first of those changes. A file is refused when its content
 * now is not what the journal's last change left (changed since from outside the
 * agents, or by an agent the rewind leaves alone), and cannot be restored at all
 * when that content was over the journal's size cap. Every file is read and
 * written through `writer` (guarded-writer.ts): a path a symlink was put on
 * since, or a guarded file nobody named, is refused and cannot be forced.
 */
export async function planRewind(ledger: FileLedger, writer: GuardedWriter, since: string, agent?: string): Promise<RewindStep[]> {
  const entries = await ledger.entries();
  const changed = entries.filter((entry) => entry.at >= since && (agent === undefined || entry.agent === agent));
  const first = new Map<string, NumberedEntry>();
  for (const entry of changed) if (!first.has(entry.path)) first.set(entry.path, entry);
  const steps: RewindStep[] = [];
  for (const [path, earliest] of first) {
    // A file of an --add-dir directory (`../shared/x`) is put back when the
    // session's run still adds that directory; another is named, not touched.
    if (outsideWorkspace(path) && addedRootOf(writer.scope, path) === undefined) {
      steps.push({ path, target: earliest.before, skipped: "outside the workspace and the directories the session's last run added with --add-dir" });
      continue;
    }
    const last = entries.findLast((entry) => entry.path === path)!;
    const step: RewindStep = { path, target: earliest.before };
    const found = inspect(writer, path);
    if ("refused" in found) {
      steps.push({ ...step, refused: found.refused, fatal: true });
      continue;
    }
    const { now, guard } = found;
    const nowHash = now === undefined ? undefined : contentHash(now);
    if (nowHash !== (last.after?.hash ?? undefined)) {
      step.refused = "changed since by something outside the agents";
    } else if (agent !== undefined && last.agent !== agent) {
      step.refused = `changed since by ${last.agent}`;
    }
    if (earliest.before?.known === false) {
      step.refused = `its content before ${earliest.agent}'s shell command changed it is not known (no agent had read it as it was)`;
      step.fatal = true;
    } else if (earliest.before?.secret) {
      step.refused = "its earlier content held a secret (the API key or a configured credential), which the journal never stores";
      step.fatal = true;
    } else if (earliest.before && !earliest.before.stored) {
      step.refused = `its earlier content (${earliest.before.size} bytes) was over files.journalMaxBytes and is known by hash only`;
      step.fatal = true;
    } else if (earliest.before && !(await ledger.backend.hasBlob(earliest.before.hash, earliest.before.size))) {
      step.refused = "its earlier content is missing from the journal";
      step.fatal = true;
    }
    // Nothing to do for a file already as it was.
    if ((nowHash ?? null) === (earliest.before?.hash ?? null)) continue;
    if (guard !== undefined) {
      step.refused = `is ${guard}: agent rewind puts it back only when you name it (--include-guarded ${path})`;
      step.fatal = true;
    }
    steps.push(step);
  }
  return steps;
}

/** Puts the files of `steps` back, journaling each as a change by `agent rewind`; returns what was done, a line each. */
export async function applyRewind(ledger: FileLedger, writer: GuardedWriter, steps: RewindStep[], turn: string): Promise<string[]> {
  const done: string[] = [];
  for (const step of steps) {
    if (step.skipped !== undefined) {
      done.push(`left ${step.path} as it is (${step.skipped})`);
      continue;
    }
    // Read (and so refused, for a link put on the path since the plan) before the journal says anything.
    const before = writer.read(step.path);
    const target = step.target ? await ledger.backend.blob(step.target.hash) : undefined;
    await ledger.journal({ agent: "rewind", kind: "rewind", turn }, step.path, before, target);
    if (!step.target) {
      writer.remove(step.path);
      done.push(`removed ${step.path} (created since)`);
    } else {
      writer.write(step.path, target!);
      done.push(`restored ${step.path} (${target!.length} bytes)`);
    }
  }
  return done;
}

/**
 * The file's content now and, when it is guarded and nobody named it, why; or
 * why it cannot be put back at all now: the fence's refusals (a link put on the
 * path since, the state root, outside the workspace), a loop of links or a
 * file standing on the path.
 */
function inspect(writer: GuardedWriter, path: string): { now: Buffer | undefined; guard: string | undefined } | { refused: string } {
  try {
    return { now: writer.read(path), guard: writer.unnamedGuard(path) };
  } catch (error) {
    if (error instanceof SymlinkOnPathError) {
      return { refused: `leads through a symlink now (${error.link} -> ${error.target}), put there since the journal recorded it; remove the link first` };
    }
    if (error instanceof AgentError) return { refused: `cannot be put back where it is now (${error.message})` };
    if (isErrno(error, "ELOOP") || isErrno(error, "ENOTDIR")) {
      return { refused: "cannot be put back where it is now: a loop of symlinks or a file stands on its path, put there since the journal recorded it" };
    }
    throw error;
  }
}

function outsideWorkspace(path: string): boolean {
  return path === ".." || path.startsWith("../") || isAbsolute(path);
}

/** A rewind that would overwrite a change it does not own: nothing was restored. */
export class RewindRefusedError extends AgentError {
  readonly code = "REWIND_REFUSED";
  readonly category = "state" as const;
  constructor(steps: RewindStep[], forceable: boolean) {
    super(
      `agent rewind refused: ${steps.map((step) => `${step.path} ${step.refused}`).join("; ")}; nothing was restored` +
        (forceable ? " (--force restores them too, losing those changes)" : ""),
    );
  }
}
