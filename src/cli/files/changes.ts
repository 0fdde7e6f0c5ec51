import { defineCommand } from "citty";
import { changedRegion, formatRegion } from "../../file-journal/line-diff.ts";
import type { FileJournalBackend, NumberedEntry } from "../../file-journal/journal-records.ts";
import { globalArgs, jsonArg, sessionArg } from "../args.ts";
import { findAdminSession, resolveStateDir } from "../context.ts";
import { formatTable, writeJson, writeOut } from "../output.ts";
import { openAdminStores } from "../store/session-stores.ts";
import { storeArg } from "../store/store-arg.ts";
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
    let entries: NumberedEntry[];
    let turns: Checkpoint[];
    let diffs: string[] = [];
    try {
      entries = (await opened.stores.files.entries()).filter((entry) => args.agent === undefined || entry.agent === args.agent);
      turns = await checkpoints(opened.stores.histories);
      if (args.diff) diffs = await Promise.all(entries.map((entry) => diffOf(opened.stores.files, entry)));
    } finally {
      await opened.close();
    }
    const turnOf = new Map(turns.map((turn) => [turn.id, turn]));
    if (args.json) {
      await writeJson({
        session_id: session.meta.id,
        changes: entries.map((entry, index) => ({ ...entry, lead_turn: turnOf.get(entry.turn ?? "")?.number ?? null, ...(args.diff ? { diff: diffs[index] } : {}) })),
      });
      return;
    }
    if (entries.length === 0) {
      await writeOut(`no changes to files in session ${session.meta.id}${args.agent ? ` by ${args.agent}` : ""}\n`);
      return;
    }
    const rows = entries.map((entry) => [
      String(entry.seq),
      entry.at,
      entry.agent,
      turnLabel(entry, turnOf),
      entry.tool ?? entry.kind,
      entry.path,
      what(entry),
    ]);
    const table = formatTable([["SEQ", "AT (UTC)", "AGENT", "TURN", "BY", "PATH", "CHANGE"], ...rows]).replace(/ +$/gm, "");
    const body = args.diff ? entries.map((entry, index) => `#${entry.seq} ${entry.path}\n${diffs[index]}\n`).join("\n") : "";
    await writeOut(`session ${session.meta.id}\n${table}${body ? `\n${body}` : ""}`);
  },
});

function turnLabel(entry: NumberedEntry, turns: Map<string, Checkpoint>): string {
  const turn = turns.get(entry.turn ?? "");
  if (turn?.number !== undefined) return `lead #${turn.number}`;
  return entry.turn ? entry.turn.slice(0, 8) : "-";
}

function what(entry: NumberedEntry): string {
  if (entry.before === null) return `created (${entry.after?.size ?? 0} B)`;
  if (entry.after === null) return `removed (was ${entry.before.size} B)`;
  return `${entry.before.size} B -> ${entry.after.size} B`;
}

async function diffOf(files: FileJournalBackend, entry: NumberedEntry): Promise<string> {
  const before = entry.before ? await files.blob(entry.before.hash) : Buffer.alloc(0);
  const after = entry.after ? await files.blob(entry.after.hash) : Buffer.alloc(0);
  if (!before || !after) return "(content over files.journalMaxBytes: not kept, no diff)";
  if (before.includes(0) || after.includes(0)) return "(binary)";
  const region = changedRegion(before.toString("utf8"), after.toString("utf8"));
  return region ? formatRegion(region, 40) : "(no change)";
}
