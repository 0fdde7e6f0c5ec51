import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { derivedId } from "../../src/team/derived-id.ts";
import { ScriptedModelServer } from "../support/model-server.ts";
import { until } from "../fixtures/team-children.ts";
import {
  ALICE_DONE,
  STEP_FILE,
  STEPS,
  TEN_STEPS_PROMPT,
  aliceRequests,
  envelopeOf,
  leadTenSteps,
  stepsDone,
  tenSteps,
} from "../fixtures/ten-steps.ts";
import type { RecordedRequest, ScriptedReply } from "../support/model-server.ts";
import { runAgent } from "./agent-binary.ts";
import { runSetup } from "./run-fixture.ts";
import { teamBinaries } from "./team-binaries.ts";

// A word from the operator (`agent team send`) to a teammate busy on a long
// turn reaches that turn between its steps: sent while alice waits for step 3's
// answer, it is in her 4th model request, once, in the envelope naming `user`;
// the turn's answer goes back to the operator too. Off (team.midTurnDelivery:
// false), it waits for the turn to end. On the compiled binary, with each store
// (PostgreSQL with the teammate run by `agent worker`).

const { start, serve, postgresArgs } = teamBinaries();

const WORD = "Also note the time of each step.";

/** A session whose Lead spawns alice on ten steps; the server holds her 3rd request until `release()`. */
function tenStepTeam(config?: Record<string, unknown>, script: (hold: Promise<unknown>) => (request: RecordedRequest) => ScriptedReply = tenSteps) {
  const { workspace, stateDir } = runSetup();
  writeFileSync(join(workspace, STEP_FILE), "step notes\n");
  if (config) {
    mkdirSync(join(workspace, ".agent"), { recursive: true });
    writeFileSync(join(workspace, ".agent", "config.json"), JSON.stringify(config));
  }
  const hold = Promise.withResolvers<void>();
  const server = serve(ScriptedModelServer.start([], { respond: script(hold.promise) }));
  const common = ["--session", "steps", "--workspace", workspace, "--state-dir", stateDir];
  return { server, common, release: () => hold.resolve() };
}

/** Waits until alice has asked for step 3's answer (two steps done), then sends the operator's word; returns its id. */
async function sendDuringStep3(server: ScriptedModelServer, admin: string[]): Promise<string> {
  expect(await until(() => aliceRequests(server.requests).some((r) => stepsDone(r) === 2), 60_000)).toBe(true);
  const sent = await runAgent(["team", "send", "alice", WORD, ...admin]);
  expect({ code: sent.code, stderr: sent.stderr }).toEqual({ code: 0, stderr: "" });
  return sent.stdout.trim();
}

/** The word is in the agent's 4th request, once, in the user's envelope, right after step 3's tool result — and in none before. */
function expectJoinedBeforeStep4(requests: RecordedRequest[], id: string): void {
  // Ten steps and the answer: the word was no turn of its own.
  expect(requests).toHaveLength(STEPS + 1);
  expect(requests.slice(0, 3).flatMap((r) => r.body.messages.flatMap((m) => envelopeOf(m) ?? []))).toEqual([]);
  const fourth = requests[3]!;
  expect(stepsDone(fourth)).toBe(3);
  const messages = fourth.body.messages;
  const at = messages.findIndex((m) => envelopeOf(m) !== undefined);
  expect(envelopeOf(messages[at])).toMatchObject({ agent_event: { id, from: "user", kind: "message" }, content: WORD });
  expect(messages[at - 1]?.role).toBe("tool");
  expect(at).toBe(messages.length - 1);
  // Once, in every later request too.
  for (const request of requests.slice(3)) expect(request.body.messages.filter((m) => envelopeOf(m)?.agent_event.id === id)).toHaveLength(1);
}

const stores = [
  { name: "files", remote: false, args: async (): Promise<string[]> => [] },
  {
    name: "PostgreSQL (agent worker)",
    remote: true,
    args: postgresArgs,
  },
];

