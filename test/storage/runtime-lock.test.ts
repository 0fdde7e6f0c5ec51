import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ManualClock } from "../../src/core/clock.ts";
import { LockError, StateDirBusyError } from "../../src/core/errors.ts";
import { RuntimeLock, UNKNOWN_OWNER, readRuntimeOwner } from "../../src/storage/runtime-lock.ts";
import { tempDir } from "../support/temp-dir.ts";

const HOLDER = join(import.meta.dir, "../fixtures/runtime-lock-holder.ts");
const children: Bun.Subprocess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) {
    child.kill("SIGKILL");
    await child.exited;
  }
});

/** Starts a child runtime holding the lock; resolves once it printed whether it got it. */
async function startHolder(stateDir: string, { holdMs = -1, childCommand = [] as string[] } = {}) {
  const child = Bun.spawn([process.execPath, HOLDER, stateDir, String(holdMs), ...childCommand], {
    stdout: "pipe",
    stderr: "inherit",
  });
  children.push(child);
  const reader = child.stdout.getReader();
  let text = "";
  // With a child to start, its {"child":pid} line too: killed before that, the holder
  // may be mid-spawn, and the forked child holds the lock's descriptor until its exec.
  const lines = childCommand.length > 0 ? 2 : 1;
  while (text.split("\n").length <= lines && !text.includes('"busy"')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`holder exited before reporting (code ${await child.exited})`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const report = JSON.parse(text.slice(0, text.indexOf("\n"))) as { locked?: number; busy?: string };
  return { child, report };
}

async function busyError(stateDir: string): Promise<StateDirBusyError> {
  const error = await RuntimeLock.acquire(stateDir).then(
    async (lock) => {
      await lock.release();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StateDirBusyError);
  return error as StateDirBusyError;
}

describe("RuntimeLock", () => {
  test("acquire writes the owner record; release is idempotent; the dir can be taken again", async () => {
    const stateDir = join(tempDir(), "state");
    const clock = new ManualClock("2026-03-01T12:00:00.000Z");
    const lock = await RuntimeLock.acquire(stateDir, { clock });
    expect(lock.owner).toEqual({ pid: process.pid, host: hostname(), startedAtUtc: "2026-03-01T12:00:00.000Z" });
    const record = JSON.parse(readFileSync(join(stateDir, "runtime.owner.json"), "utf8"));
    expect(record).toEqual(lock.owner);
    expect(await readRuntimeOwner(stateDir)).toEqual(lock.owner);
    lock.assertHeld();

    await lock.release();
    await lock.release();
    expect(existsSync(join(stateDir, "runtime.lock"))).toBe(false);
    expect(await readRuntimeOwner(stateDir)).toBeNull();
    expect(() => lock.assertHeld()).toThrow(LockError);

    {
      await using again = await RuntimeLock.acquire(stateDir);
      again.assertHeld();
    }
    expect(existsSync(join(stateDir, "runtime.lock"))).toBe(false);
  });

  test("a second runtime gets StateDirBusyError naming the live owner's pid and host", async () => {
    const stateDir = tempDir();
    const { child, report } = await startHolder(stateDir);
    expect(report.locked).toBe(child.pid);

    const error = await busyError(stateDir);
    expect(error.owner).toMatchObject({ pid: child.pid, host: hostname() });
    expect(error.message).toContain(`is busy, owned by pid ${child.pid} on host ${hostname()}; wait for it to finish`);
    expect(await readRuntimeOwner(stateDir)).toMatchObject({ pid: child.pid, host: hostname() });

    // And the other way round, once the child is gone: a child cannot take it from this process.
    child.kill("SIGKILL");
    await child.exited;
    await using _us = await RuntimeLock.acquire(stateDir);
    const other = await startHolder(stateDir);
    expect(other.report.busy).toContain(`owned by pid ${process.pid} on host ${hostname()}`);
    expect(await other.child.exited).toBe(3);
  });

  test("runtimes racing to break a dead owner's lock: exactly one gets it", async () => {
    const stateDir = tempDir();
    const { child } = await startHolder(stateDir);
    child.kill("SIGKILL");
    await child.exited;
    const racers = await Promise.all([1, 2, 3, 4, 5].map(() => startHolder(stateDir)));
    const winners = racers.filter((r) => r.report.locked !== undefined);
    expect(winners).toHaveLength(1);
    const winner = winners[0]!.child.pid;
    for (const loser of racers.filter((r) => r.report.busy !== undefined)) {
      expect(loser.report.busy).toContain(`owned by pid ${winner} `);
    }
    expect(await readRuntimeOwner(stateDir)).toMatchObject({ pid: winner });
  });

  test("waitMs waits for the owner to release", async () => {
    const stateDir = tempDir();
    const { child } = await startHolder(stateDir, { holdMs: 1_000 });
    const started = performance.now();
    const lock = await RuntimeLock.acquire(stateDir, { waitMs: 15_000 });
    expect(performance.now() - started).toBeGreaterThan(500);
    expect(await child.exited).toBe(0); // the holder still held it when it released: nothing broke it
    await lock.release();
  });

  test("a runtime killed with SIGKILL frees the dir at once: the kernel drops its flock", async () => {
    const stateDir = tempDir();
    const { child } = await startHolder(stateDir);
    expect(await readRuntimeOwner(stateDir)).toMatchObject({ pid: child.pid });
    child.kill("SIGKILL");
    await child.exited; // reaped: a zombie still answers kill(pid, 0)

    const killedAt = performance.now();
    expect(existsSync(join(stateDir, "runtime.lock"))).toBe(true); // left behind, but nobody holds it
    expect(await readRuntimeOwner(stateDir)).toBeNull();
    const lock = await RuntimeLock.acquire(stateDir);
    expect(performance.now() - killedAt).toBeLessThan(5_000);
    expect(lock.owner.pid).toBe(process.pid);
    expect(await readRuntimeOwner(stateDir)).toMatchObject({ pid: process.pid });
    await lock.release();
  });

  test.if(process.platform === "linux")("an owner killed but never reaped (a zombie) is dead: the next runtime takes the dir at once", async () => {
    const stateDir = tempDir();
    // `exec sleep` replaces the shell by a parent that never waits for its child:
    // the holder, once killed, stays a zombie, as under a pid 1 that does not reap.
    const parent = Bun.spawn(["sh", "-c", `"$0" "$1" "$2" -1 & exec sleep 60`, process.execPath, HOLDER, stateDir], {
      stdout: "pipe",
      stderr: "inherit",
    });
    children.push(parent);
    const reader = parent.stdout.getReader();
    let text = "";
    while (!text.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("holder exited before reporting");
      text += new TextDecoder().decode(value);
    }
    const holder = (JSON.parse(text.slice(0, text.indexOf("\n"))) as { locked: number }).locked;
    process.kill(holder, "SIGKILL");
    const procState = () => readFileSync(`/proc/${holder}/stat`, "utf8").split(") ")[1]?.[0];
    while (procState() !== "Z") await sleep(10);
    process.kill(holder, 0); // still "exists" to kill(): the case this guards

    // The leader shows Z as soon as it exits, while the process's other threads may
    // still be closing its files (and so its flock) for a few milliseconds.
    const deadline = Date.now() + 2_000;
    while ((await readRuntimeOwner(stateDir)) !== null && Date.now() < deadline) await sleep(10);
    expect(await readRuntimeOwner(stateDir)).toBeNull();
    const lock = await RuntimeLock.acquire(stateDir);
    expect(lock.owner.pid).toBe(process.pid);
    await lock.release();
  });

  test("a child the owner started does not inherit the lock: killing the owner frees the dir while the child lives", async () => {
    const stateDir = tempDir();
    const { child } = await startHolder(stateDir, { childCommand: ["sleep", "30"] });
    child.kill("SIGKILL");
    await child.exited;
    expect(await readRuntimeOwner(stateDir)).toBeNull();
    const lock = await RuntimeLock.acquire(stateDir);
    expect(lock.owner.pid).toBe(process.pid);
    await lock.release();
  });

  test.if(process.platform === "linux")("a record naming a pid that does not hold the lock is a previous owner's: the owner is unknown", async () => {
    const stateDir = tempDir();
    const { child } = await startHolder(stateDir);
    writeFileSync(join(stateDir, "runtime.owner.json"), JSON.stringify({ pid: process.pid, host: hostname(), startedAtUtc: "2026-03-01T12:00:00.000Z" }));
    expect(await readRuntimeOwner(stateDir)).toEqual(UNKNOWN_OWNER);
    child.kill("SIGKILL");
    await child.exited;
    expect(await readRuntimeOwner(stateDir)).toBeNull();
  });

  test("a corrupt owner record means 'owner unknown' while the lock is held, and nothing once it is free", async () => {
    const stateDir = tempDir();
    const lock = await RuntimeLock.acquire(stateDir);
    writeFileSync(join(stateDir, "runtime.owner.json"), "{not json");
    expect(await readRuntimeOwner(stateDir)).toEqual(UNKNOWN_OWNER);
    const error = await busyError(stateDir);
    expect(error.owner).toBeUndefined();
    expect(error.message).toContain("owned by another runtime");
    await lock.release();
    writeFileSync(join(stateDir, "runtime.lock"), "");
    writeFileSync(join(stateDir, "runtime.owner.json"), JSON.stringify({ pid: "x" }));
    expect(await readRuntimeOwner(stateDir)).toBeNull();
    const taken = await RuntimeLock.acquire(stateDir);
    expect(await readRuntimeOwner(stateDir)).toEqual(taken.owner);
    await taken.release();
  });

  test("an older agent's empty lock directory is replaced by the lock file", async () => {
    const stateDir = tempDir();
    mkdirSync(join(stateDir, "runtime.lock"));
    expect(await readRuntimeOwner(stateDir)).toBeNull();
    const lock = await RuntimeLock.acquire(stateDir);
    expect(statSync(join(stateDir, "runtime.lock")).isFile()).toBe(true);
    await lock.release();
  });

  test("a lost lock calls onLost and makes assertHeld throw instead of crashing the process", async () => {
    const stateDir = tempDir();
    const lost: Error[] = [];
    const lock = await RuntimeLock.acquire(stateDir, { onLost: (e) => lost.push(e) });
    unlinkSync(join(stateDir, "runtime.lock"));
    for (let i = 0; i < 50 && lost.length === 0; i += 1) await sleep(100);
    expect(lost).toHaveLength(1);
    expect(() => lock.assertHeld()).toThrow(LockError);
    await lock.release(); // does not throw, and leaves whatever is there now alone
  });
});
