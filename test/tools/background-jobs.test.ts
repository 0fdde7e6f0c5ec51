import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { systemClock } from "../../src/core/clock.ts";
import { SequentialIds } from "../../src/core/ids.ts";
import { ShellHooks } from "../../src/hooks/hook-runner.ts";
import { OpenAIModelClient } from "../../src/model/openai-client.ts";
import { PermissionPolicy } from "../../src/permissions/policy.ts";
import { AgentRunner } from "../../src/runtime/agent-runner.ts";
import { EventInbox } from "../../src/runtime/event-inbox.ts";
import { openFileHistory } from "../../src/runtime/file-history.ts";
import { JobSupervisor } from "../../src/runtime/job-supervisor.ts";
import { BackgroundJobs } from "../../src/tools/background-jobs.ts";
import { ToolPipeline } from "../../src/tools/pipeline.ts";
import { toolSpecs } from "../../src/tools/schemas.ts";
import { shellTool } from "../../src/tools/shell.ts";
import { fakeRetryDeps } from "../model/helpers.ts";
import { ScriptedModelServer } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";
import { call, workspaceContext } from "./helpers.ts";
import { FileAttachments } from "../../src/attachments/file-attachments.ts";

const ID1 = "00000000-0000-4000-8000-000000000001";
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

function jobsWorld(maxOutputChars?: number) {
  const inbox = new EventInbox();
  const supervisor = new JobSupervisor();
  const jobs = new BackgroundJobs({ inbox, supervisor, clock: systemClock, ids: new SequentialIds(), maxOutputChars });
  closers.push(async () => {
    await jobs.close();
    await supervisor.close();
  });
  return { inbox, supervisor, jobs, context: workspaceContext() };
}

/** The next completion event (a real process: waits at most a few seconds). */
async function nextEvent(inbox: EventInbox) {
  await Promise.race([inbox.waitForEvent(), Bun.sleep(5_000)]);
  return inbox.take();
}

function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

