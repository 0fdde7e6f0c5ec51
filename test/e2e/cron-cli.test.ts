import { beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "../../src/core/clock.ts";
import { uuidV7Source } from "../../src/core/ids.ts";
import { CronRuntime } from "../../src/cron/cron-runtime.ts";
import { FileCronStore } from "../../src/cron/cron-store.ts";
import { EventInbox } from "../../src/runtime/event-inbox.ts";
import { JobSupervisor } from "../../src/runtime/job-supervisor.ts";
import { ensureBinary } from "./agent-binary.ts";
import { expectError, expectOk, setup } from "./fixture.ts";

// `agent cron list|cancel` on the compiled binary, over jobs a runtime scheduled.

beforeAll(() => {
  ensureBinary();
}, 120_000);

/** Schedules jobs as the Lead's schedule_cron would, on `stateDir`. */
async function schedule(stateDir: string, ...requests: { cron: string; prompt: string; recurring: boolean; durable: boolean }[]) {
  const cron = new CronRuntime({
    inbox: new EventInbox(),
    supervisor: new JobSupervisor(),
    store: new FileCronStore(stateDir),
    clock: new ManualClock("2026-01-01T00:00:00.000Z"),
    ids: uuidV7Source,
    timeZone: "UTC",
  });
  const jobs = [];
  for (const request of requests) jobs.push(await cron.schedule(request));
  await cron.close();
  return jobs;
}

describe("agent cron", () => {
  test("list shows the durable jobs, soonest first, as text and JSON", async () => {
    const { agent, stateDir, sessionId } = setup();
    expectOk(await agent("cron", "list"));
    expect((await agent("cron", "list")).stdout).toBe(`no durable cron jobs in session ${sessionId}\n`);
    const [daily, hourly] = await schedule(
      stateDir,
      { cron: "0 9 * * *", prompt: "summarise CI\nwith details", recurring: true, durable: true },
      { cron: "0 * * * *", prompt: "poll the queue", recurring: false, durable: true },
      { cron: "*/5 * * * *", prompt: "not durable", recurring: true, durable: false },
    );
    const json = await agent("cron", "list", "--json");
    expectOk(json);
    expect(JSON.parse(json.stdout)).toEqual({ session_id: sessionId, jobs: [hourly, daily] });
    const text = await agent("cron", "list");
    expectOk(text);
    const [session, ...lines] = text.stdout.trimEnd().split("\n");
    expect(session).toBe(`session ${sessionId}`);
    expect(lines[0]).toMatch(/^ID +CRON +REPEAT +NEXT RUN \(UTC\) +LAST RUN \(UTC\) +PROMPT$/);
    expect(lines[1]).toMatch(new RegExp(`^${hourly!.id} +0 \\* \\* \\* \\* +once +2026-01-01T01:00:00.000Z +- +poll the queue$`));
    expect(lines[2]).toMatch(new RegExp(`^${daily!.id} +0 9 \\* \\* \\* +recurring +2026-01-01T09:00:00.000Z +- +summarise CI…$`));
    expect(lines).toHaveLength(3);
  });

  test("cancel removes one job; an unknown id exits 6, a malformed one exits 2", async () => {
    const { agent, stateDir } = setup();
    const unknown = "0190b8a6-7c1e-7d3a-9f00-3b2a1c4d5e6f";
    expectError(await agent("cron", "cancel", unknown), 6, /no cron job 0190b8a6-7c1e-7d3a-9f00-3b2a1c4d5e6f; run `agent cron list`/);
    const [keep, drop] = await schedule(
      stateDir,
      { cron: "0 9 * * *", prompt: "keep", recurring: true, durable: true },
      { cron: "0 10 * * *", prompt: "drop", recurring: true, durable: true },
    );
    const cancelled = await agent("cron", "cancel", drop!.id, "--json");
    expectOk(cancelled);
    expect(JSON.parse(cancelled.stdout)).toEqual({ cancelled: drop });
    expect(await new FileCronStore(stateDir).readDurable()).toEqual([keep!]);
    expectError(await agent("cron", "cancel", drop!.id), 6, /no cron job/);
    expectError(await agent("cron", "cancel", "not-an-id"), 2, /invalid cron job id "not-an-id": expected a canonical lowercase UUID/);
    const text = await agent("cron", "cancel", keep!.id);
    expectOk(text);
    expect(text.stdout).toBe(`cancelled cron job ${keep!.id} (0 9 * * *)\n`);
  });

  test("a corrupt cron.json is reported (exit 5) and left in place", async () => {
    const { agent, stateDir } = setup();
    mkdirSync(stateDir, { recursive: true });
    writeFileSync(join(stateDir, "cron.json"), "{ not json");
    expectError(await agent("cron", "list"), 5, /corrupt state file .*cron\.json: not valid JSON/);
    expectError(await agent("cron", "cancel", "0190b8a6-7c1e-7d3a-9f00-3b2a1c4d5e6f"), 5, /cron\.json/);
    expect(await Bun.file(join(stateDir, "cron.json")).text()).toBe("{ not json");
  });
});
