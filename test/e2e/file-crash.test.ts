import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ScriptedModelServer } from "../support/model-server.ts";
import { AGENT_BINARY, ensureBinary } from "./agent-binary.ts";
import { runSetup } from "./run-fixture.ts";

// kill -9 of the compiled binary while the scripted model has it rewrite a 4 MiB
// file: the moment the write shows (a temp file beside it, or the file's first
// byte changing), or a random 0-20 ms after; the file is then one of the two
// contents, byte for byte. The 200-round version drives the tool in a small
// child process (test/workspace-files/crash-write.test.ts). Here the old in-place
// write was over (in well under a millisecond) before the kill could land, so it
// is that test, not this one, that catches a torn write.

// 10 in the suite; FILE_CRASH_ROUNDS=200 for the acceptance run (about 200 s on the 2-core machine).
const ROUNDS = Number(process.env.FILE_CRASH_ROUNDS ?? 10);
const SIZE = 4 * 1024 * 1024;

test(`kill -9 of agent run during write_file, ${ROUNDS} rounds: the file is always the old or the new content`, async () => {
  ensureBinary();
  const contents = ["a".repeat(SIZE - 1) + "\n", `${"0123456789abcdef".repeat(SIZE / 16 - 1)}${"b".repeat(15)}\n`];
  for (let round = 0; round < ROUNDS; round += 1) {
    const { workspace, stateDir } = runSetup();
    writeFileSync(join(workspace, "big.txt"), contents[0]!);
    let turn = 0;
    let secondReply: () => void = () => {};
    const sent = new Promise<void>((resolve) => (secondReply = resolve));
    const server = ScriptedModelServer.start([], {
      respond: (request) => {
        // A request without tools is the history being summarised (4 MiB arguments fill the context): not a turn.
        if (!request.body.tools?.length) return { text: "The Lead rewrites big.txt." };
        turn += 1;
        if (turn === 2) secondReply();
        return { toolCalls: [{ name: "write_file", arguments: { path: "big.txt", content: contents[turn % 2]! } }] };
      },
    });
    try {
      const child = Bun.spawn(
        [AGENT_BINARY, "run", "--base-url", server.url, "--workspace", workspace, "--state-dir", stateDir, "--permission-mode", "acceptEdits", "--max-turns", "100000", "go"],
        { env: { ...process.env, OPENAI_API_KEY: "test-key", NO_COLOR: "1" }, stdout: "ignore", stderr: "ignore" },
      );
      // When the second write (back to the first content, over the other) shows — a temp file, or the file's
      // first byte changing, watched without yielding — at once in odd rounds, a random 0-20 ms later in even
      // ones (the new content written, being fsynced or renamed).
      await sent;
      const delay = round % 2 === 0 ? Math.random() * 20 : 0;
      const killer = Bun.spawn([process.execPath, join(import.meta.dir, "kill-on-write.ts"), String(child.pid), join(workspace, "big.txt"), contents[1]![0]!, String(delay)]);
      await killer.exited;
      await child.exited;
    } finally {
      await server.close();
    }
    const now = readFileSync(join(workspace, "big.txt"), "utf8");
    expect(now === contents[0] || now === contents[1]).toBe(true);
  }
}, 60_000 + ROUNDS * 6_000);
