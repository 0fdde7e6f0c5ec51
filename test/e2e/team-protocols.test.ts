import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type RecordedRequest, type ScriptedReply, ScriptedModelServer, type ScriptedToolCall } from "../support/model-server.ts";
import { AGENT_BINARY, ensureBinary } from "./agent-binary.ts";
import { type StreamLine, expectOneLineError, parseStream } from "./run-fixture.ts";
import { TeamList, teamSetup } from "./team-fixture.ts";

// The team protocols on the compiled binary and the scripted server: the
// shutdown handshake (one approved, one refused), plan approval (rejected,
// then approved) and permission requests decided headless on the Lead's side.
// The teammates are scripted reply by reply; the Lead answers from what its
// request holds (so it does not matter in which order the events reach it).

let server: ScriptedModelServer | undefined;
beforeAll(() => {
  ensureBinary();
}, 120_000);
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Envelope = { agent_event: { id: string; from: string; kind: string; request_id?: string; in_reply_to?: string }; content: string };

function envelopeOf(content: unknown): Envelope | undefined {
  if (typeof content !== "string" || !content.startsWith('{"agent_event"')) return undefined;
  return JSON.parse(content) as Envelope;
}

/** The events since the Lead's last answer: what this request asks it to respond to. */
function newEvents(request: RecordedRequest): Envelope[] {
  const messages = request.body.messages;
  const lastAssistant = messages.findLastIndex((m) => m.role === "assistant");
  return messages.slice(lastAssistant + 1).flatMap((m) => (m.role === "user" ? [envelopeOf(m.content)].filter((e): e is Envelope => !!e) : []));
}

/** Every event the Lead's last request holds. */
function allEvents(request: RecordedRequest): Envelope[] {
  return request.body.messages.flatMap((m) => (m.role === "user" ? [envelopeOf(m.content)].filter((e): e is Envelope => !!e) : []));
}

/** A Lead that answers its events: `onEvents` gives the tool calls for them, else it notes them; a tool result gets "ok". */
function leadBrain(first: ScriptedToolCall[], onEvents: (events: Envelope[]) => ScriptedToolCall[]) {
  return (request: RecordedRequest): ScriptedReply => {
    if (request.identity !== "lead") throw new Error(`unscripted request from ${request.identity}`);
    const last = request.body.messages.at(-1)!;
    if (last.role === "tool") return { text: "ok" };
    const events = newEvents(request);
    if (events.length === 0) return { toolCalls: first };
    const calls = onEvents(events);
    return calls.length > 0 ? { toolCalls: calls } : { text: `noted ${events.map((e) => `${e.agent_event.from} ${e.agent_event.kind}`).join(", ")}` };
  };
}

/** The protocol message envelope a teammate's request ends with. */
function lastEnvelope(request: RecordedRequest): Envelope {
  const envelope = envelopeOf(request.body.messages.at(-1)!.content);
  if (!envelope) throw new Error(`expected a protocol message, got ${JSON.stringify(request.body.messages.at(-1))}`);
  return envelope;
}

const call = (name: string, args: Record<string, unknown>): ScriptedToolCall => ({ name, arguments: args });
const protocolLines = (lines: StreamLine[]) => lines.filter((line) => line.type === ("protocol" as never)) as unknown as Record<string, string>[];
const toolNames = (request: RecordedRequest) => (request.body.tools ?? []).map((tool) => tool.function.name);
const lastToolText = (request: RecordedRequest) => String(request.body.messages.at(-1)!.content);

