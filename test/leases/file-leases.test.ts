import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "../../src/core/clock.ts";
import { FileTeammateLeases } from "../../src/leases/file-leases.ts";
import { TeammateLease, thisHolder } from "../../src/leases/teammate-leases.ts";
import { tempDir } from "../support/temp-dir.ts";
import { leaseContract, remoteHolder } from "./lease-contract.ts";

/** Every file under `dir` but the lock and temp files (dot files), as inode and mtime: a rewrite shows as a change. */
function filesUnder(dir: string, into = new Map<string, string>()): Map<string, string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) filesUnder(path, into);
    else {
      const stat = statSync(path, { bigint: true });
      into.set(path, `${stat.ino}:${stat.mtimeNs}`);
    }
  }
  return into;
}

describe("FileTeammateLeases", () => {
  leaseContract(async (clock) => {
    const leases = new FileTeammateLeases(tempDir("agent-leases-"), { clock });
    return {
      leases,
      countWrites: async () => {
        const before = filesUnder(leases.dir);
        return async () => [...filesUnder(leases.dir)].filter(([path, version]) => before.get(path) !== version).length;
      },
    };
  });
});

describe("FileTeammateLeases across processes", () => {
  test("of eight processes taking one free lease at once, exactly one wins", async () => {
    const session = tempDir("agent-leases-mp-");
    const script = join(import.meta.dir, "..", "fixtures", "take-lease.ts");
    const children = Array.from({ length: 8 }, (_, i) =>
      Bun.spawn([process.execPath, script, session, "alice", `taker-${i}`], { stdout: "pipe", stderr: "pipe" }),
    );
    const outputs = await Promise.all(children.map(async (child) => ({ code: await child.exited, out: (await new Response(child.stdout).text()).trim(), err: await new Response(child.stderr).text() })));
    expect(outputs.filter((output) => output.code !== 0)).toEqual([]);
    const winners = outputs.filter((output) => output.out === "won");
    expect(winners).toHaveLength(1);
    expect(outputs.filter((output) => output.out === "refused")).toHaveLength(7);
  }, 60_000);
});

describe("FileTeammateLeases on disk", () => {
  test("a lease file the previous build wrote (no holder file, renewed in place) holds until its own end, then is taken", async () => {
    const session = tempDir("agent-leases-old-");
    const clock = new ManualClock();
    const leases = new FileTeammateLeases(session, { clock });
    mkdirSync(leases.dir, { recursive: true });
    const old = { name: "alice", holder: remoteHolder("old"), token: crypto.randomUUID(), acquiredAtUtc: clock.now().toISOString(), leaseUntilUtc: new Date(clock.now().getTime() + 5_000).toISOString() };
    writeFileSync(join(leases.dir, "alice.json"), `${JSON.stringify(old)}\n`);
    expect(await leases.live()).toEqual([old]);
    expect(await leases.acquire("alice", remoteHolder("new"), 5_000)).toBeNull();
    clock.advance(5_000);
    expect(await leases.acquire("alice", remoteHolder("new"), 5_000)).toMatchObject({ holder: { id: "new" } });
  });

  test("this build's lease file is refused by the previous build's schema, so that build fails instead of taking a lease it cannot see renewed", async () => {
    const leases = new FileTeammateLeases(tempDir("agent-leases-new-"));
    await leases.acquire("alice", remoteHolder("a"), 5_000);
    expect(TeammateLease.safeParse(JSON.parse(readFileSync(join(leases.dir, "alice.json"), "utf8"))).success).toBe(false);
  });

  test("releases asked for at once (a runtime closing) free every lease, leave one taken over meanwhile to its new holder, and clear the holder's file", async () => {
    const clock = new ManualClock();
    const leases = new FileTeammateLeases(tempDir("agent-leases-release-all-"), { clock });
    const runtime = thisHolder("lead");
    const names = Array.from({ length: 32 }, (_, i) => `worker-${i}`);
    const held = (await Promise.all(names.map((name) => leases.acquire(name, runtime, 5_000)))).map((lease) => lease!);
    await leases.heartbeatAll(held, 5_000);
    // worker-0's lease ran out and another holder took it: its release must not free it.
    clock.advance(10_001);
    const taken = (await leases.acquire("worker-0", remoteHolder("other"), 5_000))!;
    await Promise.all(held.map((lease) => leases.release(lease)));
    expect(readdirSync(leases.dir).filter((name) => !name.startsWith(".")).sort()).toEqual(["holders", "worker-0.json"]);
    expect(await leases.live()).toEqual([taken]);
    // The runtime holds nothing more: its heartbeat file is gone; the other holder never beat.
    expect(readdirSync(join(leases.dir, "holders"))).toEqual([]);
    for (const name of names.slice(1)) expect(await leases.acquire(name, remoteHolder("next"), 5_000)).toMatchObject({ name, holder: { id: "next" } });
  });

  test("heartbeats go to one file per holder, which goes when its holder holds nothing more", async () => {
    const clock = new ManualClock();
    const leases = new FileTeammateLeases(tempDir("agent-leases-holders-"), { clock });
    const holders = join(leases.dir, "holders");
    const worker = thisHolder("worker");
    const a = (await Promise.all(["alice", "bob"].map((name) => leases.acquire(name, worker, 5_000)))).map((lease) => lease!);
    const gone = (await leases.acquire("carol", remoteHolder("gone"), 5_000))!;
    await leases.heartbeatAll(a, 5_000);
    await leases.heartbeatAll([gone], 5_000);
    expect(readdirSync(holders)).toHaveLength(2);
    // "gone" stops; its lease is taken over, and the next change of the leases clears its file.
    clock.advance(5_000);
    const taken = (await leases.acquire("carol", remoteHolder("b"), 5_000))!;
    await leases.release(a[0]!);
    expect(readdirSync(holders)).toEqual([`${encodeURIComponent(a[1]!.holder.id)}.json`]);
    await leases.release(a[1]!);
    await leases.release(taken);
    expect(readdirSync(holders)).toEqual([]);
    expect(readdirSync(leases.dir).filter((name) => !name.startsWith("."))).toEqual(["holders"]);
  });
});
