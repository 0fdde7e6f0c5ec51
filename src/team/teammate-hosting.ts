import type { AgentName } from "../core/agent-name.ts";
import { type LeaseHolder, LeaseLostError, type LeaseRenewal, type TeammateLease, type TeammateLeases, heartbeatEveryMs } from "../leases/teammate-leases.ts";

export interface TeammateHostingOptions {
  leases: TeammateLeases;
  holder: LeaseHolder;
  ttlMs: number;
  /** False for a Lead with --remote-teammates: it takes no lease, workers run every teammate. */
  runsTeammates: boolean;
  /** At most this many teammates at once (`agent worker --max-teammates`). */
  maxTeammates?: number;
  /** Told when a heartbeat finds a lease taken: the teammate must stop here at once. */
  onLost: (name: AgentName, error: Error) => void;
  /** Told when a heartbeat fails for another reason (the store unreachable): the lease is kept and retried. */
  onWarning?: (message: string) => void;
}

/**
 * The teammate leases this process holds: taken before a teammate runs here,
 * renewed by one heartbeat timer, given up on close. Only a teammate whose lease
 * is held here may be run here (its mailbox claimed, its history written).
 */
export class TeammateHosting {
  readonly #o: TeammateHostingOptions;
  readonly #held = new Map<AgentName, TeammateLease>();
  /** The token of the last lease taken here of each teammate, kept after it is lost or given up (see fenceOf). */
  readonly #lastTokens = new Map<AgentName, string>();
  readonly #timer: ReturnType<typeof setInterval>;
  #beating: Promise<void> | undefined;
  #closed = false;

  constructor(options: TeammateHostingOptions) {
    this.#o = options;
    this.#timer = setInterval(() => void this.heartbeat(), heartbeatEveryMs(options.ttlMs));
    // The runtime closes it; the timer alone must not keep a finished process alive.
    this.#timer.unref?.();
  }

  get runsTeammates(): boolean {
    return this.#o.runsTeammates;
  }

  get holder(): LeaseHolder {
    return this.#o.holder;
  }

  holds(name: AgentName): boolean {
    return this.#held.has(name);
  }

  /** The names held here. */
  held(): AgentName[] {
    return [...this.#held.keys()];
  }

  /** Whether another teammate may be taken (under --max-teammates). */
  hasRoom(): boolean {
    return this.#o.maxTeammates === undefined || this.#held.size < this.#o.maxTeammates;
  }

  /** Whether take(name) may succeed, as far as this process can tell now: it runs teammates and has room. */
  mayTake(name: AgentName): boolean {
    return !this.#closed && this.#o.runsTeammates && (this.#held.has(name) || this.hasRoom());
  }

  /** Takes `name`'s lease unless this process runs no teammates, is full, or someone else holds it. */
  async take(name: AgentName): Promise<boolean> {
    if (this.#closed || !this.#o.runsTeammates) return false;
    if (this.#held.has(name)) return true;
    if (!this.hasRoom()) return false;
    const lease = await this.#o.leases.acquire(name, this.#o.holder, this.#o.ttlMs);
    if (!lease) return false;
    if (this.#closed) {
      await this.#o.leases.release(lease);
      return false;
    }
    this.#held.set(name, lease);
    this.#lastTokens.set(name, lease.token);
    return true;
  }

  /**
   * The lease token this process writes `name`'s record under: the one it holds,
   * or last held (a stalled holder that has not heard yet that it lost it; its
   * write is then refused). Undefined when it never took the lease.
   */
  fenceOf(name: AgentName): string | undefined {
    return this.#held.get(name)?.token ?? this.#lastTokens.get(name);
  }

  /** Says what went wrong where this process's warnings go (a refused registry write). */
  warn(message: string): void {
    this.#o.onWarning?.(message);
  }

  /** The teammates some live process (this one or another) holds now, as the store says. */
  async heldAnywhere(): Promise<Set<string>> {
    return new Set((await this.#o.leases.live()).map((lease) => lease.name));
  }

  /** Gives `name` up (after its work was released): another process may take it at once. */
  async give(name: AgentName): Promise<void> {
    const lease = this.#held.get(name);
    if (!lease) return;
    this.#held.delete(name);
    await this.#o.leases.release(lease);
  }

  /** Forgets `name` without touching the store: its lease is someone else's now. */
  forget(name: AgentName): void {
    this.#held.delete(name);
  }

  /**
   * Whether `name`'s lease is still this process's, asked of the store now (a
   * renewal): a turn that failed may have failed because another process took
   * the teammate over (its history fenced off this one's appends), which the
   * next heartbeat would only tell later. A lease found taken is forgotten and
   * reported as at a heartbeat; a store that cannot answer counts as held.
   */
  async confirm(name: AgentName): Promise<boolean> {
    const lease = this.#held.get(name);
    if (!lease) return false;
    try {
      const renewed = await this.#o.leases.heartbeat(lease, this.#o.ttlMs);
      if (this.#held.get(name) === lease) this.#held.set(name, renewed);
      return true;
    } catch (error) {
      if (!(error instanceof LeaseLostError)) return true;
      if (this.#held.get(name) === lease) {
        this.#held.delete(name);
        this.#o.onLost(name, error);
      }
      return false;
    }
  }

  /**
   * Renews every held lease in one round (one durable write on either store);
   * one round at a time, so a slow store does not pile them up.
   */
  heartbeat(): Promise<void> {
    this.#beating ??= this.#renewAll().finally(() => {
      this.#beating = undefined;
    });
    return this.#beating;
  }

  async #renewAll(): Promise<void> {
    const leases = [...this.#held.values()];
    if (this.#closed || leases.length === 0) return;
    let renewal: LeaseRenewal;
    try {
      renewal = await this.#o.leases.heartbeatAll(leases, this.#o.ttlMs);
    } catch (error) {
      const names = leases.map((lease) => lease.name).join(", ");
      this.#o.onWarning?.(`could not renew the leases on teammates ${names}: ${(error as Error).message}`);
      return;
    }
    // A lease given up or taken again (a new token) while the round ran is left as it is now.
    for (const lease of renewal.renewed) if (this.#held.get(lease.name)?.token === lease.token) this.#held.set(lease.name, lease);
    for (const { lease, error } of renewal.lost) {
      if (this.#held.get(lease.name)?.token !== lease.token) continue;
      this.#held.delete(lease.name);
      this.#o.onLost(lease.name, error);
    }
  }

  /** Stops renewing and gives every lease up; what fails to be given up runs out by itself. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#beating;
    const leases = [...this.#held.values()];
    this.#held.clear();
    await Promise.allSettled(leases.map((lease) => this.#o.leases.release(lease)));
  }
}
