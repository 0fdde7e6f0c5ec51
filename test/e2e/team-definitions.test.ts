import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest } from "../support/model-server.ts";
import { scriptedServers } from "./run-fixture.ts";
import { TeamList, teamSetup } from "./team-fixture.ts";

// A teammate spawned from `.agent/agents/reviewer.md`, on the compiled binary:
// its requests carry the definition's prompt, its model and only its tools;
// team.json keeps the definition so `agent drain` rebuilds alice alike; an
// invalid definition is skipped with one warning.

const startServer = scriptedServers();
const REVIEWER = [
  "---",
  "name: reviewer",
  "description: Reviews code and reports problems without changing files",
  "model: small-model-1",
  "tools: [read_file, send_message]",
  "permissionMode: plan",
  "---",
  "Review with care: name each problem with its file and line.",
  "",
].join("\n");

function expectReviewer(request: RecordedRequest): void {
  expect(request.body.model).toBe("small-model-1");
  expect((request.body.tools ?? []).map((tool) => tool.function.name)).toEqual(["read_file", "send_message", "respond_shutdown", "read_attachment"]);
  const system = String(request.body.messages[0]?.content);
  expect(system).toContain("You are alice, a teammate (reviewer)");
  expect(system).toContain("Review with care: name each problem with its file and line.");
}

describe("teammate definitions", () => {
  test("alice from the reviewer definition: its prompt, model and tools; restored alike by drain; a bad definition warned once", async () => {
    const { run, drain, agent, workspace, sessionDir } = teamSetup();
    mkdirSync(join(workspace, ".agent", "agents"), { recursive: true });
    writeFileSync(join(workspace, ".agent", "agents", "reviewer.md"), REVIEWER);
    writeFileSync(join(workspace, ".agent", "agents", "broken.md"), "---\nname: broken\ndescription: x\nisolation: container\n---\nbody\n");
    const server = startServer([
      {
        identity: "lead",
        toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "reviewer", prompt: "Review main.ts.", agent: "reviewer" } }],
        check: (request) => {
          const system = String(request.body.messages[0]?.content);
          expect(system).toContain("- reviewer: Reviews code and reports problems without changing files");
          expect(system).not.toContain("broken");
          expect(request.body.model).not.toBe("small-model-1");
        },
      },
      { identity: "lead", text: "alice is reviewing." },
      { identity: "alice", text: "main.ts looks fine.", check: expectReviewer },
      { identity: "lead", text: "Reviewed." },
    ]);
    const result = await run(["Have main.ts reviewed.", "--base-url", server.url]);
    expect(result.code).toBe(0);
    server.assertDone();
    const warnings = result.stderr.split("\n").filter((line) => line.includes("broken.md"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("isolation");

    const team = JSON.parse(readFileSync(join(sessionDir(), "team.json"), "utf8"));
    expect(team.teammates).toMatchObject([{ name: "alice", agent: "reviewer", model: "small-model-1" }]);
    const listed = TeamList.parse(JSON.parse((await agent("team", "list", "--json")).stdout));
    expect(listed.teammates).toMatchObject([{ name: "alice", agent: "reviewer", model: "small-model-1" }]);

    expect((await agent("team", "send", "alice", "Now review util.ts.")).code).toBe(0);
    const next = startServer([
      // Its answer goes to the operator who asked, not to the Lead.
      { identity: "alice", text: "util.ts looks fine.", check: expectReviewer },
      // The Lead hears only that she is idle again.
      { identity: "lead", text: "Noted." },
    ]);
    const drained = await drain(["--base-url", next.url]);
    expect(drained.code).toBe(0);
    next.assertDone();
  });

  test("an unknown definition is refused to the Lead, and nothing is spawned", async () => {
    const { run, sessionDir } = teamSetup();
    const server = startServer([
      { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "r", prompt: "p", agent: "nobody" } }] },
      {
        identity: "lead",
        text: "No such definition.",
        check: (request) => expect(String(request.body.messages.at(-1)?.content)).toContain('no teammate definition named "nobody"'),
      },
    ]);
    const result = await run(["Spawn nobody.", "--base-url", server.url]);
    expect(result.code).toBe(0);
    server.assertDone();
    expect(existsSync(join(sessionDir(), "team.json"))).toBe(false);
  });
});
