import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary, runAgent } from "../e2e/agent-binary.ts";
import { type RecordedRequest, type ScriptedReply, ScriptedModelServer } from "../support/model-server.ts";
import { requirePrerequisite } from "../support/prerequisites.ts";
import { tempDir } from "../support/temp-dir.ts";
import { sandboxProblem } from "./attack-fixture.ts";

// A tool result over compaction.largeToolResultChars leaves the history with a
// note saying how to read the rest. The state root is closed to the file tools
// and hidden from the sandbox, so the note must name a way that works — and
// that way must open nothing else of the state.

const servers: ScriptedModelServer[] = [];
beforeAll(() => {
  ensureBinary();
}, 120_000);
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

/** 47 500 characters of numbered lines (read_file returns them whole), so any slice says where it came from. */
const BIG = Array.from({ length: 1_900 }, (_, i) => `line ${String(i).padStart(4, "0")}`.padEnd(24, ".") + "\n").join("");

const lastContent = (request: RecordedRequest) => String(request.body.messages.at(-1)?.content ?? "");

/** The read the note asks for: the call it names, with its arguments. */
function readTheNoteSays(note: string): { name: string; arguments: Record<string, unknown> } {
  const attachment = /read_attachment, id "([0-9a-f]{32})", offset (\d+)/.exec(note);
  if (attachment) return { name: "read_attachment", arguments: { id: attachment[1], offset: Number(attachment[2]) } };
  // Earlier builds named a file under the state root, to open with read_file.
  const file = /saved to (\S+) \(/.exec(note);
  if (file) return { name: "read_file", arguments: { path: file[1] } };
  throw new Error(`the note names no way to read the result: ${note.slice(0, 300)}`);
}

/**
 * `agent run` whose model reads big.txt whole, then reads on as the note in its
 * history says, then tries `probes(sessionDir)` one call each.
 */
async function run(probes: (sessionDir: string) => { name: string; arguments: Record<string, unknown> }[], flags: string[] = []) {
  const root = realpathSync(tempDir("agent-large-results-"));
  const workspace = join(root, "workspace");
  mkdirSync(join(workspace, ".agent"), { recursive: true });
  writeFileSync(join(workspace, "big.txt"), BIG);
  // Past 40 000 characters the history is compacted: saving the big result is enough, and the 32 KiB read
  // of it fits, so no summary is asked for.
  writeFileSync(join(workspace, ".agent", "config.json"), JSON.stringify({ compaction: { thresholdChars: 40_000, largeToolResultChars: 5_000 } }));
  const sessionDir = () => {
    const sessions = join(workspace, ".agent", "state", "sessions");
    return join(sessions, readdirSync(sessions)[0] as string);
  };
  let planned: { name: string; arguments: Record<string, unknown> }[] | undefined;
  const script: ScriptedReply[] = [{ toolCalls: [{ name: "read_file", arguments: { path: "big.txt" } }] }];
  const server = ScriptedModelServer.start(script, {
    respond: (request) => {
      if (planned === undefined) {
        // Compaction ran before this request: the note is in the history now.
        const note = request.body.messages.map((message) => String(message.content ?? "")).find((content) => content.startsWith("[tool result saved"));
        if (note === undefined) throw new Error("no tool result was saved");
        planned = [readTheNoteSays(note), ...probes(sessionDir())];
      }
      const index = server.requests.indexOf(request) - script.length;
      const call = planned[index];
      return call ? { toolCalls: [call] } : { text: "done" };
    },
  });
  servers.push(server);
  const result = await runAgent(["run", "--base-url", server.url, "--workspace", workspace, ...flags, "read big.txt"], {
    cwd: workspace,
    env: { OPENAI_API_KEY: "test-key-0123456789", AGENT_STATE_DIR: undefined, XDG_CONFIG_HOME: join(root, "xdg"), HOME: join(root, "home") },
  });
  expect(server.problems).toEqual([]);
  // The results of the calls after the scripted one, in order.
  const results = server.requests.slice(script.length + 1).map(lastContent);
  return { result, results, planned: planned ?? [], server };
}

describe("a large tool result saved by compaction", () => {
  test("the model reads the rest as the note says; the state's other files stay closed to the file tools", async () => {
    const { result, results, planned, server } = await run((sessionDir) => [
      { name: "read_file", arguments: { path: join(sessionDir, "agents", "lead.jsonl") } },
      { name: "grep", arguments: { pattern: "line 2999", path: join(sessionDir) } },
      { name: "read_attachment", arguments: { id: "../agents/lead.jsonl" } },
    ]);
    expect(result.code).toBe(0);
    // The history the model sees holds the note and a preview, not the whole result.
    const second = server.requests[1] as RecordedRequest;
    expect(JSON.stringify(second.body.messages)).not.toContain("line 2999");
    const [read, history, grep, traversal] = results;
    const offset = Number((planned[0] as { arguments: { offset?: number } }).arguments.offset);
    expect(read).toStartWith(`[attachment `);
    expect(read).toContain(BIG.slice(offset, offset + 30_000));
    expect(history).toMatch(/state directory/);
    expect(history).not.toContain('"role"');
    expect(grep).toMatch(/state directory/);
    expect(traversal).toMatch(/32 hex digits/);
    expect(traversal).not.toContain('"role"');
  });
});

describe("the saved result in the sandbox", () => {
  const sandboxTest = requirePrerequisite("bubblewrap", sandboxProblem()) ? test : test.skip;

  sandboxTest("a sandboxed shell cannot read the saved result's file or the histories beside it", async () => {
    const { result, results } = await run((sessionDir) => [
      { name: "shell", arguments: { command: `cat ${join(sessionDir, "agents", "lead.jsonl")}; ls ${join(sessionDir, "attachments")}` } },
    ], ["--permission-mode", "bypassPermissions"]);
    expect(result.code).toBe(0);
    expect(results[0]).toStartWith("[attachment ");
    expect(results[1]).not.toContain('"role"');
    expect(results[1]).toMatch(/No such file or directory/);
  });
});
