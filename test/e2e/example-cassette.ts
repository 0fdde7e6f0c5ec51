// Records examples/scripted-create-file.cassette.jsonl: the compiled binary runs
// with --record against the scripted test server (not a real model), so the
// README's offline quick start replays a real multi-step run with tool calls.
// Regenerate after a change to the Lead's system prompt or tools:
//
//   bun test/e2e/example-cassette.ts
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { ScriptedModelServer } from "../support/model-server.ts";
import { type AgentResult, REPO_ROOT, ensureBinary, runAgent } from "./agent-binary.ts";

export const EXAMPLE_CASSETTE = join(REPO_ROOT, "examples", "scripted-create-file.cassette.jsonl");
export const EXAMPLE_PROMPT = "Create hello.txt with a one-line greeting, read it back, and tell me what it says.";
/** The flags the README's replay command uses besides --replay and --workspace. */
export const EXAMPLE_FLAGS = ["--permission-mode", "acceptEdits"];
export const EXAMPLE_ANSWER = "hello.txt now says: Hello from agent!";

function exampleServer(): ScriptedModelServer {
  return ScriptedModelServer.start([
    { toolCalls: [{ id: "call_write", name: "write_file", arguments: { path: "hello.txt", content: "Hello from agent!\n" } }], usage: { prompt_tokens: 1180, completion_tokens: 31 } },
    { toolCalls: [{ id: "call_read", name: "read_file", arguments: { path: "hello.txt" } }], usage: { prompt_tokens: 1236, completion_tokens: 17 } },
    { text: EXAMPLE_ANSWER, usage: { prompt_tokens: 1270, completion_tokens: 12 } },
  ]);
}

/** Runs the example against a fresh scripted server, recording into `cassette` (replaced). */
export async function recordExample(cassette: string): Promise<AgentResult> {
  ensureBinary();
  rmSync(cassette, { force: true });
  const workspace = join(tmpdir(), `agent-example-${process.pid}-${Date.now()}`);
  mkdirSync(workspace);
  await using server = exampleServer();
  try {
    const result = await runAgent(
      ["run", EXAMPLE_PROMPT, ...EXAMPLE_FLAGS, "--workspace", workspace, "--base-url", server.url, "--record", cassette, "--quiet"],
      { env: { OPENAI_API_KEY: "scripted", AGENT_STATE_DIR: undefined } },
    );
    if (result.code !== 0 || result.stdout !== `${EXAMPLE_ANSWER}\n`) {
      throw new Error(`recording the example failed (exit ${result.code}): ${result.stderr}${result.stdout}`);
    }
    server.assertDone();
    return result;
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  await recordExample(EXAMPLE_CASSETTE);
  console.error(`recorded ${EXAMPLE_CASSETTE}`);
}
