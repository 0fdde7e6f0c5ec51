import type { SQL } from "bun";
import type { TeamWakeups } from "../team/team-watch.ts";
import { MAIL_CHANNEL, TEAM_CHANNEL } from "./mail-channel.ts";

type Subscription = Awaited<ReturnType<SQL["listen"]>>;

/**
 * TeamWakeups for the PostgreSQL store: LISTEN on the team channel (records
 * stored or removed, leases given up) and on the mail channel (a message for
 * any agent of the session: a held teammate's loop must claim it), each
 * subscribed once per process and dispatched to every watcher of the session.
 * A reconnect wakes every watcher, since what was notified meanwhile is lost.
 */
export class PgTeamWakeups implements TeamWakeups {
  readonly #sql: SQL;
  readonly #session: string;
  readonly #watchers = new Set<(agent?: string) => void>();
  #subscriptions: Promise<Subscription[]> | undefined;

  constructor(options: { sql: SQL; session: string }) {
    this.#sql = options.sql;
    this.#session = options.session;
  }

  async watch(wake: (agent?: string) => void): Promise<{ stop(): void }> {
    const entry = (agent?: string) => wake(agent);
    this.#watchers.add(entry);
    const wakeAll = (agent?: string) => {
      for (const watcher of this.#watchers) watcher(agent);
    };
    const mailPrefix = `${this.#session}/`;
    this.#subscriptions ??= Promise.all([
      this.#sql.listen(TEAM_CHANNEL, (payload) => payload === this.#session && wakeAll(), () => wakeAll()),
      this.#sql.listen(MAIL_CHANNEL, (payload) => payload.startsWith(mailPrefix) && wakeAll(payload.slice(mailPrefix.length)), () => wakeAll()),
    ]);
    try {
      await this.#subscriptions;
    } catch (error) {
      // The next watch subscribes again.
      this.#subscriptions = undefined;
      this.#watchers.delete(entry);
      throw error;
    }
    return { stop: () => this.#watchers.delete(entry) };
  }

  async close(): Promise<void> {
    this.#watchers.clear();
    const subscriptions = this.#subscriptions;
    this.#subscriptions = undefined;
    if (subscriptions) for (const subscription of await subscriptions.catch(() => [])) await subscription.unlisten().catch(() => {});
  }
}
