import { LEAD } from "../core/agent-name.ts";
import type { MailboxMessage } from "../core/message.ts";
import type { InboxEntry } from "../runtime/event-inbox.ts";
import { mailboxEntry } from "./mailbox-entry.ts";
import type { PermissionRequests } from "./permission-requests.ts";
import type { TeamContext } from "./team-context.ts";

/** The most messages the pump claims in one durable step. */
const CLAIM_BATCH = 64;

/**
 * Feeds the Lead's mailbox to the Lead's inbox: every ready message moves to
 * processing and is published, acknowledged by the mailbox once the Lead has it
 * in history. Permission requests are answered here instead of by a Lead turn.
 */
export class LeadPump {
  readonly #team: TeamContext;
  readonly #permissions: PermissionRequests;
  #pumping: Promise<void> | undefined;
  #again = false;

  constructor(team: TeamContext, permissions: PermissionRequests) {
    this.#team = team;
    this.#permissions = permissions;
  }

  /** Runs one pass at a time; a request during a pass makes it go round again. */
  async pump(): Promise<void> {
    const team = this.#team;
    // A worker's results reach the Lead through the store; its own process takes them in.
    if (team.role === "worker") return;
    if (this.#pumping) {
      this.#again = true;
      return this.#pumping;
    }
    this.#pumping = (async () => {
      do {
        this.#again = false;
        // Published together once the pass has claimed them: a result and the idle
        // notice sent after it reach one event turn, however soon a turn takes them.
        const claimed: InboxEntry[] = [];
        try {
          for (let messages = await this.#claim(); messages.length > 0; messages = await this.#claim()) {
            for (const message of messages) {
              team.emit({ type: "mailbox", op: "claim", agent: LEAD, id: message.id, from: message.sender, kind: message.kind });
              // Answered by the runtime (the user or the Lead's rules), not by a Lead model turn.
              if (message.kind === "permission_request") {
                this.#permissions.answer(message);
                continue;
              }
              claimed.push(mailboxEntry(team, LEAD, message));
            }
          }
        } finally {
          for (const entry of claimed) team.o.inbox.publish(entry);
        }
      } while (this.#again);
    })().finally(() => {
      this.#pumping = undefined;
    });
    return this.#pumping;
  }

  /** The next messages for the Lead: many in one durable step where the store can (32 results and their idle notices at once). */
  async #claim(): Promise<MailboxMessage[]> {
    const store = this.#team.o.store;
    if (store.claimMany) return store.claimMany(LEAD, CLAIM_BATCH);
    const message = await store.claim(LEAD);
    return message ? [message] : [];
  }
}