describe("shutdown handshake", () => {
  test("alice approves and is shut down (kept so in team.json across runtimes); bob refuses and his reason reaches the Lead", async () => {
    const lead = leadBrain(
      [call("spawn_teammate", { name: "alice", role: "backend", prompt: "Write the API." }), call("spawn_teammate", { name: "bob", role: "tester", prompt: "Test the API." })],
      (events) => events.filter((e) => e.agent_event.kind === "result").map((e) => call("request_shutdown", { name: e.agent_event.from, reason: "your part is done" })),
    );
    const shutdownRequest = (request: RecordedRequest) => {
      const envelope = lastEnvelope(request);
      expect(envelope.agent_event).toMatchObject({ from: "lead", kind: "shutdown_request", request_id: envelope.agent_event.id });
      expect(envelope.content).toBe("your part is done");
      expect(toolNames(request)).toContain("respond_shutdown");
    };
    server = ScriptedModelServer.start(
      [
        { identity: "alice", text: "API written." },
        { identity: "alice", toolCalls: [call("respond_shutdown", { approve: true, reason: "the API is written" })], check: shutdownRequest },
        { identity: "alice", text: "Stopping.", check: (r) => expect(lastToolText(r)).toContain("shutdown approved") },
        { identity: "bob", text: "Tests half written." },
        { identity: "bob", toolCalls: [call("respond_shutdown", { approve: false, reason: "I still have tests to finish" })], check: shutdownRequest },
        { identity: "bob", text: "Carrying on.", check: (r) => expect(lastToolText(r)).toContain("shutdown refused") },
      ],
      { respond: lead },
    );
    const { run, agent, drain, sessionDir } = teamSetup();
    const result = await run(["Build and test the API.", "--base-url", server.url, "--permission-mode", "acceptEdits", "--output", "stream-json"]);
    expect({ code: result.code, stderr: result.stderr.includes("Error") ? result.stderr : "" }).toEqual({ code: 0, stderr: "" });
    server.assertDone();
    expect(server.problems).toEqual([]);

    // The Lead saw both answers, each naming its request.
    const leadRequests = server.requests.filter((r) => r.identity === "lead");
    const responses = allEvents(leadRequests.at(-1)!).filter((e) => e.agent_event.kind === "shutdown_response");
    const requests = leadRequests.flatMap((r) => r.body.messages).filter((m) => m.role === "tool" && String(m.content).startsWith("asked "));
    const requestIds = new Map(requests.map((m) => [/asked (\w+)/.exec(String(m.content))![1]!, /request_id ([0-9a-f-]+)/.exec(String(m.content))![1]!]));
    expect(responses.map((e) => [e.agent_event.from, JSON.parse(e.content)]).sort()).toEqual([
      ["alice", { approve: true, reason: "the API is written" }],
      ["bob", { approve: false, reason: "I still have tests to finish" }],
    ]);
    for (const response of responses) {
      expect(response.agent_event.request_id).toBe(requestIds.get(response.agent_event.from)!);
      expect(response.agent_event.in_reply_to).toBe(requestIds.get(response.agent_event.from)!);
    }

    // stream-json told each request and answer, and alice's new state.
    const lines = parseStream(result.stdout);
    expect(protocolLines(lines).map((l) => `${l.kind} ${l.from}->${l.to}`).sort()).toEqual([
      "shutdown_request lead->alice",
      "shutdown_request lead->bob",
      "shutdown_response alice->lead",
      "shutdown_response bob->lead",
    ]);
    expect(protocolLines(lines).find((l) => l.kind === "shutdown_response" && l.from === "bob")!.summary).toBe("bob refuses shutting down: I still have tests to finish");

    const listed = TeamList.parse(JSON.parse((await agent("team", "list", "--json")).stdout));
    expect(listed.teammates.map((t) => [t.name, t.state])).toEqual([["alice", "shutdown"], ["bob", "idle"]]);
    const text = (await agent("team", "list")).stdout;
    expect(text).toMatch(/alice +backend +shutdown/);

    // Shut down for good: the next runtime does not wake it, it takes no messages.
    expectOneLineError(await agent("team", "send", "alice", "One more thing."), 2, /alice is shutdown/);
    server = ScriptedModelServer.start([]);
    expect((await drain(["--base-url", server.url])).code).toBe(0);
    expect(server.requests).toHaveLength(0);
    expect(JSON.parse(readFileSync(join(sessionDir(), "team.json"), "utf8")).teammates.map((t: { state: string }) => t.state)).toEqual(["shutdown", "idle"]);
    // Every protocol message was acked where it landed.
    for (const name of ["alice", "bob", "lead"]) {
      expect(readdirSync(join(sessionDir(), "mailboxes", name, "ready"))).toEqual([]);
      expect(readdirSync(join(sessionDir(), "mailboxes", name, "processing"))).toEqual([]);
    }
  });
});

