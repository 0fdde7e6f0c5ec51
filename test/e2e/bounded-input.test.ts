import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { serializeMessage } from "../../src/core/message-format.ts";
import { AGENT_BINARY, ensureBinary } from "./agent-binary.ts";
import { expectError, expectOk, message, setup } from "./fixture.ts";

// What the CLI reads is bounded by the mailbox's cap (1 MiB by default), on the
// compiled binary: content piped to stdin is refused as soon as it passes the
// cap — the pipe is still open, so reading it all would never end — and a
// message file too large to be a message is listed, counted and refused by show without being read.

beforeAll(() => {
  ensureBinary();
}, 120_000);

const running: Subprocess[] = [];
afterEach(async () => {
  for (const child of running.splice(0)) {
    child.kill("SIGKILL");
    await child.exited;
  }
});

/** Runs the binary with a pipe on stdin that gets 2 MiB and is then left open; resolves when it exits (or gives up after 15 s). */
async function withEndlessStdin(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = Bun.spawn([AGENT_BINARY, ...args], {
    env: { ...process.env, NO_COLOR: "1", OPENAI_API_KEY: "test-key" },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  running.push(child);
  const chunk = "x".repeat(64 * 1024);
  // Written in the background: the child may stop reading (and exit) before all of it is taken.
  void (async () => {
    try {
      for (let n = 0; n < 32; n += 1) {
        // Awaited too: a write the closed pipe refuses may fail on its own promise, not only the flush's.
        await child.stdin.write(chunk);
        await child.stdin.flush();
      }
    } catch {
      // The child exited and closed its end.
    }
  })();
  const exited = await Promise.race([child.exited, Bun.sleep(15_000).then(() => null)]);
  const [stdout, stderr] = exited === null ? ["", "(still reading after 15 s)"] : await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()]);
  return { code: exited, stdout, stderr };
}

describe("stdin is read no further than the mailbox cap", () => {
  test("agent mailbox send --content-file -: refused with one line once past 1 MiB, the pipe still open", async () => {
    const { root } = setup();
    const result = await withEndlessStdin(["mailbox", "send", "--to", "lead", "--from", "ops", "--content-file", "-", "--state-dir", root]);
    expectError({ ...result, code: result.code ?? -1 }, 2, /the content on stdin passed 1048576 bytes, the cap on a message \(config mailbox\.maxContentBytes\); stopped reading/);
  }, 30_000);

  test("agent run -: the prompt refused with one line once past 1 MiB, before any model call", async () => {
    const { root } = setup();
    const workspace = join(root, "..", "workspace");
    mkdirSync(workspace);
    const result = await withEndlessStdin(["run", "-", "--base-url", "http://127.0.0.1:9/v1", "--workspace", workspace, "--state-dir", root]);
    expectError({ ...result, code: result.code ?? -1 }, 2, /the data on stdin passed 1048576 bytes, the cap on a message \(config mailbox\.maxContentBytes\); stopped reading/);
  }, 30_000);
});

describe("a message file too large to be a message is not read whole", () => {
  test("mailbox list and sessions list stat it and go on, a giant reason record too; mailbox show refuses it in one line", async () => {
    const { agent, stateDir, store } = setup();
    // A well-formed message of 7 MiB, placed around the store: larger than any message file
    // under the cap can be (its content JSON-escaped at worst, 6 bytes a byte), so never read whole.
    await store.send(message("lead", "small"));
    const big = message("lead", "y".repeat(7 * 1024 * 1024));
    const ready = join(stateDir, "mailboxes", "lead", "ready");
    mkdirSync(ready, { recursive: true });
    writeFileSync(join(ready, `${big.id}.json`), serializeMessage(big));

    const list = await agent("mailbox", "list", "--json");
    expectOk(list);
    type Entry = { file?: string; id: string | null; sender: string | null; size: number; reason?: string };
    const entries = (JSON.parse(list.stdout) as { agents: { messages: Entry[] }[] }).agents[0]!.messages;
    const listed = entries.find((entry) => entry.file === `${big.id}.json`)!;
    expect(listed).toMatchObject({ id: null, sender: null, size: serializeMessage(big).length });
    expect(listed.reason).toMatch(/^file is \d+ bytes, too large for a message under the cap of 1048576 content bytes \(mailbox\.maxContentBytes\); not read$/);
    expect(entries.filter((entry) => entry.id !== null)).toHaveLength(1);

    // A quarantined entry's reason record, as large: named by its size, not read.
    const quarantine = join(stateDir, "mailboxes", "lead", "quarantine");
    mkdirSync(quarantine, { recursive: true });
    writeFileSync(join(quarantine, "junk.json"), "{}");
    writeFileSync(join(quarantine, "junk.json.reason.json"), JSON.stringify({ reason: "z".repeat(7 * 1024 * 1024) }));
    const quarantined = await agent("mailbox", "list", "--json", "--state", "quarantine");
    expectOk(quarantined);
    expect((JSON.parse(quarantined.stdout) as { agents: { messages: Entry[] }[] }).agents[0]!.messages.map((entry) => entry.reason)).toEqual([
      expect.stringMatching(/^\(reason record is 73400\d\d bytes, too large to be one; not read\)$/),
    ]);

    // Outside quarantine an unreadable file is corrupt state: said in one line, the file still not read.
    expectError(await agent("mailbox", "show", big.id), 5, /corrupt state file .*: file is 7340\d+ bytes, too large for a message under the cap .*; not read;/);

    const sessions = await agent("sessions", "list", "--json");
    expectOk(sessions);
    expect(JSON.parse(sessions.stdout).sessions[0]).toMatchObject({ state: "pending", pending_work: "2 message(s) waiting" });
  }, 30_000);
});
