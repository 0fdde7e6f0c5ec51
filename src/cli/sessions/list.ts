import { defineCommand } from "citty";
import type { SessionMeta } from "../../sessions/session-meta.ts";
import { type SessionState, describeState, listedState } from "../../sessions/session-status.ts";
import { SessionStore } from "../../sessions/session-store.ts";
import { shortIds } from "../../sessions/short-id.ts";
import { globalArgs, jsonArg } from "../args.ts";
import { resolveStateDir } from "../context.ts";
import { formatTable, printable, writeErr, writeJson, writeOut } from "../output.ts";
import { clip } from "../run/progress.ts";
import { selectedStore } from "../session-mailbox.ts";
import { openSessionViews } from "../store/session-stores.ts";
import { storeArg } from "../store/store-arg.ts";

const PROMPT_PREVIEW_CHARS = 50;

export const sessionsListCommand = defineCommand({
  meta: { name: "list", description: "The sessions, most recently used first: short id, name, created, last used, first prompt, state" },
  args: { ...storeArg, ...jsonArg, ...globalArgs },
  async run({ args }) {
    const root = resolveStateDir(args);
    const store = new SessionStore(root);
    // Read-only: no runtime lock is taken, nothing is created.
    const rows: [SessionMeta, SessionState][] = [];
    const { sessions, unreadable } = store.survey();
    // A session whose metadata cannot be read is left out, and named, never a reason to list nothing.
    for (const error of unreadable) await writeErr(`agent: warning: ${error.message}; the session is not listed\n`);
    // Pending work is read where the runs keep it: the files, or a PostgreSQL store's rows.
    const selection = await selectedStore(args);
    const views = selection.kind === "postgres" && sessions.length > 0 ? await openSessionViews(selection) : undefined;
    try {
      for (const meta of sessions) {
        const dir = store.dirOf(meta.id);
        rows.push([meta, await listedState(store, meta, views?.of({ dir, id: meta.id }))]);
      }
    } finally {
      await views?.close();
    }
    // Short among every session of the root, foreign ones too: what is shown is what --resume finds.
    const shorts = shortIds(sessions.map((meta) => meta.id));
    if (args.json) {
      await writeJson({ sessions: rows.map(([meta, state]) => sessionJson(meta, state, shorts.get(meta.id) ?? meta.id)) });
      return;
    }
    if (rows.length === 0) {
      await writeOut(`no sessions in ${root}\n`);
      return;
    }
    const table = rows.map(([meta, state]) => [
      shorts.get(meta.id) ?? meta.id,
      meta.name ?? "-",
      meta.createdAtUtc,
      meta.lastUsedAtUtc,
      describeState(state),
      meta.firstPrompt === undefined ? "-" : clip(printable(meta.firstPrompt), PROMPT_PREVIEW_CHARS),
    ]);
    await writeOut(formatTable([["ID", "NAME", "CREATED (UTC)", "LAST USED (UTC)", "STATE", "FIRST PROMPT"], ...table]));
    if (rows.some(([, state]) => state.state === "foreign")) {
      await writeErr("agent: foreign sessions were not created by you here: nothing takes them up until `agent sessions adopt ID` (docs/sessions.md)\n");
    }
  },
});

function sessionJson(meta: SessionMeta, state: SessionState, shortId: string) {
  return {
    session_id: meta.id,
    short_id: shortId,
    name: meta.name ?? null,
    created_at_utc: meta.createdAtUtc,
    last_used_at_utc: meta.lastUsedAtUtc,
    first_prompt: meta.firstPrompt ?? null,
    state: state.state,
    ...(state.state === "running" ? { pid: state.pid, host: state.host } : {}),
    ...(state.state === "pending" ? { pending_work: state.work } : {}),
  };
}