// With --remote-teammates an `agent worker` runs carol: the Lead's review goes
// to her as its answer alone, and her worker stores her plan as she reads it
// (a Lead writes no record of a teammate another process holds).
const planRuns = [
  { where: "in the Lead's runtime", remote: false },
  { where: "in an agent worker (--remote-teammates)", remote: true },
];

describe("plan approval", () => {
  test.each(planRuns)("carol works read-only, her first plan is rejected with feedback, the second approved: then she edits in the Lead's mode ($where)", async ({ remote }) => {
    const reviews: boolean[] = [];
    const lead = leadBrain([call("spawn_teammate", { name: "carol", role: "backend", prompt: "Add a CHANGELOG.", plan_mode_required: true })], (events) =>
      events
        .filter((e) => e.agent_event.kind === "plan_approval_request")
        .map((e) => {
          const approve = reviews.length > 0;
          reviews.push(approve);
          return call("review_plan", {
            name: "carol",
            request_id: e.agent_event.request_id,
            approve,
            feedback: approve ? "go ahead" : "also list the version",
          });
        }),
    );
    const planTools = (r: RecordedRequest) => expect(toolNames(r)).toContain("submit_plan");
    server = ScriptedModelServer.start(
      [
        { identity: "carol", toolCalls: [call("write_file", { path: "CHANGELOG.md", content: "too early\n" })], check: planTools },
        {
          identity: "carol",
          toolCalls: [call("submit_plan", { plan: "Write CHANGELOG.md with one entry." })],
          check: (r) => expect(lastToolText(r)).toContain("plan mode is read-only"),
        },
        { identity: "carol", text: "Plan submitted.", check: (r) => expect(lastToolText(r)).toMatch(/^plan submitted \(request_id [0-9a-f-]+\)/) },
        {
          identity: "carol",
          toolCalls: [call("submit_plan", { plan: "Write CHANGELOG.md with one entry for version 1.0." })],
          check: (r) => {
            const envelope = lastEnvelope(r);
            expect(envelope.agent_event.kind).toBe("plan_approval_response");
            expect(JSON.parse(envelope.content)).toEqual({ approve: false, feedback: "also list the version" });
            planTools(r);
          },
        },
        { identity: "carol", text: "Revised plan submitted." },
        {
          identity: "carol",
          toolCalls: [call("write_file", { path: "CHANGELOG.md", content: "# 1.0\n" })],
          check: (r) => {
            expect(JSON.parse(lastEnvelope(r).content)).toEqual({ approve: true, feedback: "go ahead" });
            // Lifted: no submit_plan any more, same history.
            expect(toolNames(r)).not.toContain("submit_plan");
            expect(JSON.stringify(r.body.messages)).toContain("Add a CHANGELOG.");
          },
        },
        { identity: "carol", text: "CHANGELOG.md written.", check: (r) => expect(lastToolText(r)).not.toContain("denied") },
      ],
      { respond: lead },
    );
    const { run, agent, workspace, sessionDir, stateDir } = teamSetup();
    const flags = ["--base-url", server.url, "--permission-mode", "acceptEdits"];
    const running = run(["Get a CHANGELOG written, with a plan first.", ...flags, "--output", "stream-json", ...(remote ? ["--session", "plan-remote", "--remote-teammates"] : [])]);
    let worker: Subprocess<"ignore", "pipe", "pipe"> | undefined;
    if (remote) {
      // The Lead's first request means its session exists: the worker can join it.
      while (server.requests.length === 0) await Bun.sleep(20);
      worker = Bun.spawn([AGENT_BINARY, "worker", "--session", "plan-remote", "--workspace", workspace, "--state-dir", stateDir, ...flags], {
        env: { ...process.env, NO_COLOR: "1", OPENAI_API_KEY: "test-key" },
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
    }
    const result = await running;
    if (worker) {
      worker.kill("SIGTERM");
      expect(await worker.exited).toBe(0);
    }
    expect({ code: result.code, stderr: result.stderr.includes("Error") ? result.stderr : "" }).toEqual({ code: 0, stderr: "" });
    server.assertDone();
    expect(server.problems).toEqual([]);
    expect(reviews).toEqual([false, true]);
    expect(readFileSync(join(workspace, "CHANGELOG.md"), "utf8")).toBe("# 1.0\n");

    // Two plans, each answered once, request ids paired (the worker's side of it is not in the Lead's stream: its mailboxes tell).
    if (remote) {
      const kinds = async (name: string) => {
        const listed = JSON.parse((await agent("mailbox", "list", "--agent", name, "--json")).stdout) as { agents: { messages: { kind: string }[] }[] };
        return listed.agents[0]!.messages.map((m) => m.kind).filter((kind) => kind.startsWith("plan_"));
      };
      expect(await kinds("lead")).toEqual(["plan_approval_request", "plan_approval_request"]);
      expect(await kinds("carol")).toEqual(["plan_approval_response", "plan_approval_response"]);
    } else {
      const lines = protocolLines(parseStream(result.stdout));
      const requests = lines.filter((l) => l.kind === "plan_approval_request");
      const responses = lines.filter((l) => l.kind === "plan_approval_response");
      expect(requests).toHaveLength(2);
      expect(responses.map((l) => l.request_id)).toEqual(requests.map((l) => l.request_id));
      expect(new Set(requests.map((l) => l.request_id)).size).toBe(2);
    }

    const listed = TeamList.parse(JSON.parse((await agent("team", "list", "--json")).stdout));
    expect(listed.teammates.map((t) => [t.name, t.state, (t as { plan?: { state: string } }).plan?.state])).toEqual([["carol", "idle", "approved"]]);
    expect((await agent("team", "list")).stdout).toMatch(/carol .*plan approved/);
    expect(JSON.parse(readFileSync(join(sessionDir(), "team.json"), "utf8")).teammates[0].plan).toEqual({ state: "approved" });
  });

  test("review_plan with a request id that is not open is an error result for the Lead", async () => {
    server = ScriptedModelServer.start([
      { identity: "lead", toolCalls: [call("spawn_teammate", { name: "carol", role: "backend", prompt: "Add a CHANGELOG.", plan_mode_required: true })] },
      { identity: "lead", text: "ok" },
      { identity: "carol", text: "I have not planned yet." },
      {
        identity: "lead",
        toolCalls: [call("review_plan", { name: "carol", request_id: "0192d4c8-5e1f-7b3a-8c44-2f0a1d9e6b7c", approve: true, feedback: "" })],
      },
      {
        identity: "lead",
        text: "fine",
        check: (r) => expect(lastToolText(r)).toContain("request_id 0192d4c8-5e1f-7b3a-8c44-2f0a1d9e6b7c is not carol's open plan request: it has no plan waiting for review"),
      },
    ]);
    const { run, agent } = teamSetup();
    const result = await run(["Plan a CHANGELOG.", "--base-url", server.url, "--permission-mode", "acceptEdits"]);
    expect(result.code).toBe(0);
    server.assertDone();
    const listed = TeamList.parse(JSON.parse((await agent("team", "list", "--json")).stdout));
    expect((listed.teammates[0] as { plan?: { state: string } }).plan).toEqual({ state: "drafting" });
  });
});

const CAREFUL = ["---", "name: careful", "description: Asks before it changes anything", "permissionMode: default", "---", "Be careful.", ""].join("\n");

describe("permission requests", () => {
  test("headless, the Lead's side decides: its mode allows dave's edit, its rules deny his command; dave gets each verdict with the reason", async () => {
    const lead = leadBrain([call("spawn_teammate", { name: "dave", role: "builder", prompt: "Write notes.txt, then run touch done.txt.", agent: "careful" })], () => []);
    server = ScriptedModelServer.start(
      [
        { identity: "dave", toolCalls: [call("write_file", { path: "notes.txt", content: "notes\n" })] },
        {
          identity: "dave",
          toolCalls: [call("shell", { command: "touch done.txt" })],
          check: (r) => expect(lastToolText(r)).not.toContain("denied"),
        },
        {
          identity: "dave",
          text: "notes.txt written; touch was refused.",
          check: (r) =>
            expect(lastToolText(r)).toMatch(/^permission denied on the Lead's side: permission denied: shell needs approval and there is no TTY to ask; allow it with permissions\.allow/),
        },
      ],
      { respond: lead },
    );
    const { run, workspace, sessionDir } = teamSetup();
    mkdirSync(join(workspace, ".agent", "agents"), { recursive: true });
    writeFileSync(join(workspace, ".agent", "agents", "careful.md"), CAREFUL);
    const result = await run(["Have dave write notes.", "--base-url", server.url, "--permission-mode", "acceptEdits", "--output", "stream-json"]);
    expect({ code: result.code, stderr: result.stderr.includes("Error") ? result.stderr : "" }).toEqual({ code: 0, stderr: "" });
    server.assertDone();
    expect(readFileSync(join(workspace, "notes.txt"), "utf8")).toBe("notes\n");
    expect(existsSync(join(workspace, "done.txt"))).toBe(false);

    // Two requests in the Lead's mailbox, two verdicts in dave's, paired; no Lead model turn for either.
    const dir = sessionDir();
    const read = (agentName: string) =>
      readdirSync(join(dir, "mailboxes", agentName, "done"))
        .filter((n) => n.endsWith(".json"))
        .map((n) => JSON.parse(readFileSync(join(dir, "mailboxes", agentName, "done", n), "utf8")));
    const requests = read("lead").filter((m) => m.kind === "permission_request");
    const verdicts = read("dave").filter((m) => m.kind === "permission_response");
    expect(requests.map((m) => JSON.parse(m.content)).map((c) => [c.tool, c.subject]).sort()).toEqual([
      ["shell", "touch done.txt"],
      ["write_file", "notes.txt"],
    ]);
    expect(verdicts.map((m) => m.requestId).sort()).toEqual(requests.map((m) => m.id).sort());
    const byTool = new Map(requests.map((m) => [JSON.parse(m.content).tool, verdicts.find((v) => v.requestId === m.id)]));
    expect(JSON.parse(byTool.get("write_file").content)).toEqual({ allow: true, reason: "allowed by the Lead's rules and mode (acceptEdits)" });
    expect(JSON.parse(byTool.get("shell").content)).toMatchObject({ allow: false });
    for (const request of server.requests.filter((r) => r.identity === "lead")) {
      expect(allEvents(request).map((e) => e.agent_event.kind)).not.toContain("permission_request");
    }
    const lines = protocolLines(parseStream(result.stdout));
    expect(lines.map((l) => `${l.kind} ${l.from}->${l.to}`).sort()).toEqual([
      "permission_request dave->lead",
      "permission_request dave->lead",
      "permission_response lead->dave",
      "permission_response lead->dave",
    ]);
    expect(lines.find((l) => l.kind === "permission_request" && l.summary!.includes("shell"))!.summary).toBe("dave asks permission for shell(touch done.txt)");
  });

  test("the Lead's bypassPermissions allows dave's command; a deny rule refuses the other before any request (nothing to ask)", async () => {
    const lead = leadBrain([call("spawn_teammate", { name: "dave", role: "builder", prompt: "Clean up.", agent: "careful" })], () => []);
    server = ScriptedModelServer.start(
      [
        { identity: "dave", toolCalls: [call("shell", { command: "touch made.txt" })] },
        { identity: "dave", toolCalls: [call("shell", { command: "rm -f made.txt" })], check: (r) => expect(lastToolText(r)).not.toContain("denied") },
        { identity: "dave", text: "done.", check: (r) => expect(lastToolText(r)).toContain('matches the deny rule "shell(rm *)"') },
      ],
      { respond: lead },
    );
    const { run, workspace } = teamSetup();
    mkdirSync(join(workspace, ".agent", "agents"), { recursive: true });
    writeFileSync(join(workspace, ".agent", "agents", "careful.md"), CAREFUL);
    const result = await run(["Have dave clean up.", "--base-url", server.url, "--permission-mode", "bypassPermissions", "--deny", "shell(rm *)", "--output", "stream-json"]);
    expect(result.code).toBe(0);
    server.assertDone();
    expect(existsSync(join(workspace, "made.txt"))).toBe(true);
    const lines = protocolLines(parseStream(result.stdout));
    expect(lines.map((l) => `${l.kind} ${l.summary}`)).toEqual([
      "permission_request dave asks permission for shell(touch made.txt)",
      "permission_response lead allows dave's call: allowed by the Lead's rules and mode (bypassPermissions)",
    ]);
  });
});

describe("permission requests across processes", () => {
  test("alice in an `agent worker` asks; the Lead's process (acceptEdits) allows her write; she sees the verdict in the store", async () => {
    server = ScriptedModelServer.start(
      [
        { identity: "alice", toolCalls: [call("write_file", { path: "notes.txt", content: "notes\n" })] },
        { identity: "alice", text: "notes.txt written.", check: (r) => expect(lastToolText(r)).not.toContain("denied") },
      ],
      {
        respond: leadBrain([call("spawn_teammate", { name: "alice", role: "writer", prompt: "Write notes.txt." })], () => []),
      },
    );
    const { workspace, stateDir, sessionDir } = teamSetup();
    const common = ["--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url];
    const env = { ...process.env, NO_COLOR: "1", OPENAI_API_KEY: "test-key" };
    const lead = Bun.spawn([AGENT_BINARY, "run", "--session", "remote-ask", "--remote-teammates", "--permission-mode", "acceptEdits", ...common, "Have alice write notes."], {
      env,
      stdout: "pipe",
      stderr: "pipe",
    });
    // The worker runs its teammates in `default` mode: alice's write asks the Lead's side.
    let worker: Bun.Subprocess | undefined;
    try {
      while (server.requests.length === 0) await Bun.sleep(20);
      worker = Bun.spawn([AGENT_BINARY, "worker", "--session", "remote-ask", "--permission-mode", "default", ...common], { env, stdout: "ignore", stderr: "pipe" });
      const code = await lead.exited;
      expect({ code, stderr: code === 0 ? "" : await new Response(lead.stderr).text() }).toEqual({ code: 0, stderr: "" });
      server.assertDone();
      expect(readFileSync(join(workspace, "notes.txt"), "utf8")).toBe("notes\n");
      const dir = sessionDir();
      const verdicts = readdirSync(join(dir, "mailboxes", "alice", "done"))
        .filter((n) => n.endsWith(".json"))
        .map((n) => JSON.parse(readFileSync(join(dir, "mailboxes", "alice", "done", n), "utf8")))
        .filter((m) => m.kind === "permission_response");
      expect(verdicts.map((m) => JSON.parse(m.content))).toEqual([{ allow: true, reason: "allowed by the Lead's rules and mode (acceptEdits)" }]);
    } finally {
      lead.kill("SIGKILL");
      worker?.kill("SIGTERM");
      await worker?.exited;
    }
  }, 60_000);
});
