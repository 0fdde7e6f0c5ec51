import { describe, expect, test } from "bun:test";
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CorruptStateFileError } from "../../src/core/errors.ts";
import { type CronJob, CronJobNotFoundError, CronStore, InvalidCronJobIdError, assertCronJobId } from "../../src/cron/cron-store.ts";
import { tempDir } from "../support/temp-dir.ts";

const job = (n: number, overrides: Partial<CronJob> = {}): CronJob => ({
  id: `0190b8a6-7c1e-7d3a-9f00-00000000000${n}`,
  cron: "0 * * * *",
  prompt: `job ${n}`,
  recurring: true,
  durable: true,
  createdAtUtc: `2026-01-01T00:00:0${n}.000Z`,
  nextRunAtUtc: `2026-01-01T0${9 - n}:00:00.000Z`,
  ...overrides,
});

describe("CronStore", () => {
  test("durable jobs go to cron.json (0600, validated); the others stay in memory", async () => {
    const stateDir = join(tempDir("agent-cron-store-"), "state");
    const store = new CronStore(stateDir);
    expect(store.list()).toEqual([]);
    await store.add(job(1));
    await store.add(job(2, { durable: false }));
    await store.add(job(3));
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await Bun.file(store.path).text())).toEqual({ version: 1, jobs: [job(1), job(3)] });
    // Soonest first, durable or not; another store (another process) sees only the durable ones.
    expect(store.list().map((j) => j.prompt)).toEqual(["job 3", "job 2", "job 1"]);
    expect(new CronStore(stateDir).list().map((j) => j.prompt)).toEqual(["job 3", "job 1"]);
    await expect(store.add(job(4, { cron: "* * * * * *" }))).rejects.toThrow(/5-field cron expression/);
  });

  test("concurrent changes from two stores (a runtime's ack, an operator's cancel) do not undo each other", async () => {
    const stateDir = join(tempDir("agent-cron-store-"), "state");
    const runtime = new CronStore(stateDir);
    const operator = new CronStore(stateDir);
    for (const n of [1, 2, 3]) await runtime.add(job(n));
    await Promise.all([
      runtime.update(job(1).id, (j) => ({ ...j, lastRunAtUtc: "2026-01-01T09:00:00.000Z" })),
      operator.remove(job(2).id),
      runtime.update(job(3).id, () => null),
    ]);
    expect(operator.readDurable()).toEqual([{ ...job(1), lastRunAtUtc: "2026-01-01T09:00:00.000Z" }]);
    expect(await runtime.update(job(2).id, (j) => j)).toBeUndefined();
    await expect(operator.remove(job(2).id)).rejects.toBeInstanceOf(CronJobNotFoundError);
  });

  test("a file that is not a valid cron file is corrupt state, never read as empty", () => {
    const stateDir = tempDir("agent-cron-store-");
    const store = new CronStore(stateDir);
    for (const [content, reason] of [
      ["[]", /expected object/],
      [JSON.stringify({ version: 1, jobs: [{ ...job(1), durable: false }] }), /jobs\.0\.durable: only durable jobs are stored/],
      [JSON.stringify({ version: 1, jobs: [{ ...job(1), extra: 1 }] }), /Unrecognized key/],
      [JSON.stringify({ version: 1, jobs: [{ ...job(1), nextRunAtUtc: "tomorrow" }] }), /jobs\.0\.nextRunAtUtc/],
    ] as const) {
      writeFileSync(store.path, content);
      expect(() => store.list()).toThrow(CorruptStateFileError);
      expect(() => store.list()).toThrow(reason);
    }
  });

  test("job ids are canonical UUIDs", () => {
    expect(assertCronJobId(job(1).id)).toBe(job(1).id);
    expect(() => assertCronJobId("../cron")).toThrow(InvalidCronJobIdError);
  });
});
