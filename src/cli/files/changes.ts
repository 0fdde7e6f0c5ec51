import { defineCommand } from "citty";
import { changedRegion, formatRegion } from "../../file-journal/line-diff.ts";
import type { FileJournalBackend, NumberedEntry } from "../../file-journal/journal-records.ts";
import { globalArgs, jsonArg, sessionArg } from "../args.ts";
import { findAdminSession, resolveStateDir } from "../context.ts";
import { formatTable, writeJson, writeOut } from "../output.ts";
import { openAdminStores } from "../store/session-stores.ts";
import { storeArg } from "../store/store-arg.ts";
import type { HistoryBackend } from "../../runtime/history-store.ts";
import { type Checkpoint, checkpoints } from "./checkpoints.ts";

export const changesCommand = defineCommand({
  meta: { name: "changes", description: "What the agents changed in the workspace's files, from the session's journal (docs/files.md)" },
  args: {
    ...sessionArg,
    agent: { type: "string", valueHint: "name", description: "Only this agent's changes" },
    diff: { type: "boolean", description: "Show each change as a diff" },
    ...storeArg,
    ...jsonArg,
    ...globalArgs,
  },
  async run({ args }) {
    const session = findAdminSession(args);
    if (!session) {
      if (args.json) await writeJson({ session_id: null, changes: [] });
      else await writeOut(`no changes: no sessions in ${resolveStateDir(args)}\n`);
      return;
    }
    const opened = await openAdminStores(args, session);
    let listing: ChangeListing;
    try {
      listing = await listChanges(opened.stores.files, opened.stores.histories, { ...(args.agent !== undefined ? { agent: args.agent } : {}), diff: Boolean(args.diff) });
    } finally {
      await opened.close();
    }
    if (args.json) {
      await writeJson({ session_id: session.meta.id, changes: listing.json });
      return;
    }
    await writeOut(changesText(listing, session.meta.id, args.agent));
  },
});

export interface ChangeListing {
  entries: NumberedEntry[];
  turns: Map<string, Checkpoint>;
  /** Each entry's diff, under --diff. */
  diffs?: string[];
  json: unknown[];
}

/** The journal's entries (of `agent`, when given), with the Lead's turn numbers and, if asked, diffs. */
export async function listChanges(files: FileJournalBackend, histories: HistoryBackend, options: { agent?: string; diff?: boolean }): Promise<ChangeListing> {
  const entries = (await files.entries()).filter((entry) => options.agent === undefined || entry.agent === options.agent);
  const turns = new Map((await checkpoints(histories)).map((turn) => [turn.id, turn]));
  const diffs = options.diff ? await Promise.all(entries.map((entry) => diffOf(files, entry))) : undefined;
  const json = entries.map((entry, index) => ({ ...entry, lead_turn: turns.get(entry.turn ?? "")?.number ?? null, ...(diffs ? { diff: diffs[index] } : {}) }));
  return { entries, turns, ...(diffs ? { diffs } : {}), json };
}

/** `agent changes` and `/changes`: a table of the changes, then (--diff) each change's hunk. */
export function changesText(listing: ChangeListing, session: string, agent?: string): string {
  const { entries, turns, diffs } = listing;
  if (entries.length === 0) return `no changes to files in session ${session}${agent ? ` by ${agent}` : ""}
`;
  const rows = entries.map((entry) => [String(entry.seq), entry.at, entry.agent, turnLabel(entry, turns), entry.tool ?? entry.kind, entry.path, what(entry)]);
  const table = formatTable([["SEQ", "AT (UTC)", "AGENT", "TURN", "BY", "PATH", "CHANGE"], ...rows]).replace(/ +$/gm, "");
  const body = diffs ? entries.map((entry, index) => `#${entry.seq} ${entry.path}\n${diffs[index]}\n`).join("\n") : "";
  return `session ${session}\n${table}${body ? `\n${body}` : ""}`;
}

function turnLabel(entry: NumberedEntry, turns: Map<string, Checkpoint>): string {
  const turn = turns.get(entry.turn ?? "");
  if (turn?.number !== undefined) return `lead #${turn.number}`;
  return entry.turn ? entry.turn.slice(0, 8) : "-";
}

function what(entry: NumberedEntry): string {
  if (entry.before === null) return `created (${entry.after?.size ?? 0} B)`;
  if (entry.before.known === false) return entry.after === null ? "removed (content not known)" : `? -> ${entry.after.size} B`;
  if (entry.after === null) return `removed (was ${entry.before.size} B)`;
  return `${entry.before.size} B -> ${entry.after.size} B`;
}

async function diffOf(files: FileJournalBackend, entry: NumberedEntry): Promise<string> {
  if (entry.before?.known === false) return "(the content before this shell command is not known: no agent had read it as it was)";
  const before = entry.before ? await files.blob(entry.before.hash) : Buffer.alloc(0);
  const after = entry.after ? await files.blob(entry.after.hash) : Buffer.alloc(0);
  if (!before || !after) return "(content over files.journalMaxBytes: not kept, no diff)";
  if (before.includes(0) || after.includes(0)) return "(binary)";
  const region = changedRegion(before.toString("utf8"), after.toString("utf8"));
  return region ? formatRegion(region, 40) : "(no change)";
}
