import { LEAD } from "../../core/agent-name.ts";
import { UsageError } from "../../core/errors.ts";
import type { HistoryBackend } from "../../runtime/history-store.ts";

/** A point the files can be rewound to: the start of an agent's turn. */
export interface Checkpoint {
  /** The turn's key in the agent's history: what `--to` takes besides a Lead turn's number. */
  id: string;
  agent: string;
  /** For the Lead's turns: 1, 2, … in order (what `--to N` means). */
  number?: number;
  at: string;
}

/**
 * Every turn of every agent of the session is a checkpoint: the files as they
 * were just before it. Read from the histories' turn records (a turn answered
 * inside another's — `joins` — starts none of its own).
 */
export async function checkpoints(histories: HistoryBackend): Promise<Checkpoint[]> {
  const all: Checkpoint[] = [];
  for (const agent of await histories.agents()) {
    const seen = new Set<string>();
    for (const record of await histories.read(agent)) {
      if (record.type !== "turn" || record.status !== "started" || record.joins !== undefined || seen.has(record.key)) continue;
      seen.add(record.key);
      all.push({ id: record.key, agent, at: record.at, ...(agent === LEAD ? { number: seen.size } : {}) });
    }
  }
  return all.sort((a, b) => a.at.localeCompare(b.at));
}

/** `--to`'s checkpoint: a Lead turn's number, or a turn key (a unique prefix will do). */
export function findCheckpoint(all: Checkpoint[], to: string): Checkpoint {
  if (/^[1-9][0-9]*$/.test(to)) {
    const found = all.find((checkpoint) => checkpoint.agent === LEAD && checkpoint.number === Number(to));
    const count = all.filter((checkpoint) => checkpoint.agent === LEAD).length;
    if (!found) throw new UsageError(`--to ${to}: the Lead has ${count} turn${count === 1 ? "" : "s"} in this session; give 1..${count} or a checkpoint id (agent changes lists them)`);
    return found;
  }
  const matches = all.filter((checkpoint) => checkpoint.id.startsWith(to));
  if (matches.length !== 1) {
    throw new UsageError(`--to ${to}: ${matches.length === 0 ? "no" : "more than one"} checkpoint with that id; \`agent changes\` lists the turns and their ids`);
  }
  return matches[0]!;
}
