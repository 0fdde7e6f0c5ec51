import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CorruptStateFileError } from "../../src/core/errors.ts";
import { InvalidCronError } from "../../src/cron/cron-expression.ts";
import { FileCronStore } from "../../src/cron/cron-store.ts";
import { MINUTE, cronWorld, request } from "./helpers.ts";

/** Takes the queued events and acknowledges each through its owner, as runEvents does after the history write. */
async function ackAll(world: ReturnType<typeof cronWorld>) {
  const events = [];
  for (let entry = world.inbox.take(); entry; entry = world.inbox.take()) {
    await entry.owner.acknowledge(entry.event);
    events.push(entry.event);
  }
  return events;
}

describe("CronRuntime", () => {
  test("a due job is published once, with a stable id, and not again while it waits for its ack", async () => {
    const w = cronWorld();
    const job = await w.cron.schedule(request("*/15 * * * *", true));
    expect(job.nextRunAtUtc).toBe("2026-01-01T00:15:00.000Z");
    await w.cron.start();
    await w.timer.advance(14 * MINUTE);
    expect(w.inbox.size).toBe(0);
    expect(w.cron.hasDueSoon()).toBe(false);
    expect(w.cron.hasDueSoon(MINUTE)).toBe(true);
    await w.timer.advance(MINUTE);
    expect(w.inbox.size).toBe(1);
    // Waiting in the inbox (the Lead is busy): later slots do not pile up behind it.
    await w.timer.advance(40 * MINUTE);
    expect(w.inbox.size).toBe(1);
    expect(w.cron.nextRunAt()).toBeUndefined();
    const entry = w.inbox.take()!;
    // Taken and being written to the history, not acknowledged yet: still not published again.
    await w.timer.advance(MINUTE);
    expect(w.inbox.size).toBe(0);
    expect(entry.owner).toBe(w.cron);
    expect(entry.event).toEqual({
      eventId: `cron:${job.id}@2026-01-01T00:15:00.000Z`,
      source: "cron",
      sender: "cron",
      kind: "cron",
      content: `check the build\n\n[scheduled job ${job.id} (recurring, cron "*/15 * * * *") fired for 2026-01-01T00:15:00.000Z]`,
      createdAtUtc: "2026-01-01T00:15:00.000Z",
    });
    await entry.owner.acknowledge(entry.event);
    // Recorded at 00:56: the next run is the first slot after that, not the missed 00:30 and 00:45.
    expect((await w.store.list())).toEqual([{ ...job, lastRunAtUtc: "2026-01-01T00:56:00.000Z", nextRunAtUtc: "2026-01-01T01:00:00.000Z" }]);
    // An ack that comes again (a retry) changes nothing.
    await entry.owner.acknowledge(entry.event);
    expect((await w.store.list())[0]!.nextRunAtUtc).toBe("2026-01-01T01:00:00.000Z");
    await w.timer.advance(4 * MINUTE);
    expect(w.inbox.size).toBe(1);
    expect(w.failures).toEqual([]);
  });

  test("a one-shot job is removed once its run is acknowledged", async () => {
    const w = cronWorld();
    await w.cron.start();
    await w.cron.schedule(request("30 0 * * *", false));
    await w.timer.advance(30 * MINUTE);
    const [event] = await ackAll(w);
    expect(event?.content).toContain("(one-shot, cron \"30 0 * * *\")");
    expect((await w.store.list())).toEqual([]);
    expect((await w.store.readDurable())).toEqual([]);
    await w.timer.advance(24 * 60 * MINUTE);
    expect(w.inbox.size).toBe(0);
  });

  test("durable jobs survive a restart; jobs that are not durable do not", async () => {
    const first = cronWorld();
    const durable = await first.cron.schedule(request("0 * * * *", true, true, "durable"));
    await first.cron.schedule(request("0 * * * *", true, false, "in memory"));
    expect(first.cron.list().map((job) => job.prompt).sort()).toEqual(["durable", "in memory"]);
    expect((await first.store.readDurable())).toEqual([durable]);
    await first.close();
    const second = cronWorld(first.stateDir);
    await second.cron.start();
    expect(second.cron.list()).toEqual([durable]);
  });

  test("a run fired and acknowledged before a restart is not fired again; one never acknowledged is fired again, same id", async () => {
    const first = cronWorld();
    await first.cron.schedule(request("*/10 * * * *", true));
    const once = await first.cron.schedule(request("5 0 * * *", false, true, "once"));
    await first.cron.start();
    await first.timer.advance(10 * MINUTE);
    const pending = first.inbox.take()!;
    const acked = first.inbox.take()!;
    expect(acked.event.content).toContain("check the build");
    await acked.owner.acknowledge(acked.event);
    await first.close(); // dies with the one-shot's run never acknowledged

    const second = cronWorld(first.stateDir, first.clock);
    await second.cron.start();
    await second.timer.settled();
    expect(second.inbox.take()!.event).toEqual(pending.event);
    expect(second.inbox.size).toBe(0);
    expect((await second.store.list()).find((job) => job.id === once.id)).toBeDefined();
  });

  test("slots missed while no process ran fire once at start", async () => {
    const first = cronWorld();
    const job = await first.cron.schedule(request("*/15 * * * *", true));
    await first.close();
    first.clock.advance(3 * 60 * MINUTE + 7 * MINUTE); // 12 slots missed
    const second = cronWorld(first.stateDir, first.clock);
    await second.cron.start();
    await second.timer.settled();
    const events = await ackAll(second);
    expect(events.map((event) => event.eventId)).toEqual([`cron:${job.id}@2026-01-01T00:15:00.000Z`]);
    expect((await second.store.list())[0]).toMatchObject({ lastRunAtUtc: "2026-01-01T03:07:00.000Z", nextRunAtUtc: "2026-01-01T03:15:00.000Z" });
  });

  test("a job cancelled from another process does not fire, and a late ack for it is harmless", async () => {
    const w = cronWorld();
    const [a, b] = [await w.cron.schedule(request("0 1 * * *", true)), await w.cron.schedule(request("0 1 * * *", true))];
    await w.cron.start();
    await new FileCronStore(w.stateDir).remove(a.id); // `agent cron cancel`
    await w.timer.advance(60 * MINUTE);
    const events = await ackAll(w);
    expect(events.map((event) => event.eventId)).toEqual([`cron:${b.id}@2026-01-01T01:00:00.000Z`]);
    await new FileCronStore(w.stateDir).remove(b.id);
    await w.cron.acknowledge(events[0]!);
    expect((await w.store.list())).toEqual([]);
  });

  test("a bad expression is refused before anything is written; close stops the loop and further scheduling", async () => {
    const w = cronWorld();
    await expect(w.cron.schedule(request("* * * * * *", true))).rejects.toBeInstanceOf(InvalidCronError);
    expect(existsSync(join(w.stateDir, "cron.json"))).toBe(false);
    await w.cron.start();
    await w.timer.settled();
    expect(w.supervisor.running).toBe(1);
    await w.cron.close();
    expect(w.supervisor.running).toBe(0);
    await expect(w.cron.schedule(request("* * * * *", true))).rejects.toThrow(/closed/);
  });

  test("a corrupt cron.json fails the start with the file named, and is left as it is", async () => {
    const w = cronWorld();
    mkdirSync(w.stateDir, { recursive: true });
    writeFileSync(join(w.stateDir, "cron.json"), '{"version":1,"jobs":[{"id":"x"}]}');
    await expect(w.cron.start()).rejects.toThrow(CorruptStateFileError);
    await expect(w.cron.start()).rejects.toThrow(/cron\.json: jobs\.0\.id/);
    expect(await Bun.file(join(w.stateDir, "cron.json")).text()).toBe('{"version":1,"jobs":[{"id":"x"}]}');
  });
});

describe("CronRuntime when cron.json breaks while it runs", () => {
  test("the failure is reported once, the loop waits its full period instead of spinning, and recovers when the file is fixed", async () => {
    const w = cronWorld();
    await w.cron.schedule(request("*/15 * * * *", true));
    await w.cron.start();
    const good = await Bun.file(join(w.stateDir, "cron.json")).text();
    writeFileSync(join(w.stateDir, "cron.json"), "{ broken");
    await w.timer.advance(15 * MINUTE);
    await w.timer.advance(MINUTE);
    expect(w.failures).toHaveLength(1);
    expect(w.failures[0]).toMatch(/corrupt state file .*cron\.json: not valid JSON/);
    expect(w.timer.requested.slice(-2)).toEqual([MINUTE, MINUTE]);
    expect(w.inbox.size).toBe(0);
    writeFileSync(join(w.stateDir, "cron.json"), good);
    await w.timer.advance(MINUTE);
    expect(w.inbox.size).toBe(1);
  });
});
