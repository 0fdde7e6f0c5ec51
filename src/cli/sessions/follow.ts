import { type AgentName, LEAD, assertAgentName } from "../../core/agent-name.ts";
import { UnknownAgentError } from "../../core/errors.ts";
import { historyTailOf } from "../../follow/history-tail.ts";
import { MailboxWatch, fileMailboxPeek } from "../../follow/mailbox-watch.ts";
import { type FollowItem, type FollowSource, followAgent } from "../../follow/session-follower.ts";
import { FileHistoryBackend } from "../../runtime/file-history.ts";
import { runtimeHeldWithoutTaking } from "../../storage/runtime-lock.ts";
import { FileTeamRegistry, type TeamRegistry } from "../../team/team-registry.ts";
import { type HistoryReader, historyEntries } from "../../timeline/session-timeline.ts";
import type { GlobalValues } from "../args.ts";
import type { AdminSession } from "../context.ts";
import { writeErr, writeOut } from "../output.ts";
import { adminSettings, openAdminStores } from "../store/session-stores.ts";
import { FollowLines } from "../terminal/follow-lines.ts";
import { terminalColumns } from "../terminal/columns.ts";

/** How often a follower looks: files are cheap to stat; a database is asked less often. */
const FILE_POLL_MS = 200;
const STORE_POLL_MS = 500;

/** What a follower reads of a session, and what closes it. */
interface OpenedFollow {
  source: FollowSource;
  histories: Pick<HistoryReader, "agents">;
  team: Pick<TeamRegistry, "read">;
  everyMs: number;
  close(): Promise<void>;
}

/**
 * `agent sessions show ID --follow [--agent NAME]`: prints what the agent (the
 * Lead by default) has done and goes on printing what it does, like `tail -f`,
 * until the session's runtime is gone and everything it wrote was printed, or
 * Ctrl-C. Read only: it takes no lock (not the session's, not the mailbox's)
 * and writes nothing, so it can watch a live runtime from another terminal.
 */
export async function followSession(args: GlobalValues & { store?: string; agent?: string; json?: boolean }, session: AdminSession): Promise<void> {
  const agent: AgentName = args.agent === undefined || args.agent === LEAD ? LEAD : assertAgentName(args.agent);
  const opened = await openFollow(args, session, agent);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    await untilKnown(opened, agent, session, stop.signal, args.json === true);
    const lines = new FollowLines(agent, { columns: process.stdout.isTTY ? terminalColumns(process.stdout) : 160 });
    const emit = async (item: FollowItem) => {
      const text = args.json ? jsonLine(agent, item) : lines.render(item);
      if (text.length > 0) await writeOut(text);
    };
    if (!args.json) await writeErr(`agent: following ${agent} in session ${session.meta.id} (Ctrl-C to stop)\n`);
    const end = await followAgent(opened.source, emit, { everyMs: opened.everyMs, signal: stop.signal });
    if (end === "ended" && !args.json) await writeErr(`agent: session ${session.meta.id} is not running: nothing more will come\n`);
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await opened.close();
  }
}

async function openFollow(args: GlobalValues & { store?: string }, session: AdminSession, agent: AgentName): Promise<OpenedFollow> {
  const settings = await adminSettings(args);
  if (settings.store.kind === "files") {
    const histories = new FileHistoryBackend(session.dir);
    return {
      source: {
        history: historyTailOf(histories, agent),
        mailbox: new MailboxWatch(fileMailboxPeek(session.dir, agent, settings.mailbox.maxContentBytes)),
        running: async () => runtimeHeldWithoutTaking(session.dir),
      },
      histories,
      team: new FileTeamRegistry(session.dir),
      everyMs: FILE_POLL_MS,
      close: async () => {},
    };
  }
  const stores = await openAdminStores(args, session);
  return {
    source: {
      history: historyTailOf(stores.stores.histories, agent),
      mailbox: new MailboxWatch(async () => (await stores.mailbox.list({ agent }))[0]?.messages ?? []),
      running: async () => runtimeHeldWithoutTaking(session.dir) || (await stores.sharedOwner?.()) !== undefined,
    },
    histories: stores.stores.histories,
    team: stores.stores.team,
    everyMs: STORE_POLL_MS,
    close: () => stores.close(),
  };
}

/** A name that is neither the Lead, a teammate, nor an agent with a history is a typo: said at once, not waited on. */
/**
 * Returns once the session has `agent`. An agent the session does not have is
 * refused, unless the session is running: then it may be a teammate being
 * spawned right now (its first model call goes out while its spawn is made
 * durable, and a pane or a second terminal is opened at that moment), so the
 * follower says so once and waits for it, as `tail -F` waits for a file.
 */
async function untilKnown(opened: OpenedFollow, agent: AgentName, session: AdminSession, stop: AbortSignal, quiet: boolean): Promise<void> {
  if (agent === LEAD) return;
  let told = false;
  while (!stop.aborted) {
    const teammates = (await opened.team.read()).map((t) => t.name);
    const withHistory = await opened.histories.agents();
    if (teammates.includes(agent) || withHistory.includes(agent)) return;
    const known = [...new Set([LEAD, ...teammates, ...withHistory])].join(", ");
    if (!(await opened.source.running())) {
      throw new UnknownAgentError(agent, `session ${session.meta.id} has no such agent (it has ${known}); pass one of them to --agent`);
    }
    if (!told && !quiet) await writeErr(`agent: ${agent} is not in session ${session.meta.id} yet (it has ${known}); waiting for it while the session runs (Ctrl-C to stop)\n`);
    told = true;
    await Bun.sleep(opened.everyMs);
  }
}

/** --json: one object a line, the timeline's entries (kind, text, detail) and the mailbox's changes. */
function jsonLine(agent: string, item: FollowItem): string {
  if (item.type === "record") return lines(historyEntries(agent, item.record));
  if (item.type === "mail") {
    const { entry, change } = item.change;
    return lines([{ at: entry.createdAtUtc, agent, kind: `mail_${change}`, id: entry.id, from: entry.sender, message_kind: entry.kind, state: entry.state }]);
  }
  return lines([{ at: new Date().toISOString(), agent, kind: item.type === "replaced" ? "history_replaced" : "history_gone" }]);
}

function lines(values: object[]): string {
  return values.map((value) => `${JSON.stringify(value)}\n`).join("");
}
