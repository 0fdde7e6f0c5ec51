import { defineCommand } from "citty";
import type { SessionMeta } from "../../sessions/session-meta.ts";
import { SessionStore } from "../../sessions/session-store.ts";
import { globalArgs, jsonArg } from "../args.ts";
import { resolveStateDir } from "../context.ts";
import { printable, writeJson, writeOut } from "../output.ts";
import { selectedStore } from "../session-mailbox.ts";
import { openSessionViews } from "../store/session-stores.ts";
import { storeArg } from "../store/store-arg.ts";

/** What a foreign session holds, shown before it is taken over. */
interface Holdings {
  mailboxes: { agent: string; ready: number; processing: number; done: number; quarantine: number }[];
  teammates: { name: string; state: string }[];
}

export const sessionsAdoptCommand = defineCommand({
  meta: {
    name: "adopt",
    description: "Take over a foreign session (committed to the repository, copied from another user, or from before markers): show what it holds, then mark it yours",
  },
  args: {
    id: { type: "positional", required: true, valueHint: "id", description: "Session: short id, id, unique id prefix or name" },
    ...storeArg,
    ...jsonArg,
    ...globalArgs,
  },
  async run({ args }) {
    const store = new SessionStore(resolveStateDir(args));
    const meta = store.find(args.id);
    const already = store.owns(meta);
    const holdings = await holdingsOf(store, meta, await selectedStore(args));
    if (!already) store.adopt(meta);
    if (args.json) {
      await writeJson({
        session_id: meta.id,
        name: meta.name ?? null,
        created_at_utc: meta.createdAtUtc,
        last_used_at_utc: meta.lastUsedAtUtc,
        first_prompt: meta.firstPrompt ?? null,
        ...holdings,
        adopted: !already,
      });
      return;
    }
    const lines = [
      `session     ${meta.id}${meta.name === undefined ? "" : ` (${printable(meta.name)})`}`,
      `created     ${meta.createdAtUtc}`,
      `last used   ${meta.lastUsedAtUtc}`,
      `prompt      ${meta.firstPrompt === undefined ? "-" : printable(meta.firstPrompt)}`,
      `agents      ${holdings.mailboxes.length === 0 ? "-" : holdings.mailboxes.map((m) => printable(m.agent)).join(", ")}`,
      ...holdings.mailboxes.map(
        (m) => `  ${printable(m.agent)}: ${m.ready} ready, ${m.processing} processing, ${m.done} done, ${m.quarantine} quarantined`,
      ),
      `teammates   ${holdings.teammates.length === 0 ? "-" : holdings.teammates.map((t) => `${printable(t.name)} (${t.state})`).join(", ")}`,
      already
        ? "already yours: nothing changed"
        : `adopted: it is yours now; \`agent drain --session ${meta.id}\` takes up its work, \`agent run --resume ${meta.id}\` goes on with it`,
    ];
    await writeOut(`${lines.join("\n")}\n`);
  },
});

/** Its mailboxes' counts and its teammates, read where the runs keep them (files, or a PostgreSQL store's rows); nothing is created. */
async function holdingsOf(store: SessionStore, meta: SessionMeta, selection: Parameters<typeof openSessionViews>[0]): Promise<Holdings> {
  const views = await openSessionViews(selection);
  try {
    const view = views.of({ dir: store.dirOf(meta.id), id: meta.id });
    const hasMailbox = (await view.mailbox.agents()).length > 0;
    const listed = hasMailbox ? await view.mailbox.list() : [];
    return {
      mailboxes: listed.map(({ name, counts }) => ({ agent: name, ...counts })),
      teammates: (await view.team.read()).map((t) => ({ name: t.name, state: t.state })),
    };
  } finally {
    await views.close();
  }
}
