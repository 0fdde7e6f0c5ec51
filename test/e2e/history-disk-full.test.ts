import { describe, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { openFileHistory } from "../../src/runtime/file-history.ts";
import { AGENT_BINARY } from "./agent-binary.ts";
import { runSetup, scriptedServers } from "./run-fixture.ts";

// The history file cannot grow (the disk filled up; here a file-size limit, which
// fails a write part-way the same way) while a run appends to it.

const startServer = scriptedServers();
const prlimit = Bun.which("prlimit");

describe.if(prlimit !== null)("a history append that fails part-way", () => {
  test("is cut back to the last whole record; --output json prints the error object, exit 5; the next run finds no half line", async () => {
    const server = startServer([{ text: "answered after the disk was freed" }]);
    const { workspace, stateDir: root, newSessionDir, run } = runSetup();
    // An earlier conversation (a session continued with -c below), so the file has whole records to keep.
    const stateDir = newSessionDir();
    const history = openFileHistory(stateDir, "lead");
    await history.beginTurn("00000000-0000-4000-8000-000000000001", [{ role: "user", content: "x".repeat(2_000) }], new Date());
    await history.finishTurn("00000000-0000-4000-8000-000000000001", new Date(), "success", "ok");
    history.close();
    const path = join(stateDir, "agents", "lead.jsonl");
    const before = readFileSync(path, "utf8");

    // Room for 40 more bytes: the next turn's first record is longer, so its write stops part-way.
    const limited = Bun.spawn(
      [prlimit!, `--fsize=${before.length + 40}`, AGENT_BINARY, "run", "hello", "-c",
        "--output", "json", "--workspace", workspace, "--state-dir", root],
      { env: { ...process.env, NO_COLOR: "1", OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: server.url }, stdout: "pipe", stderr: "pipe" },
    );
    const [stdout, stderr, code] = await Promise.all([
      new Response(limited.stdout).text(),
      new Response(limited.stderr).text(),
      limited.exited,
    ]);
    expect({ code, stderr }).toMatchObject({ code: 5, stderr: expect.stringMatching(/^agent: could not append to the history .*lead\.jsonl/) });
    expect(JSON.parse(stdout)).toMatchObject({ type: "result", is_error: true, exit_code: 5, error_code: "HISTORY_WRITE" });
    expect(readFileSync(path, "utf8")).toBe(before);
    expect(statSync(path).size).toBe(before.length);

    const again = await run(["hello", "-c", "--output", "json"], { env: { OPENAI_BASE_URL: server.url } });
    expect(again.stderr).not.toContain("half-written");
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ subtype: "success", result: "answered after the disk was freed" });
    server.assertDone();
  });
});