describe("background shell jobs", () => {
  test("run_in_background returns the job id at once; the completion arrives as one event with exit code and output", async () => {
    const w = jobsWorld();
    const tool = shellTool({}, w.jobs);
    const result = await call(tool, { command: "sleep 0.3; echo built; echo warn >&2; exit 3", run_in_background: true }, w.context);
    // Returned while the command still runs.
    expect(w.jobs.hasRunning()).toBe(true);
    expect(result).toEqual({ content: `started background job ${ID1}; its exit code and output will arrive as a message when it ends` });
    expect(w.jobs.running().map((job) => job.command)).toEqual(["sleep 0.3; echo built; echo warn >&2; exit 3"]);
    const entry = (await nextEvent(w.inbox))!;
    expect(entry.owner).toBe(w.jobs);
    expect(entry.event).toMatchObject({ eventId: `background:${ID1}`, source: "background", sender: "shell", kind: "background" });
    expect(entry.event.content).toMatch(
      new RegExp(`^background job ${ID1} finished after \\d+\\.\\d s \\[exit code 3\\]\\n\\$ sleep 0\\.3; echo built; echo warn >&2; exit 3\\nbuilt\\nwarn\\n$`),
    );
    expect(w.jobs.hasRunning()).toBe(false);
    await entry.owner.acknowledge(entry.event);
    expect(w.jobs.wasReported(ID1)).toBe(true);
  });

  test("long output is cut with a note; a timeout and a missing workspace are reported, not lost", async () => {
    const w = jobsWorld(100);
    w.jobs.start("head -c 300 /dev/zero | tr '\\0' a", { workspace: w.context.workspace });
    const long = (await nextEvent(w.inbox))!.event.content;
    expect(long).toContain(`${"a".repeat(100)}\n[… 200 more characters truncated; `);
    w.jobs.start("sleep 30", { workspace: w.context.workspace, timeoutMs: 200 });
    expect((await nextEvent(w.inbox))!.event.content).toContain("[timed out after 200 ms; the command and its child processes were killed]");
    w.jobs.start("true", { workspace: join(w.context.workspace, "gone") });
    expect((await nextEvent(w.inbox))!.event.content).toMatch(/\[could not start: .*\]\n\$ true\n\(no output\)\n$/);
  });

  test("close kills a running job's whole process group and publishes nothing", async () => {
    const w = jobsWorld();
    const pidFile = join(w.context.workspace, "pid");
    w.jobs.start(`sh -c 'echo $$ > ${pidFile}; exec sleep 30' | cat`, { workspace: w.context.workspace });
    // The shell creates the file before it writes the pid: wait for the whole line, not the file.
    const written = () => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n");
    for (let i = 0; i < 500 && !written(); i++) await Bun.sleep(10);
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(pid).toBeGreaterThan(0);
    expect(alive(pid)).toBe(true);
    await w.jobs.close();
    for (let i = 0; i < 50 && alive(pid); i++) await Bun.sleep(10);
    expect(alive(pid)).toBe(false);
    expect(w.supervisor.running).toBe(0);
    expect(w.inbox.size).toBe(0);
    expect(() => w.jobs.start("true", { workspace: w.context.workspace })).toThrow(/shut down/);
  });

  test("only a shell built with BackgroundJobs offers run_in_background; the deny list still applies", async () => {
    const w = jobsWorld();
    const [plain, lead] = toolSpecs([shellTool(), shellTool({}, w.jobs)]);
    expect(plain!.parameters).not.toHaveProperty("properties.run_in_background");
    expect(lead!.parameters).toMatchObject({ properties: { run_in_background: { type: "boolean" } }, required: ["command"] });
    expect(shellTool().input.safeParse({ command: "ls", run_in_background: true }).success).toBe(false);
    const denied = await call(shellTool({}, w.jobs), { command: "rm -rf /", run_in_background: true }, w.context);
    expect(denied.isError).toBe(true);
    expect(w.jobs.running()).toEqual([]);
  });

  test("through the Lead: started in one turn, its completion is one event turn", async () => {
    const server = ScriptedModelServer.start([
      { toolCalls: [{ name: "shell", arguments: { command: "echo tests passed", run_in_background: true } }] },
      { text: "started" },
    ]);
    closers.push(() => server.close());
    const w = jobsWorld();
    const stateDir = tempDir("agent-bg-");
    const hooks = new ShellHooks({});
    const runner = new AgentRunner({
      identity: "lead",
      model: new OpenAIModelClient({ model: "m", apiKey: "k", baseUrl: server.url, timeoutMs: 5_000, retryDeps: fakeRetryDeps().deps }),
      tools: new ToolPipeline({ tools: [shellTool({}, w.jobs)], policy: new PermissionPolicy({ mode: "bypassPermissions" }), hooks }),
      hooks,
      history: openFileHistory(stateDir, "lead"),
      systemPrompt: "sys",
      workspace: w.context.workspace,
      maxTurns: 5,
      compaction: { thresholdChars: 1_000_000, largeToolResultChars: 100_000, results: new FileAttachments(stateDir) },
    });
    closers.push(async () => runner.close());
    expect((await runner.run("run the tests in the background", { idempotencyKey: "user-1" })).result).toBe("started");
    await Promise.race([w.inbox.waitForEvent(), Bun.sleep(5_000)]);
    server.push({
      text: "the tests passed",
      check: (request) => {
        const last = JSON.parse(String(request.body.messages.at(-1)!.content));
        expect(last.agent_event).toMatchObject({ id: `background:${ID1}`, source: "background", from: "shell", kind: "background" });
        expect(last.content).toContain("[exit code 0]\n$ echo tests passed\ntests passed\n");
      },
    });
    const outcome = await runner.runEvents(w.inbox);
    expect(outcome).toMatchObject({ processed: 1, ackFailed: false });
    expect(outcome.turns.map((t) => t.result.result)).toEqual(["the tests passed"]);
    expect(w.jobs.wasReported(ID1)).toBe(true);
    server.assertDone();
  });
});
