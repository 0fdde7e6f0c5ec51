import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import type { RecordedRequest, ScriptedReply } from "../support/model-server.ts";
import { ScriptedModelServer } from "../support/model-server.ts";
import { type PostgresCluster, startPostgres } from "../support/postgres.ts";
import { AGENT_BINARY, ensureBinary } from "./agent-binary.ts";
import { runSetup } from "./run-fixture.ts";
import { waitUntil } from "../support/deadline.ts";

// Every message a teammate gets but a task comes in the event envelope naming
// its sender, and a teammate's answer to a message goes back to whoever asked:
// a peer that used send_message, or the operator (`agent team send --wait`).
// On the compiled binary, with each store.

const servers: ScriptedModelServer[] = [];
const children: Subprocess<"ignore", "pipe", "pipe">[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) {
    child.kill("SIGKILL");
    await child.exited;
  }
  for (const server of servers.splice(0)) await server.close();
});
let cluster: Promise<PostgresCluster> | undefined;
afterAll(async () => {
  await (await cluster)?.stop();
});
beforeAll(() => {
  ensureBinary();
}, 120_000);

interface Envelope {
  agent_event: { id: string; from: string; kind: string; in_reply_to?: string };
  content: string;
}

/** The envelope of a user message, or undefined for plain text (a task). */
function envelopeOf(message: Record<string, unknown> | undefined): Envelope | undefined {
  if (message?.role !== "user" || typeof message.content !== "string" || !message.content.startsWith('{"agent_event"')) return undefined;
  return JSON.parse(message.content) as Envelope;
}
const last = (request: RecordedRequest) => request.body.messages.at(-1);
const envelopesIn = (request: RecordedRequest) => request.body.messages.flatMap((m) => envelopeOf(m) ?? []);

function start(args: string[]): { child: Subprocess<"ignore", "pipe", "pipe">; stdout: Promise<string>; stderr: Promise<string> } {
  const child = Bun.spawn([AGENT_BINARY, ...args], {
    env: { ...process.env, NO_COLOR: "1", OPENAI_API_KEY: "test-key" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  children.push(child);
  return { child, stdout: new Response(child.stdout).text(), stderr: new Response(child.stderr).text() };
}

const stores = [
  { name: "files", args: async () => [] as string[] },
  {
    name: "PostgreSQL",
    async args() {
      cluster ??= startPostgres();
      return ["--store", await (await cluster).database()];
    },
  },
];

const spawnCall = (name: string, prompt: string) => ({ name: "spawn_teammate", arguments: { name, role: "helper", prompt } });
const ANSWER = "alice: the schema has 2 tables";

describe.each(stores)("envelopes and replies, store: $name", (store) => {
  test("bob asks alice with send_message: she sees from: bob, her answer reaches bob and not the Lead", async () => {
    const { workspace, stateDir } = runSetup();
    const server = ScriptedModelServer.start([{ identity: "lead", toolCalls: [spawnCall("alice", "Stand by for questions."), spawnCall("bob", "Find out how many tables the schema has.")] }], {
      respond: (request): ScriptedReply => {
        const envelope = envelopeOf(last(request));
        if (request.identity === "alice") {
          if (envelope?.agent_event.from === "bob" && envelope.agent_event.kind === "message") return { text: ANSWER };
          return { text: "standing by" };
        }
        if (request.identity === "bob") {
          if (envelope?.agent_event.from === "alice" && envelope.agent_event.kind === "result") return { text: `bob heard: ${envelope.content}` };
          if (last(request)?.role === "tool") return { text: "asked alice" };
          return { toolCalls: [{ name: "send_message", arguments: { to: "alice", content: "How many tables does the schema have?" } }] };
        }
        return { text: "Noted." };
      },
    });
    servers.push(server);
    const run = start(["run", "--output", "json", "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url, ...(await store.args()), "Have bob find out from alice."]);
    const code = await run.child.exited;
    expect({ code, stderr: code === 0 ? "" : await run.stderr }).toEqual({ code: 0, stderr: "" });
    expect(server.problems).toEqual([]);

    // alice got bob's question in the envelope, from bob.
    const asked = server.requests.filter((r) => r.identity === "alice").map((r) => envelopeOf(last(r))).find((e) => e?.agent_event.from === "bob");
    expect(asked).toMatchObject({ agent_event: { from: "bob", kind: "message" }, content: "How many tables does the schema have?" });
    // Her answer reached bob, as a result naming his message.
    const heard = server.requests.filter((r) => r.identity === "bob").map((r) => envelopeOf(last(r))).find((e) => e?.agent_event.kind === "result");
    expect(heard).toMatchObject({ agent_event: { from: "alice", kind: "result", in_reply_to: asked!.agent_event.id }, content: ANSWER });
    // The Lead heard bob's report of it, never alice's answer itself.
    const leadEvents = server.requests.filter((r) => r.identity === "lead").flatMap(envelopesIn);
    expect(leadEvents.map((e) => e.content)).toContain(`bob heard: ${ANSWER}`);
    expect(leadEvents.filter((e) => e.content === ANSWER)).toEqual([]);
  }, 90_000);

  test("agent team send alice TEXT --wait prints alice's answer; she saw from: user", async () => {
    const { workspace, stateDir } = runSetup();
    const server = ScriptedModelServer.start(
      [
        { identity: "lead", toolCalls: [spawnCall("alice", "Stand by.")] },
        { identity: "lead", text: "alice is on it." },
      ],
      {
        respond: (request): ScriptedReply => {
          const envelope = envelopeOf(last(request));
          if (request.identity === "alice") return { text: envelope?.agent_event.from === "user" ? "alice: all green" : "standing by" };
          return { text: "Noted." };
        },
      },
    );
    servers.push(server);
    const common = ["--session", "asker", "--workspace", workspace, "--state-dir", stateDir, "--base-url", server.url, ...(await store.args())];
    const run = start(["run", "--remote-teammates", "--no-wait", ...common, "Spawn alice."]);
    expect(await run.child.exited).toBe(0);
    const worker = start(["worker", ...common]);
    // Once the worker runs alice (her first task reached the model), the send waits for it rather than running her itself.
    await waitUntil(() => server.requests.some((request) => request.identity === "alice"), "the worker to run alice");
    const send = start(["team", "send", "alice", "status?", "--wait", ...common.filter((arg, i) => arg !== "--base-url" && common[i - 1] !== "--base-url")]);
    const code = await send.child.exited;
    expect({ code, stdout: await send.stdout, stderr: await send.stderr }).toEqual({ code: 0, stdout: "alice: all green\n", stderr: "" });
    const asked = server.requests.filter((r) => r.identity === "alice").map((r) => envelopeOf(last(r))).find((e) => e?.agent_event.from === "user");
    expect(asked).toMatchObject({ agent_event: { from: "user", kind: "message" }, content: "status?" });
    worker.child.kill("SIGTERM");
    expect(await worker.child.exited).toBe(0);
    expect(server.problems).toEqual([]);
  }, 90_000);
});
