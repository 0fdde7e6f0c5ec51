import { join } from "node:path";
import { z } from "zod";
import { AgentName } from "../core/agent-name-schema.ts";
import { UtcInstant } from "../core/message.ts";
import { ensureDir, namesIn, unlinkQuietly, writeFileAtomicOffLoop } from "../storage/atomic-file.ts";
import { readStateFile } from "../storage/state-file.ts";
import { LeaseHolder, type TeammateLease } from "./teammate-leases.ts";
import { lazySchema } from "../core/lazy-schema.ts";

/** A holder's heartbeats: until when each of its leases (by the token it was taken with) was renewed. */
export const HolderHeartbeat = lazySchema(() =>
  z.strictObject({
    holder: LeaseHolder,
    leases: z.array(z.strictObject({ name: AgentName, token: z.uuid(), leaseUntilUtc: UtcInstant })),
  }),
);
export type HolderHeartbeat = z.infer<typeof HolderHeartbeat>;

/**
 * Where file leases' heartbeats go: `leases/holders/<holder id>.json`, one file
 * per holding process (its id URI-encoded), replaced by each of its heartbeat
 * rounds. A round renewing 32 leases is one atomic durable write (two fsyncs),
 * not a rewrite of each lease file (64). Each lease keeps its own end (keyed by
 * its token), so a lease left out of the rounds (one whose release failed)
 * still runs out, as before. Callers hold the leases' lock: a heartbeat and a
 * takeover are never interleaved.
 */
export class HolderHeartbeats {
  readonly dir: string;

  constructor(leasesDir: string) {
    this.dir = join(leasesDir, "holders");
  }

  /** The ends `holderId`'s heartbeats gave its leases (ms since the epoch), by token; none when it has no file. */
  endsOf(holderId: string): Map<string, number> {
    const beat = this.#read(holderId);
    return new Map((beat?.leases ?? []).map((lease) => [lease.token, Date.parse(lease.leaseUntilUtc)]));
  }

  /**
   * Records the renewal of `renewed` (one holder's leases, with their new ends)
   * durably before returning; the holder's earlier entries that have not run
   * out by `now` and are not `dropped` (found lost) are kept.
   */
  async beat(holder: LeaseHolder, renewed: readonly TeammateLease[], dropped: ReadonlySet<string>, now: number): Promise<void> {
    const fresh = new Set(renewed.map((lease) => lease.token));
    const kept = (this.#read(holder.id)?.leases ?? []).filter(
      (lease) => !fresh.has(lease.token) && !dropped.has(lease.token) && Date.parse(lease.leaseUntilUtc) > now,
    );
    const beat: HolderHeartbeat = {
      holder,
      leases: [...renewed.map(({ name, token, leaseUntilUtc }) => ({ name, token, leaseUntilUtc })), ...kept],
    };
    ensureDir(this.dir);
    await writeFileAtomicOffLoop(this.#file(holder.id), `${JSON.stringify(HolderHeartbeat.parse(beat))}\n`);
  }

  /**
   * Removes the files of holders that hold no lease file now (gone after
   * giving up their last lease, or killed and taken over), and the temp files
   * of heartbeats killed before their rename (every heartbeat writes under the
   * lock the caller holds, so none is under way). Removing one changes no
   * lease's liveness, so it needs no fsync: one back after a crash is as harmless.
   */
  sweep(holding: ReadonlySet<string>): void {
    for (const file of namesIn(this.dir)) {
      if (file.startsWith(".") && file.endsWith(".tmp")) unlinkQuietly(join(this.dir, file));
      if (!file.endsWith(".json")) continue;
      let id: string;
      try {
        id = decodeURIComponent(file.slice(0, -".json".length));
      } catch {
        continue;
      }
      if (!holding.has(id)) unlinkQuietly(join(this.dir, file));
    }
  }

  #read(holderId: string): HolderHeartbeat | undefined {
    const beat = readStateFile(this.#file(holderId), HolderHeartbeat);
    // The id is in the file too: a file name two ids could share never lends one the other's heartbeats.
    return beat?.holder.id === holderId ? beat : undefined;
  }

  #file(holderId: string): string {
    return join(this.dir, `${encodeURIComponent(holderId)}.json`);
  }
}
