import { unlinkSync } from "node:fs";
import { isAbsolute } from "node:path";
import { AgentError } from "../core/errors.ts";
import { resolveInWorkspace } from "../security/workspace-path.ts";
import { isErrno } from "../storage/atomic-file.ts";
import { WorkspaceFiles } from "../workspace-files/workspace-files.ts";
import { type FileLedger, contentHash } from "./file-ledger.ts";
import type { ContentRef, NumberedEntry } from "./journal-records.ts";

/** One file a rewind puts back: to `target` (null: removed, it did not exist then). */
export interface RewindStep {
  path: string;
  target: ContentRef;
  /** Why it cannot be put back without --force (or at all, when `fatal`). */
  refused?: string;
  fatal?: boolean;
}

/**
 * What a rewind to the moment `since` (an ISO instant: a checkpoint's start)
 * does: every file an agent (or `agent`, when given) changed since, back to its
 * content before the first of those changes. A file is refused when its content
 * now is not what the journal's last change left (changed since from outside the
 * agents, or by an agent the rewind leaves alone), and cannot be restored at all
 * when that content was over the journal's size cap.
 */
export async function planRewind(ledger: FileLedger, workspace: string, since: string, agent?: string): Promise<RewindStep[]> {
  const entries = await ledger.entries();
  const changed = entries.filter((entry) => entry.at >= since && (agent === undefined || entry.agent === agent));
  const first = new Map<string, NumberedEntry>();
  for (const entry of changed) if (!first.has(entry.path)) first.set(entry.path, entry);
  const files = new WorkspaceFiles();
  const steps: RewindStep[] = [];
  for (const [path, earliest] of first) {
    // A file of an --add-dir directory (`../shared/x`): rewind restores the workspace's files only (docs/files.md).
    if (path === ".." || path.startsWith("../") || isAbsolute(path)) continue;
    const last = entries.findLast((entry) => entry.path === path)!;
    const step: RewindStep = { path, target: earliest.before };
    const now = readCurrent(files, workspace, path);
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
    steps.push(step);
  }
  return steps;
}

/** Puts the files of `steps` back, journaling each as a change by `agent rewind`; returns what was done, a line each. */
export async function applyRewind(ledger: FileLedger, workspace: string, steps: RewindStep[], turn: string): Promise<string[]> {
  const files = new WorkspaceFiles();
  const scope = { workspace };
  const done: string[] = [];
  for (const step of steps) {
    const before = readCurrent(files, workspace, step.path);
    const target = step.target ? await ledger.backend.blob(step.target.hash) : undefined;
    await ledger.journal({ agent: "rewind", kind: "rewind", turn }, step.path, before, target);
    if (!step.target) {
      try {
        unlinkSync(resolveInWorkspace(workspace, step.path).absolute);
      } catch (error) {
        if (!isErrno(error, "ENOENT")) throw error;
      }
      done.push(`removed ${step.path} (created since)`);
    } else {
      files.write(scope, step.path, target!);
      done.push(`restored ${step.path} (${target!.length} bytes)`);
    }
  }
  return done;
}

function readCurrent(files: WorkspaceFiles, workspace: string, path: string): Buffer | undefined {
  try {
    return files.read({ workspace }, path).bytes ?? undefined;
  } catch (error) {
    if (isErrno(error, "ENOENT")) return undefined;
    throw error;
  }
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
