import { defineCommand } from "citty";
import { parseDuration } from "../../core/duration.ts";
import { StateDirBusyError } from "../../core/errors.ts";
import type { SessionMeta } from "../../sessions/session-meta.ts";
import { type SessionState, sessionState } from "../../sessions/session-status.ts";
import { SessionStore } from "../../sessions/session-store.ts";
import { shortIds } from "../../sessions/short-id.ts";
import { TeammateHeldError } from "../../team/teammate-errors.ts";
import { globalArgs, jsonArg } from "../args.ts";
import { resolveStateDir } from "../context.ts";
import { writeJson, writeOut } from "../output.ts";
import { selectedStore } from "../session-mailbox.ts";
import { openSessionViews } from "../store/session-stores.ts";
import { storeArg } from "../store/store-arg.ts";
import { removeSession } from "./rm.ts";

/** Why an old session was left in place. */
type KeptReason = "running" | "pending work" | "foreign";

export const sessionsPruneCommand = defineCommand({
  meta: {
    name: "prune",
    description: "Delete your sessions last used longer ago than a duration; a running one, or one with work left for `agent drain`, is kept",
  },
  args: {
    "older-than": { type: "string", required: true, valueHint: "duration", description: "Last used longer ago than this, e.g. 30d, 2w, 12h" },
    "dry-run": { type: "boolean", description: "Only say which sessions would be deleted" },
    "include-foreign": { type: "boolean", description: "Also delete old foreign sessions (not made by you here: committed, copied, or from before markers)" },
    ...storeArg,
    ...jsonArg,
    ...globalArgs,
  },
  async run({ args }) {
    const cutoff = new Date(Date.now() - parseDuration(args["older-than"])).toISOString();
    const store = new SessionStore(resolveStateDir(args));
    const sessions = store.list();
    const shorts = shortIds(sessions.map((meta) => meta.id));
    const old = sessions.filter((meta) => meta.lastUsedAtUtc < cutoff);
    const selection = await selectedStore(args);
    const pruned: SessionMeta[] = [];
    const kept: { meta: SessionMeta; reason: KeptReason }[] = [];
    // Read where the runs keep it: a session's pending work is in its files or the PostgreSQL store's rows.
    const views = old.length > 0 ? await openSessionViews(selection) : undefined;
    try {
      for (const meta of old) {
        const reason = await keptBecause(store, meta, args["include-foreign"] === true, views?.of({ dir: store.dirOf(meta.id), id: meta.id }));
        if (reason !== undefined) {
          kept.push({ meta, reason });
          continue;
        }
        if (args["dry-run"] !== true) {
          try {
            await removeSession(store, meta, selection);
          } catch (error) {
            // Started (or a worker took a teammate) since it was looked at: kept, as a running one is.
            if (!(error instanceof StateDirBusyError || error instanceof TeammateHeldError)) throw error;
            kept.push({ meta, reason: "running" });
            continue;
          }
        }
        pruned.push(meta);
      }
    } finally {
      await views?.close();
    }
    const dryRun = args["dry-run"] === true;
    if (args.json) {
      await writeJson({
        dry_run: dryRun,
        pruned: pruned.map((meta) => meta.id),
        kept: kept.map(({ meta, reason }) => ({ session_id: meta.id, reason })),
      });
      return;
    }
    const label = (meta: SessionMeta) => `${shorts.get(meta.id) ?? meta.id}${meta.name === undefined ? "" : ` (${meta.name})`}, last used ${meta.lastUsedAtUtc}`;
    const lines = [
      ...pruned.map((meta) => `${dryRun ? "would prune" : "pruned"} ${label(meta)}`),
      ...kept.map(({ meta, reason }) => `kept ${label(meta)}: ${keptHint(reason, shorts.get(meta.id) ?? meta.id)}`),
      `${dryRun ? "would prune" : "pruned"} ${pruned.length} session(s) last used more than ${args["older-than"]} ago; kept ${kept.length}`,
    ];
    await writeOut(`${lines.join("\n")}\n`);
  },
});

/** Why `meta` stays although it is old, or undefined when it may go. */
async function keptBecause(
  store: SessionStore,
  meta: SessionMeta,
  includeForeign: boolean,
  view: Parameters<typeof sessionState>[1],
): Promise<KeptReason | undefined> {
  if (!store.owns(meta) && !includeForeign) return "foreign";
  const state: SessionState = await sessionState(store.dirOf(meta.id), view);
  if (state.state === "running") return "running";
  if (state.state === "pending") return "pending work";
  return undefined;
}

function keptHint(reason: KeptReason, id: string): string {
  switch (reason) {
    case "running":
      return "running";
    case "pending work":
      return `pending work (\`agent drain --session ${id}\` finishes it, \`agent sessions rm ${id}\` drops it)`;
    case "foreign":
      return "foreign (--include-foreign prunes it too)";
  }
}
