import type { AgentName } from "../core/agent-name.ts";
import type { JobHandle } from "../runtime/job-supervisor.ts";
import { owedIdleNotice } from "./owed-idle.ts";
import type { TeamContext } from "./team-context.ts";
import type { TeammateRecord } from "./team-registry.ts";
import { type TeamWatchTarget, watchTeam } from "./team-watch.ts";
import { restoreWorktree } from "./teammate-worktree-steps.ts";

/** How often a runtime with teammates run elsewhere looks at them, when nothing tells it of changes (files). */
export const DEFAULT_WATCH_MS = 200;

/**
 * The safety net when the store notifies changes (PostgreSQL): what is never
 * notified — a lease that ran out, a holder killed with -9 — is seen within this.
 */
export const NOTIFIED_WATCH_MS = 2_000;

/** How long a teammate's work may wait for a worker before a Lead that runs none says so. */
export const UNATTENDED_MS = 5_000;

/**
 * The teammates run by other processes (under leases): learning the team as
 * the store has it, taking over a teammate whose lease is free, giving one up
 * whose lease was lost, and the watch that does this while they run elsewhere.
 */
export class RemoteTeammates implements TeamWatchTarget {
  readonly #team: TeamContext;
  #watch: JobHandle | undefined;
  /**
   * The teammates another process ran with work at the last look at the store.
   * Kept as names, not as a yes/no: a look is several queries long, and the watch
   * may take one of them over meanwhile (its holder killed with -9). Counted then
   * as busy elsewhere, it kept `agent drain` waiting for a change that never came
   * (the watch stops once no teammate runs elsewhere); see `busyElsewhere`.
   */
  #workingElsewhere = new Set<string>();
  /** The teammates being taken over now (see `adopt`). */
  readonly #adopting = new Set<string>();
  /** Since when each teammate has had work that no live process held (a Lead that runs none). */
  readonly #unattendedSince = new Map<string, number>();
  /** The teammates reported unattended, until a worker takes them. */
  readonly #reported = new Set<string>();

  constructor(team: TeamContext) {
    this.#team = team;
  }

  get role(): "lead" | "worker" {
    return this.#team.role;
  }

