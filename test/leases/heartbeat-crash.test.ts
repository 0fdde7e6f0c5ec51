// A holder killed with -9 at any point of its heartbeat rounds (one write of
// its holder file each): its leases stay readable and live until the last
// round's end, never half-renewed, and then every one of them goes to the next
// holder with a fresh token. Real processes, real kills, the real clock.
import { expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { FileTeammateLeases } from "../../src/leases/file-leases.ts";
import { tempDir } from "../support/temp-dir.ts";
import { remoteHolder } from "./lease-contract.ts";

const COUNT = 8;
const TTL_MS = 1_500;

test("a holder killed mid-round keeps all its leases until their end, then loses all of them to the next holder", async () => {
  const script = join(import.meta.dir, "..", "fixtures", "beat-leases.ts");
  for (let round = 0; round < 4; round++) {
    const session = tempDir("agent-lease-crash-");
    const child = Bun.spawn([process.execPath, script, session, `dying-${round}`, String(COUNT), String(TTL_MS)], { stdout: "pipe", stderr: "pipe" });
    const reader = child.stdout.getReader();
    const decoder = new TextDecoder();
    let said = "";
    // Its first round done (a loaded machine may take longer than any fixed wait to get there)…
    while (!said.includes("beating\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the holder exited before its first heartbeat: ${said}${await new Response(child.stderr).text()}`);
      said += decoder.decode(value, { stream: true });
    }
    expect(said).toBe("held\nbeating\n");
    // …then some rounds more, at a different point of one each time.
    await Bun.sleep(20 + round * 37);
    child.kill("SIGKILL");
    await child.exited;
    const leases = new FileTeammateLeases(session);
    const killedAt = Date.now();
    const live = await leases.live();
    expect(live.map((lease) => lease.holder.id)).toEqual(Array.from({ length: COUNT }, () => `dying-${round}`));
    // All renewed by the same round (the one file), so they end together, within a ttl of the kill.
    const ends = new Set(live.map((lease) => lease.leaseUntilUtc));
    expect(ends.size).toBe(1);
    const end = Date.parse([...ends][0]!);
    expect(end).toBeGreaterThan(killedAt);
    expect(end).toBeLessThanOrEqual(killedAt + TTL_MS);
    if (Date.now() < end - 50) expect(await leases.acquire("mate-0", remoteHolder("next"), TTL_MS)).toBeNull();
    await Bun.sleep(end - Date.now() + 10);
    const taken = await Promise.all(Array.from({ length: COUNT }, (_, i) => leases.acquire(`mate-${i}`, remoteHolder("next"), TTL_MS)));
    expect(taken.map((lease) => lease?.holder.id)).toEqual(Array.from({ length: COUNT }, () => "next"));
    for (const lease of taken) expect(live.map((old) => old.token)).not.toContain(lease!.token);
    // The killed holder's file goes with the next change that gives a lease up, and any temp file it left.
    await leases.release(taken[0]!);
    expect(readdirSync(join(leases.dir, "holders"))).toEqual([]);
  }
}, 60_000);
