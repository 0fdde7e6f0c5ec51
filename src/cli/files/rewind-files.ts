import { systemClock } from "../../core/clock.ts";
import type { FileLedger } from "../../file-journal/file-ledger.ts";
import { RewindRefusedError, applyRewind, planRewind } from "../../file-journal/rewind.ts";
import type { HistoryBackend } from "../../runtime/history-store.ts";
import type { GuardedWriter } from "../../workspace-files/guarded-writer.ts";
import { type Checkpoint, checkpoints, findCheckpoint } from "./checkpoints.ts";

export interface RewindRequest {
  ledger: FileLedger;
  histories: HistoryBackend;
  /** Where the files are put back through (rewind-writer.ts): the workspace and the session's --add-dir directories. */
  writer: GuardedWriter;
  to: string;
  agent?: string;
  dryRun?: boolean;
  force?: boolean;
  /** Tells the Lead (its history) what was put back. */
  note: (text: string, at: Date) => Promise<void>;
}

export interface RewindOutcome {
  checkpoint: Checkpoint;
  /** "turn 2", or "bob's turn <id>". */
  label: string;
  /** A line per file: restored, removed, or (dry run) would be. */
  done: string[];
}

/** `agent rewind` and `/rewind`: plan, refuse or apply, and tell the Lead. */
export async function rewindFiles(request: RewindRequest): Promise<RewindOutcome> {
  const checkpoint = findCheckpoint(await checkpoints(request.histories), request.to);
  const label = checkpoint.number !== undefined ? `turn ${checkpoint.number}` : `${checkpoint.agent}'s turn ${checkpoint.id}`;
  const steps = await planRewind(request.ledger, request.writer, checkpoint.at, request.agent);
  const fatal = steps.filter((step) => step.fatal);
  if (fatal.length > 0) throw new RewindRefusedError(fatal, false);
  if (request.dryRun || steps.every((step) => step.skipped !== undefined)) {
    const lines = steps.map((step) =>
      step.skipped !== undefined
        ? `left ${step.path} as it is (${step.skipped})`
        : `${step.target ? "would restore" : "would remove"} ${step.path}${step.refused ? ` (${step.refused}: needs --force)` : ""}`,
    );
    return { checkpoint, label, done: lines };
  }
  const refused = steps.filter((step) => step.refused !== undefined);
  if (refused.length > 0 && !request.force) throw new RewindRefusedError(refused, true);
  const done = await applyRewind(request.ledger, request.writer, steps, `rewind-${checkpoint.id}`);
  // Told to the Lead, so its next turn knows the files are not what it last saw.
  await request.note(
    `[agent rewind] The user put the workspace's files back as they were before ${label}: ${done.join("; ")}. Read a file again before changing it.`,
    systemClock.now(),
  );
  return { checkpoint, label, done };
}

/** What a rewind printed: a line per file under a header. */
export function rewindText(outcome: RewindOutcome, dryRun: boolean, session: string): string {
  if (outcome.done.length === 0) return `nothing to rewind: no file the agents changed since ${outcome.label} differs from how it was (session ${session})\n`;
  return `${dryRun ? "would rewind" : "rewound"} to before ${outcome.label} in session ${session}:\n${outcome.done.map((line) => `  ${line}\n`).join("")}`;
}