  /**
   * Whether a teammate another process runs has work, or one is being taken over.
   * One run here is not: its loop's activity is its work.
   */
  get busyElsewhere(): boolean {
    if (this.#adopting.size > 0) return true;
    for (const name of this.#workingElsewhere) if (!this.#team.runsHere(name)) return true;
    return false;
  }

  pumpLead(): Promise<void> {
    return this.#team.pumpLead();
  }

  /**
   * Learns the team as the store has it (from another process): teammates
   * spawned, failed or removed there. Records of teammates run here are this
   * process's to write and are left as they are, and so are those changed here
   * since `mark` (TeamContext.changeMark taken before the read): the rows read
   * may be older than they are.
   */
  sync(stored: TeammateRecord[], mark = this.#team.changeMark()): void {
    const team = this.#team;
    const names = new Set<string>();
    for (const record of stored) {
      names.add(record.name);
      const worker = team.workers.get(record.name);
      if (worker && (team.runsHere(record.name) || !team.mayReplace(record.name, mark))) continue;
      // Shut down by the handshake where it ran: so it stays when this process writes it.
      const retired = record.state === "shutdown";
      if (worker) Object.assign(worker, { record, retired });
      else team.workers.set(record.name, { record, runner: undefined, active: false, current: undefined, pokes: 0, retired });
    }
    for (const [name, worker] of team.workers) {
      if (!names.has(name) && !team.runsHere(name) && !worker.active && !worker.record.pendingTaskId && team.mayReplace(name, mark)) team.workers.delete(name);
    }
  }

  /** See TeamContext.changeMark. */
  changeMark(): number {
    return this.#team.changeMark();
  }

  /** The teammates this process could run and does not: not failed, spawned, not held here. */
  unheld(): AgentName[] {
    const team = this.#team;
    return [...team.workers.values()]
      .filter(({ record }) => record.state !== "failed" && record.state !== "shutdown" && record.pendingTaskId === undefined && !team.runsHere(record.name))
      .map(({ record }) => record.name);
  }

  /** Teammates held here (or only `only`, when held here): their loop looks at their mailbox (messages other processes sent). */
  pokeHeld(only?: string): void {
    for (const name of this.#team.o.hosting?.held() ?? []) if (only === undefined || name === only) this.#team.startWorker(name);
  }

  /**
   * Takes `name` over when its lease is free (first run here, or its last holder
   * is gone): its interrupted work goes back to ready/ and it starts again from
   * its history in the store. Returns whether this process runs it now.
   */
  async adopt(name: AgentName): Promise<boolean> {
    const team = this.#team;
    const worker = team.workers.get(name);
    if (!worker || team.closing || team.runsHere(name) || !this.unheld().includes(name)) return false;
    // Pending work from before its lease is taken until its loop runs: held here
    // but not running yet, it would be neither busy elsewhere nor active here.
    this.#adopting.add(name);
    let started = false;
    try {
      const mark = team.changeMark();
      if (!(await team.takeLease(name))) return false;
      // A runner from an earlier hold has an old history: build it again from the store.
      worker.runner?.close();
      worker.runner = undefined;
      worker.current = undefined;
      // Its row as stored now, not as the last look read it: with the lease taken
      // here no other holder's write lands any more, and one may have landed since.
      const registry = team.o.registry;
      const stored = (await (registry.readSettled ? registry.readSettled() : registry.read())).find((record) => record.name === name);
      if (stored && team.mayReplace(name, mark)) {
        worker.record = stored;
        // Failed or shut down by that write, or spawned again since (its task pending): not to run now.
        if (stored.state === "failed" || stored.state === "shutdown" || stored.pendingTaskId !== undefined) {
          worker.retired = stored.state === "shutdown";
          await team.o.hosting?.give(name);
          return false;
        }
      }
      // Whatever its last holder said ("running" when it was killed), it starts here afresh:
      // idle, unless that holder was killed between its last ack and its idle notice
      // (owedIdleNotice), when it stays running until its loop has sent the notice.
      const said = worker.record.state;
      const owed = said === "running" ? await owedIdleNotice(team, name) : undefined;
      worker.record = { ...worker.record, state: owed === undefined ? "idle" : "running" };
      // Its worktree is this machine's to have: re-added here, or the teammate fails saying why.
      if (worker.record.worktree && !(await restoreWorktree(team, worker.record))) {
        await team.persist(name);
        return false;
      }
      // Stored idle now: its loop, finding an empty mailbox (a holder killed just after
      // its last ack), stores nothing, and a Lead reading "running" waited for ever.
      if (said === "running" && owed === undefined) await team.persist(name);
      await team.o.store.recover(name);
      worker.owedIdle = owed;
      team.startWorker(name);
      started = true;
      return true;
    } finally {
      this.#adopting.delete(name);
      // Whoever waits for the team to be quiet saw it pending: no loop will tell it otherwise.
      if (!started) team.changed();
    }
  }

  /**
   * Another process took `name`'s lease (this one did not renew it in time):
   * stop its turn at once and leave its message alone — it is the new holder's.
   */
  leaseLost(name: AgentName, error: Error): void {
    const team = this.#team;
    const worker = team.workers.get(name);
    if (!worker) return;
    team.emit({ type: "teammate", name, role: worker.record.role, state: worker.record.state, reason: error.message });
    worker.current = undefined;
    void (async () => {
      await worker.job?.cancel();
      worker.current = undefined;
      worker.runner?.close();
      worker.runner = undefined;
      this.ensureWatch();
      team.changed();
    })();
  }

  /**
   * Looks at the teammates other processes run: they have work while one says
   * it is running or has messages waiting or in progress. Wakes waiters when
   * that changes. Run before deciding the team is quiet.
   */
  async refreshElsewhere(): Promise<boolean> {
    const team = this.#team;
    const elsewhere = [...team.workers.values()].filter(({ record }) => record.state !== "failed" && record.state !== "shutdown" && !team.runsHere(record.name));
    const working: TeammateRecord[] = [];
    if (elsewhere.length > 0) {
      const mark = team.changeMark();
      this.sync(await team.o.registry.read(), mark);
      // One listing for the whole team: a look costs the same however many teammates run elsewhere.
      const open = new Map((await team.o.store.list()).map((listing) => [listing.name, listing.counts.ready + listing.counts.processing]));
      for (const { record } of elsewhere) {
        const now = team.workers.get(record.name)?.record ?? record;
        if (now.state === "running" || (open.get(record.name) ?? 0) > 0) working.push(now);
      }
    }
    if (this.role === "lead" && team.o.hosting?.runsTeammates === false) await this.#noticeUnattended(working);
    const was = this.busyElsewhere;
    this.#workingElsewhere = new Set(working.filter((record) => !team.runsHere(record.name)).map((record) => record.name));
    const busy = this.busyElsewhere;
    if (busy !== was) team.changed();
    return busy;
  }

  /**
   * A Lead that runs no teammate waits on workers: a teammate with work that no
   * live process has held for UNATTENDED_MS is reported once (a `unattended`
   * event), and again only after a worker took it and let it go.
   */
  async #noticeUnattended(working: TeammateRecord[]): Promise<void> {
    const team = this.#team;
    const held = working.length > 0 && team.o.hosting ? await team.o.hosting.heldAnywhere() : new Set<string>();
    const now = team.o.clock.now().getTime();
    for (const name of this.#unattendedSince.keys()) {
      if (!working.some((record) => record.name === name)) this.#unattendedSince.delete(name);
    }
    for (const record of working) {
      if (held.has(record.name)) {
        this.#unattendedSince.delete(record.name);
        this.#reported.delete(record.name);
        continue;
      }
      const since = this.#unattendedSince.get(record.name) ?? now;
      this.#unattendedSince.set(record.name, since);
      if (now - since < UNATTENDED_MS || this.#reported.has(record.name)) continue;
      this.#reported.add(record.name);
      team.emit({ type: "unattended", name: record.name, role: record.role, waitingMs: now - since });
    }
  }

  /** Whether the watch has something to look after: a worker always; a Lead while some teammate runs elsewhere. */
  get needsWatch(): boolean {
    return this.role === "worker" || this.unheld().length > 0;
  }

  ensureWatch(): void {
    const team = this.#team;
    const hosting = team.o.hosting;
    if (!hosting || this.#watch || team.closing || !this.needsWatch) return;
    this.#watch = team.o.supervisor.start("team watch", async (signal) => {
      try {
        const wakeups = team.o.teamWakeups;
        await watchTeam(
          this,
          {
            registry: team.o.registry,
            hosting,
            everyMs: team.o.watchEveryMs ?? DEFAULT_WATCH_MS,
            ...(wakeups ? { wakeups: { source: wakeups, everyMs: team.o.watchEveryMs ?? NOTIFIED_WATCH_MS } } : {}),
          },
          signal,
        );
      } finally {
        this.#watch = undefined;
      }
    });
  }

  /** Stops the watch (on close) and waits for it. */
  async stopWatch(): Promise<void> {
    await this.#watch?.cancel();
  }
}
