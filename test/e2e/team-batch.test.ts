import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { type RecordedRequest, ScriptedModelServer } from "../support/model-server.ts";
import { ensureBinary } from "./agent-binary.ts";
import { eventsIn, teamSetup } from "./team-fixture.ts";

// Batched event turns on the compiled binary: four teammates whose results
// arrive together are answered in one Lead model turn (docs/team.md#event-turns),
// counted at the scripted server.

let server: ScriptedModelServer | undefined;
beforeAll(() => ensureBinary(), 120_000);
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const toolNames = (request: RecordedRequest) => (request.body.tools ?? []).map((tool) => tool.function.name);

describe("batched event turns", () => {
  test("four results finishing together are answered in one Lead turn", async () => {
    const names = ["ann", "ben", "cat", "dan"];
    // A barrier, not a clock: no teammate is answered before all four asked.
    const asked = names.map(() => Promise.withResolvers<void>());
    const all = Promise.all(asked.map((a) => a.promise));
    server = ScriptedModelServer.start([
      {
        identity: "lead",
        toolCalls: names.map((name) => ({ name: "spawn_teammate", arguments: { name, role: "worker", prompt: `part ${name}` } })),
      },
      { identity: "lead", text: "four workers started" },
      ...names.map((name, i) => ({
        identity: name,
        // Without auto-claim, no task-graph tools.
        check: (request: RecordedRequest) => {
          expect(toolNames(request).filter((tool) => tool.endsWith("_task") || tool === "list_tasks")).toEqual([]);
          asked[i]!.resolve();
        },
        gate: all,
        text: `${name} finished`,
      })),
      {
        identity: "lead",
        text: "all four parts are done",
        check: (request) => {
          const results = eventsIn(request).filter((e) => e.kind === "result");
          expect(results.map((e) => e.content).sort()).toEqual(names.map((name) => `${name} finished`));
        },
      },
    ]);
    const { run } = teamSetup();
    const result = await run(["Split the job in four.", "--base-url", server.url, "--output", "json"]);
    expect(result.code).toBe(0);
    // Exactly three Lead requests: two in the user turn, one event turn for the four results.
    server.assertDone();
    expect(server.requests.filter((r) => r.identity === "lead")).toHaveLength(3);
    // Four results and four idle notices, one turn.
    expect(JSON.parse(result.stdout)).toMatchObject({ result: "all four parts are done", events: 8, event_turns: 1 });
  }, 60_000);
});