describe.each(stores)("mid-turn delivery, store: $name", (store) => {
  test("an operator's word sent during step 3 of 10 is in the teammate's 4th request, once; the turn's answer reaches the operator", async () => {
    const { server, common, release } = tenStepTeam();
    const admin = [...common, ...(await store.args())];
    const runtime = [...admin, "--base-url", server.url];
    let worker: ReturnType<typeof start> | undefined;
    let run: ReturnType<typeof start>;
    if (store.remote) {
      run = start(["run", "--remote-teammates", "--no-wait", "--output", "json", ...runtime, TEN_STEPS_PROMPT]);
      expect(await run.child.exited).toBe(0);
      worker = start(["worker", ...runtime]);
    } else {
      run = start(["run", "--output", "json", ...runtime, TEN_STEPS_PROMPT]);
    }
    const id = await sendDuringStep3(server, admin);
    release();
    const reply = derivedId(id, "result");
    if (worker) {
      expect(await until(() => aliceRequests(server.requests).length > STEPS, 60_000)).toBe(true);
      let shown = await runAgent(["mailbox", "show", reply, "--json", ...admin]);
      for (const deadline = Date.now() + 30_000; shown.code !== 0 && Date.now() < deadline; await Bun.sleep(200)) {
        shown = await runAgent(["mailbox", "show", reply, "--json", ...admin]);
      }
      worker.child.kill("SIGTERM");
      expect(await worker.child.exited).toBe(0);
    } else {
      const code = await run.child.exited;
      expect({ code, stderr: code === 0 ? "" : await run.stderr }).toEqual({ code: 0, stderr: "" });
    }
    expect(server.problems).toEqual([]);
    expectJoinedBeforeStep4(aliceRequests(server.requests), id);
    // The operator hears the turn's answer, in reply to the word.
    const shown = await runAgent(["mailbox", "show", reply, "--json", ...admin]);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ message: { sender: "alice", recipient: "user", kind: "result", content: ALICE_DONE, inReplyTo: id } });
  }, 120_000);
});

test("team.midTurnDelivery false: the word waits for the turn's end and is a turn of its own", async () => {
  const { server, common, release } = tenStepTeam({ team: { midTurnDelivery: false } });
  const run = start(["run", "--output", "json", "--trust-project", ...common, "--base-url", server.url, TEN_STEPS_PROMPT]);
  const id = await sendDuringStep3(server, common);
  release();
  const code = await run.child.exited;
  expect({ code, stderr: code === 0 ? "" : await run.stderr }).toEqual({ code: 0, stderr: "" });
  expect(server.problems).toEqual([]);
  const requests = aliceRequests(server.requests);
  expect(requests).toHaveLength(STEPS + 2);
  for (const request of requests.slice(0, STEPS + 1)) expect(request.body.messages.flatMap((m) => envelopeOf(m) ?? [])).toEqual([]);
  const last = requests.at(-1)!.body.messages;
  expect(envelopeOf(last.at(-1))).toMatchObject({ agent_event: { id, from: "user", kind: "message" }, content: WORD });
  expect(last.at(-2)).toMatchObject({ role: "assistant", content: ALICE_DONE });
}, 120_000);

test("the Lead too: the operator's word put in its mailbox during step 3 of 10 is in its 4th request, once", async () => {
  const { server, common, release } = tenStepTeam(undefined, leadTenSteps);
  const run = start(["run", "--output", "json", ...common, "--base-url", server.url, "Take your ten steps."]);
  expect(await until(() => server.requests.some((r) => stepsDone(r) === 2), 60_000)).toBe(true);
  const sent = await runAgent(["mailbox", "send", "--to", "lead", "--from", "user", "--content", WORD, ...common]);
  expect({ code: sent.code, stderr: sent.stderr }).toEqual({ code: 0, stderr: "" });
  release();
  const code = await run.child.exited;
  expect({ code, stderr: code === 0 ? "" : await run.stderr }).toEqual({ code: 0, stderr: "" });
  expect(server.problems).toEqual([]);
  expectJoinedBeforeStep4(server.requests, sent.stdout.trim());
  // Taken, and acknowledged: nothing waits in the Lead's mailbox.
  const listed = await runAgent(["mailbox", "list", "--agent", "lead", "--json", ...common]);
  expect((JSON.parse(listed.stdout) as { agents: { name: string; counts: Record<string, number> }[] }).agents[0]?.counts).toMatchObject({ ready: 0, processing: 0, done: 1 });
}, 120_000);
