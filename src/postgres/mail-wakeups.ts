import type { SQL } from "bun";
import type { AgentName } from "../core/agent-name.ts";
import type { MailWakeups, MailWatch } from "../mailbox/wakeups.ts";
import { MAIL_CHANNEL, mailPayload } from "./mail-channel.ts";

/** The safety net under LISTEN/NOTIFY: every watcher is woken this often regardless. */
const SLOW_POLL_MS = 2_000;

/**
 * MailWakeups for the PostgreSQL store: one LISTEN on the mailbox channel (on a
 * connection of its own, which Bun reconnects and re-subscribes), dispatched by
 * `<session>/<agent>`. A notification sent while the connection was down is
 * lost, so every reconnect wakes every watcher, and a slow poll wakes them anyway.
 */
export class PgMailWakeups implements MailWakeups {
  readonly #sql: SQL;
  readonly #session: string;
  readonly #pollMs: number;
  readonly #watchers = new Map<string, Set<() => void>>();
  #subscription: ReturnType<SQL["listen"]> | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(options: { sql: SQL; session: string; pollMs?: number }) {
    this.#sql = options.sql;
    this.#session = options.session;
    this.#pollMs = options.pollMs ?? SLOW_POLL_MS;
  }

  async watch(agent: AgentName, wake: () => void): Promise<MailWatch> {
    const key = mailPayload(this.#session, agent);
    let set = this.#watchers.get(key);
    if (!set) {
      set = new Set();
      this.#watchers.set(key, set);
    }
    const entry = () => wake();
    set.add(entry);
    this.#subscription ??= this.#sql.listen(
      MAIL_CHANNEL,
      (payload) => {
        for (const watcher of this.#watchers.get(payload) ?? []) watcher();
      },
      () => this.#wakeAll(),
    );
    await this.#subscription;
    this.#timer ??= setInterval(() => this.#wakeAll(), this.#pollMs);
    this.#timer.unref?.();
    return { stop: () => set.delete(entry) };
  }

  async close(): Promise<void> {
    this.#watchers.clear();
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    const subscription = this.#subscription;
    this.#subscription = undefined;
    if (subscription) await (await subscription).unlisten().catch(() => {});
  }

  #wakeAll(): void {
    for (const set of this.#watchers.values()) for (const watcher of set) watcher();
  }
}
