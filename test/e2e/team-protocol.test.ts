import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { scriptedServers } from "./run-fixture.ts";
import { teamSetup } from "./team-fixture.ts";

// Team protocol pieces on the compiled binary and the scripted server.

const startServer = scriptedServers();
const spawn = (name: string, role: string, prompt: string) => ({ name: "spawn_teammate", arguments: { name, role, prompt } });

/** The `agent_event` headers of the Lead-side envelopes in a request. */
function envelopesOf(messages: Record<string, unknown>[]): Record<string, unknown>[] {
  return messages.flatMap((message) => {
    if (message.role !== "user" || typeof message.content !== "string" || !message.content.startsWith('{"agent_event"')) return [];
    return [(JSON.parse(message.content) as { agent_event: Record<string, unknown> }).agent_event];
  });
}

describe("reply ids", () => {
  test("alice's result names her input: the Lead's event turn sees in_reply_to = the task's message id", async () => {
    const server = startServer([
      { identity: "lead", toolCalls: [spawn("alice", "backend", "Say hello.")] },
      { identity: "lead", text: "alice is on it." },
      { identity: "alice", text: "hello" },
      { identity: "lead", text: "alice said hello." },
    ]);
    const { run, sessionDir } = teamSetup();
    const result = await run(["Get alice to say hello.", "--base-url", server.url, "--permission-mode", "acceptEdits"]);
    expect({ code: result.code, stderr: result.stderr.includes("Error") ? result.stderr : "" }).toEqual({ code: 0, stderr: "" });
    server.assertDone();
    // Alice's one input, acked into done/ under its id.
    const done = readdirSync(join(sessionDir(), "mailboxes", "alice", "done")).filter((n) => n.endsWith(".json"));
    expect(done).toHaveLength(1);
    const taskId = done[0]!.replace(/\.json$/, "");
    const leadRequests = server.requests.filter((request) => request.identity === "lead");
    const envelopes = envelopesOf(leadRequests.at(-1)!.body.messages);
    expect(envelopes).toHaveLength(1);
    expect(envelopes[0]).toMatchObject({ from: "alice", kind: "result", in_reply_to: taskId });
    expect(envelopes[0]!.id).not.toBe(taskId);
  });
});
