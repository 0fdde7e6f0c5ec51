import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest } from "../support/model-server.ts";
import { AGENT_BINARY } from "./agent-binary.ts";
import { scriptedServers } from "./run-fixture.ts";
import { teamSetup } from "./team-fixture.ts";
import { onPty, terminalsKilledAfterEach } from "./terminals.ts";

// A teammate's permission request on a terminal (Bun's PTY, the compiled
// binary): the user is asked with the teammate's name and what it will do, and
// the teammate gets the answer — the call runs, or is denied with the reason typed.

const startServer = scriptedServers();
const terminals = terminalsKilledAfterEach();
const lastToolText = (request: RecordedRequest) => String(request.body.messages.at(-1)!.content);

describe("permission requests on a terminal", () => {
  test("alice's write is asked as hers and allowed; her command is refused with the user's reason", async () => {
    const server = startServer([
      { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "writer", prompt: "write notes.txt, then touch done.txt" } }] },
      { identity: "lead", text: "alice is on it." },
      { identity: "alice", toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "notes\n" } }] },
      { identity: "alice", toolCalls: [{ name: "shell", arguments: { command: "touch done.txt" } }], check: (r) => expect(lastToolText(r)).not.toContain("denied") },
      {
        identity: "alice",
        text: "notes.txt written; touch refused.",
        check: (r) => expect(lastToolText(r)).toBe("permission denied on the Lead's side: permission denied by the user for shell(touch done.txt); the user says: not now"),
      },
      { identity: "lead", text: "alice wrote notes.txt." },
    ]);
    const setup = teamSetup();
    const { child, until, type } = onPty(
      terminals,
      [AGENT_BINARY, "--workspace", setup.workspace, "--state-dir", setup.stateDir, "--base-url", server.url, "--permission-mode", "default"],
      { OPENAI_API_KEY: "test-key" },
      15_000,
    );

    let at = await until("> ");
    type("have alice write notes.txt\r");
    at = await until("teammate alice wants to run write_file (edit):", at);
    at = await until("+notes", at);
    at = await until("[N]ever this session", at);
    type("y\r");
    at = await until("teammate alice wants to run shell (execute):", at);
    at = await until("touch done.txt", at);
    at = await until("[N]ever this session", at);
    type("e\r");
    at = await until("why not? (sent to the model): ", at);
    type("not now\r");
    at = await until("alice wrote notes.txt.", at);
    await until("> ", at);
    type("exit\r");
    expect(await child.exited).toBe(0);
    server.assertDone();
    expect(readFileSync(join(setup.workspace, "notes.txt"), "utf8")).toBe("notes\n");
    expect(existsSync(join(setup.workspace, "done.txt"))).toBe(false);
  }, 40_000);
});
