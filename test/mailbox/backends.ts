// The mailbox backends the shared suites run against: the file store in a temp
// state dir, and the PostgreSQL store in a fresh database of a throw-away cluster
// (started on first use, one per test file, stopped after it).
import { afterAll } from "bun:test";
import { SQL } from "bun";
import { ManualClock } from "../../src/core/clock.ts";
import { SequentialIds } from "../../src/core/ids.ts";
import { MAILBOX_STATES, type MailboxState } from "../../src/core/mailbox-state.ts";
import { createMessage, type MailboxMessage, type MessageKind } from "../../src/core/message.ts";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import type { MailboxStore } from "../../src/mailbox/store.ts";
import { PostgresConnection } from "../../src/postgres/connection.ts";
import { PgMailboxStore } from "../../src/postgres/mailbox-store.ts";
import { PgMailWakeups } from "../../src/postgres/mail-wakeups.ts";
import { FileMailWakeups } from "../../src/mailbox/file-wakeups.ts";
import type { MailWakeups } from "../../src/mailbox/wakeups.ts";
import { TEST_SESSION } from "../fixtures/mailbox-place.ts";
import { type PostgresCluster, startPostgres } from "../support/postgres.ts";
import { tempDir } from "../support/temp-dir.ts";

export interface StoreOptions {
  maxContentBytes?: number;
  /** PostgreSQL: a claim's lease. */
  leaseMs?: number;
}

export interface MailboxBackend {
  readonly name: "file" | "postgres";
  /** A fresh, empty place for one test: a state dir, or a database URL. */
  place(): Promise<string>;
  /** A store on `place`; each call is another instance, as another runtime would have. */
  open(place: string, options?: StoreOptions): MailboxStore;
  /** The wake-ups of `place`, as a runtime watching its mailbox has them. */
  wakeups(place: string, options?: { pollMs?: number }): MailWakeups;
}

export const fileBackend: MailboxBackend = {
  name: "file",
  async place() {
    return tempDir("agent-mailbox-");
  },
  open(place, options = {}) {
    return new FileMailboxStore({ stateDir: place, ...(options.maxContentBytes ? { maxContentBytes: options.maxContentBytes } : {}) });
  },
  wakeups(place, options = {}) {
    return new FileMailWakeups({ stateDir: place, ...options });
  },
};

/**
 * The PostgreSQL backend for one test file: the cluster starts on the first
 * `place()` and stops, with every pool opened on it, after the file's tests.
 */
export function postgresBackend(): MailboxBackend {
  let cluster: Promise<PostgresCluster> | undefined;
  const pools = new Map<string, SQL>();
  const poolOf = (place: string) => {
    let pool = pools.get(place);
    if (!pool) {
      pool = new SQL(place, { max: 4 });
      pools.set(place, pool);
    }
    return pool;
  };
  afterAll(async () => {
    for (const pool of pools.values()) await pool.close().catch(() => {});
    await (await cluster)?.stop();
  });
  return {
    name: "postgres",
    async place() {
      cluster ??= startPostgres();
      const url = await (await cluster).database();
      // Migrated once here, as the runtime's first use would.
      await (await PostgresConnection.open(url, { max: 1 })).close();
      return url;
    },
    open(place, options = {}) {
      return new PgMailboxStore({ sql: poolOf(place), session: TEST_SESSION, ...options });
    },
    wakeups(place, options = {}) {
      return new PgMailWakeups({ sql: poolOf(place), session: TEST_SESSION, ...options });
    },
  };
}

/** Both backends; the PostgreSQL one is bound to the calling test file. */
export function mailboxBackends(): MailboxBackend[] {
  return [fileBackend, postgresBackend()];
}

/** A store with a fixed clock and sequential ids, for the contract suite. */
export interface ContractFixture {
  place: string;
  store: MailboxStore;
  clock: ManualClock;
  ids: SequentialIds;
  newStore(options?: StoreOptions): MailboxStore;
  message(recipient: string, content?: string, options?: { sender?: string; kind?: MessageKind }): MailboxMessage;
  /** The ids in each state of `agent`'s mailbox, FIFO order, as the store lists them. */
  states(agent: string): Promise<Record<MailboxState, string[]>>;
}

export async function contractFixture(backend: MailboxBackend, options: StoreOptions = {}): Promise<ContractFixture> {
  const place = await backend.place();
  const clock = new ManualClock("2026-03-01T12:00:00.000Z");
  const ids = new SequentialIds();
  const newStore = (more: StoreOptions = {}) => backend.open(place, { ...options, ...more });
  const store = newStore();
  return {
    place,
    store,
    clock,
    ids,
    newStore,
    message(recipient, content = "do the thing", { sender = "lead", kind = "task" } = {}) {
      clock.advance(1);
      return createMessage({ sender, recipient, kind, content }, { clock, ids });
    },
    async states(agent) {
      const out = Object.fromEntries(MAILBOX_STATES.map((state) => [state, [] as string[]])) as Record<MailboxState, string[]>;
      const [listing] = await store.list({ agent: agent as never });
      for (const entry of listing?.messages ?? []) if (entry.id) out[entry.state].push(entry.id);
      return out;
    },
  };
}
