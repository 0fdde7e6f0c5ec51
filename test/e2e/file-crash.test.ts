import { expect, test } from "bun:test";
import { closeSync, openSync, readFileSync, readSync, readdirSync, writeFileSync } from "node:fs";
import { TEMP_PREFIX } from "../../src/workspace-files/atomic-write.ts";
import { join } from "node:path";
import { ScriptedModelServer } from "../support/model-server.ts";
import { AGENT_BINARY, ensureBinary } from "./agent-binary.ts";
import { runSetup } from "./run-fixture.ts";

// kill -9 of the compiled binary at random points while the scripted model has it
// rewrite a 4 MiB file, turn after turn, with one of two contents: after each kill
// the file is one of them, byte for byte. (The 200-round version drives the tool in
// a small child process: test/workspace-files/crash-write.test.ts.)

const ROUNDS = 10;
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
      respond: () => {
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
      // When the second write (back to the first content, over the other) is being received, parsed and written: in even
      // rounds a random moment in the next 60 ms; in odd ones the moment the write shows (a temp file, or the
      // file's first byte changing), watched without yielding.
      await sent;
      if (round % 2 === 0) {
        await Bun.sleep(Math.random() * 60);
        child.kill("SIGKILL");
      } else {
        killWhenWriteShows(child, workspace, contents[1]![0]!);
      }
      await child.exited;
    } finally {
      await server.close();
    }
    const now = readFileSync(join(workspace, "big.txt"), "utf8");
    expect(now === contents[0] || now === contents[1]).toBe(true);
  }
}, 120_000);

/**
 * Kills `child` the moment its write shows in `workspace` — a temp file of ours,
 * or the file's first byte changed (a write in place) — or after 2 s.
 */
function killWhenWriteShows(child: { kill(signal: "SIGKILL"): void }, workspace: string, before: string): void {
  const file = join(workspace, "big.txt");
  const head = Buffer.alloc(1);
  const until = Date.now() + 2_000;
  while (Date.now() < until) {
    const fd = openSync(file, "r");
    readSync(fd, head, 0, 1, 0);
    closeSync(fd);
    if (head.toString() !== before || readdirSync(workspace).some((name) => name.startsWith(TEMP_PREFIX))) break;
  }
  child.kill("SIGKILL");
}
