import { defineCommand } from "citty";
import { MAILBOX_STATES } from "../../core/mailbox-state.ts";
import type { MailboxCounts } from "../../mailbox/store.ts";
import type { NumberedEntry } from "../../file-journal/journal-records.ts";
import type { TeammateRecord } from "../../team/team-registry.ts";
import { conditionNote, teammateCondition } from "../../team/teammate-condition.ts";
import type { MailboxStore } from "../../mailbox/store.ts";
import { globalArgs, jsonArg, sessionArg } from "../args.ts";
import { findAdminSession, resolveStateDir } from "../context.ts";
import { openAdminStores } from "../store/session-stores.ts";
import { storeArg } from "../store/store-arg.ts";
import { zeroCounts } from "../mailbox/list.ts";
import { formatTable, writeJson, writeOut } from "../output.ts";

export const teamListCommand = defineCommand({
  meta: { name: "list", description: "Teammates from team.json (or the --store): role, state, last change, mailbox counts" },
  args: { ...sessionArg, ...storeArg, ...jsonArg, ...globalArgs },
  async run({ args }) {
    const session = findAdminSession(args);
    if (!session) {
      if (args.json) await writeJson({ session_id: null, teammates: [] });
      else await writeOut(`no teammates: no sessions in ${resolveStateDir(args)}\n`);
      return;
    }
    // Read-only, so no runtime lock: team.json is replaced atomically, never seen half-written.
    const opened = await openAdminStores(args, session);
    let teammates: TeammateRecord[];
    let counts: Map<string, MailboxCounts>;
    // team.json says "running" for a teammate whose runtime was stopped mid-task.
    let live: boolean;
    let changed: Map<string, string[]>;
    let leased: Set<string>;
    try {
      teammates = await opened.stores.team.read();
      changed = latestTurnFiles(await opened.stores.files.entries());
      counts = await mailboxCounts(opened.mailbox, teammates);
      live = (await opened.runtimeOwner()) !== undefined;
      leased = new Set(live && teammates.length > 0 ? (await opened.leases.live()).map((lease) => lease.name) : []);
    } finally {
      await opened.close();
    }
    const conditions = new Map(
      teammates.flatMap((t) => {
        const condition = teammateCondition(t, counts.get(t.name) ?? zeroCounts(), { runtimeLive: live, leased: leased.has(t.name) });
        return condition ? [[t.name, condition] as const] : [];
      }),
    );
    if (args.json) {
      await writeJson({
        session_id: session.meta.id,
        teammates: teammates.map((t) => {
          const condition = conditions.get(t.name);
          return { ...t, ...(condition ? { condition } : {}), mailbox: counts.get(t.name) ?? zeroCounts(), files_changed: changed.get(t.name) ?? [] };
        }),
      });
      return;
    }
    if (teammates.length === 0) {
      await writeOut(`no teammates in session ${session.meta.id}\n`);
      return;
    }
    const rows = teammates.map((t) => {
      const c = counts.get(t.name) ?? zeroCounts();
      const condition = conditions.get(t.name);
      const notes = [...(condition ? [conditionNote(condition, session.meta.id)] : []), note(t, live, changed.get(t.name))].filter((n) => n !== "");
      return [t.name, t.role, condition ?? t.state, t.updatedAtUtc, ...MAILBOX_STATES.map((s) => String(c[s])), notes.join("; ")];
    });
    const header = ["NAME", "ROLE", "STATE", "UPDATED (UTC)", ...MAILBOX_STATES.map((s) => s.toUpperCase()), "NOTE"];
    await writeOut(`session ${session.meta.id}\n${formatTable([header, ...rows]).replace(/ +$/gm, "")}`);
  },
});

/** Each teammate's counts per mailbox state; one pass over the mailboxes (read under the mailbox lock). */
async function mailboxCounts(store: MailboxStore, teammates: TeammateRecord[]): Promise<Map<string, MailboxCounts>> {
  if (teammates.length === 0) return new Map();
  const listings = await store.list();
  return new Map(listings.map((listing) => [listing.name, listing.counts]));
}

/**
 * The files each agent changed in its latest turn that changed any (its current
 * one, while it works), from the session's file journal (docs/files.md).
 */
export function latestTurnFiles(entries: readonly NumberedEntry[]): Map<string, string[]> {
  const latest = new Map<string, { turn: string | undefined; paths: string[] }>();
  for (const entry of entries) {
    if (entry.kind === "rewind") continue;
    const seen = latest.get(entry.agent);
    if (!seen || seen.turn !== entry.turn) latest.set(entry.agent, { turn: entry.turn, paths: [entry.path] });
    else if (!seen.paths.includes(entry.path)) seen.paths.push(entry.path);
  }
  return new Map([...latest].map(([agent, { paths }]) => [agent, paths]));
}

function note(teammate: TeammateRecord, live: boolean, files: string[] | undefined): string {
  if (teammate.failure !== undefined) return `failed: ${teammate.failure.replace(/\s*\n\s*/g, " ")}`;
  const notes = [];
  if (teammate.state === "shutdown") notes.push("shut down on the Lead's request; `agent team rm` frees the name");
  if (teammate.state === "running" && !live) notes.push("stopped with its runtime; `agent drain` resumes it");
  if (teammate.plan) notes.push(PLAN_NOTES[teammate.plan.state] + (teammate.plan.requestId ? ` (request ${teammate.plan.requestId})` : ""));
  if (teammate.worktree) notes.push(`branch ${teammate.worktree.branch}`);
  if (teammate.autoClaim) notes.push("claims tasks when idle");
  if (teammate.owns) notes.push(`owns ${teammate.owns.join(", ")}`);
  if (files && files.length > 0) notes.push(`${teammate.state === "running" ? "changing" : "changed in its last turn"}: ${files.join(", ")}`);
  return notes.join("; ");
}

const PLAN_NOTES: Record<NonNullable<TeammateRecord["plan"]>["state"], string> = {
  drafting: "plan mode: read-only until its plan is approved",
  submitted: "plan submitted, waiting for review_plan",
  approved: "plan approved",
};
