import { describe, expect, test } from "bun:test";
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CorruptStateFileError } from "../../src/core/errors.ts";
import { type CronJob, CronJobNotFoundError, CronStore, FileCronStore, InvalidCronJobIdError, assertCronJobId } from "../../src/cron/cron-store.ts";
import { backendRows } from "../support/store-backends.ts";
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

describe.each(backendRows())("CronStore (%s store)", (_name, backend) => {

  test("durable jobs are stored (validated); the others stay in memory", async () => {
    const session = await backend.session();
    const store = new CronStore(session.open().cron);
    expect(await store.list()).toEqual([]);
    await store.add(job(1));
    await store.add(job(2, { durable: false }));
    await store.add(job(3));
    expect(await store.readDurable()).toEqual([job(1), job(3)]);
    // Soonest first, durable or not; another store (another process) sees only the durable ones.
    expect((await store.list()).map((j) => j.prompt)).toEqual(["job 3", "job 2", "job 1"]);
    expect((await new CronStore(session.open().cron).list()).map((j) => j.prompt)).toEqual(["job 3", "job 1"]);
    await expect(store.add(job(4, { cron: "* * * * * *" }))).rejects.toThrow(/5-field cron expression/);
    expect(await store.readDurable()).toEqual([job(1), job(3)]);
  });

  test("concurrent changes from two stores (a runtime's ack, an operator's cancel) do not undo each other", async () => {
    const session = await backend.session();
    const runtime = new CronStore(session.open().cron);
    const operator = new CronStore(session.open().cron);
    for (const n of [1, 2, 3]) await runtime.add(job(n));
    await Promise.all([
      runtime.update(job(1).id, (j) => ({ ...j, lastRunAtUtc: "2026-01-01T09:00:00.000Z" })),
      operator.remove(job(2).id),
      runtime.update(job(3).id, () => null),
    ]);
    expect(await operator.readDurable()).toEqual([{ ...job(1), lastRunAtUtc: "2026-01-01T09:00:00.000Z" }]);
    expect(await runtime.update(job(2).id, (j) => j)).toBeUndefined();
    await expect(operator.remove(job(2).id)).rejects.toBeInstanceOf(CronJobNotFoundError);
  });
});

describe("FileCronStore", () => {
  test("durable jobs go to cron.json, 0600, oldest first", async () => {
    const stateDir = join(tempDir("agent-cron-store-"), "state");
    const store = new FileCronStore(stateDir);
    await store.add(job(3));
    await store.add(job(2, { durable: false }));
    await store.add(job(1));
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await Bun.file(store.path).text())).toEqual({ version: 1, jobs: [job(1), job(3)] });
  });

  test("a file that is not a valid cron file is corrupt state, never read as empty", async () => {
    const stateDir = tempDir("agent-cron-store-");
    const store = new FileCronStore(stateDir);
    for (const [content, reason] of [
      ["[]", /expected object/],
      [JSON.stringify({ version: 1, jobs: [{ ...job(1), durable: false }] }), /jobs\.0\.durable: only durable jobs are stored/],
      [JSON.stringify({ version: 1, jobs: [{ ...job(1), extra: 1 }] }), /Unrecognized key/],
      [JSON.stringify({ version: 1, jobs: [{ ...job(1), nextRunAtUtc: "tomorrow" }] }), /jobs\.0\.nextRunAtUtc/],
    ] as const) {
      writeFileSync(store.path, content);
      await expect(store.list()).rejects.toThrow(CorruptStateFileError);
      await expect(store.list()).rejects.toThrow(reason);
    }
  });

  test("job ids are canonical UUIDs", () => {
    expect(assertCronJobId(job(1).id)).toBe(job(1).id);
    expect(() => assertCronJobId("../cron")).toThrow(InvalidCronJobIdError);
  });
});
