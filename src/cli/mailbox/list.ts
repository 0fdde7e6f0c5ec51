import { defineCommand } from "citty";
import { type AgentName, LEAD, assertAgentName } from "../../core/agent-name.ts";
import { UnknownAgentError } from "../../core/errors.ts";
import { MAILBOX_STATES, type MailboxState } from "../../core/mailbox-state.ts";
import type { AgentMailboxListing, MailboxCounts, MailboxEntry, MailboxStore } from "../../mailbox/store.ts";
import { agentFilterArg, globalArgs, jsonArg, sessionArg, stateFilterArg } from "../args.ts";
import { findAdminSession, resolveStateDir } from "../context.ts";
import { openSessionMailbox } from "../session-mailbox.ts";
import { storeArg } from "../store/store-arg.ts";
import { formatTable, writeJson, writeOut } from "../output.ts";

export const listCommand = defineCommand({
  meta: { name: "list", description: "Counts and messages per agent and state (content only with show)" },
  args: { ...agentFilterArg, ...stateFilterArg, ...sessionArg, ...storeArg, ...jsonArg, ...globalArgs },
  async run({ args }) {
    const agent = args.agent === undefined ? undefined : assertAgentName(args.agent);
    const session = findAdminSession(args);
    if (!session) {
      if (args.json) await writeJson({ session_id: null, agents: [] });
      else await writeOut(`no sessions in ${resolveStateDir(args)}\n`);
      return;
    }
    const mailbox = await openSessionMailbox(session, args);
    let listings: AgentMailboxListing[];
    try {
      listings = await listMailboxes(mailbox.store, agent, args.state as MailboxState | undefined);
    } finally {
      await mailbox.close();
    }
    if (args.json) await writeJson({ session_id: session.meta.id, agents: listings.map(listingJson) });
    else await writeOut(listings.length === 0 ? `no mailboxes in session ${session.meta.id}\n` : `session ${session.meta.id}\n${listings.map(listingText).join("\n")}`);
  },
});

async function listMailboxes(
  store: MailboxStore,
  agent: AgentName | undefined,
  state: MailboxState | undefined,
): Promise<AgentMailboxListing[]> {
  const agents = await store.agents();
  // Nothing to read: answer without touching (or creating) the state dir.
  if (agent === undefined && agents.length === 0) return [];
  if (agent !== undefined && !agents.includes(agent)) {
    // The Lead always exists; it just has not been sent anything yet.
    if (agent === LEAD) return [{ name: LEAD, counts: zeroCounts(), messages: [] }];
    throw new UnknownAgentError(agent, "run `agent mailbox list` without --agent to see the agents that have mailboxes");
  }
  return store.list({ agent, state });
}

export function zeroCounts(): MailboxCounts {
  return Object.fromEntries(MAILBOX_STATES.map((s) => [s, 0])) as MailboxCounts;
}

/** The `--json` shape: no content; `file` and `reason` where the entry is not a good message. */
export function entryJson(entry: MailboxEntry): Record<string, unknown> {
  const { id, sender, kind, state, createdAtUtc, size } = entry;
  const json: Record<string, unknown> = { id, sender, kind, state, createdAtUtc, size };
  if (state === "quarantine" || id === null) json.file = entry.file;
  if (entry.reason !== undefined) json.reason = entry.reason;
  return json;
}

function listingJson(listing: AgentMailboxListing) {
  return { name: listing.name, counts: listing.counts, messages: listing.messages.map(entryJson) };
}

function listingText(listing: AgentMailboxListing): string {
  const counts = MAILBOX_STATES.map((state) => `${listing.counts[state]} ${state}`).join(", ");
  const header = `${listing.name}: ${counts}\n`;
  if (listing.messages.length === 0) return header;
  const rows = listing.messages.map((m) => [
    m.state,
    m.id ?? "-",
    m.kind ?? "-",
    m.sender ?? "-",
    m.createdAtUtc ?? "-",
    String(m.size),
    m.reason === undefined ? "" : `${m.file}: ${m.reason}`,
  ]);
  const table = formatTable([["STATE", "ID", "KIND", "FROM", "CREATED (UTC)", "BYTES", "NOTE"], ...rows]);
  return header + table.replace(/^/gm, "  ").replace(/ +$/gm, "");
}
