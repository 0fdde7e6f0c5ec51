import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ScriptedReply, ScriptedModelServer } from "../support/model-server.ts";
import { ensureBinary, runAgent } from "./agent-binary.ts";
import { runSetup } from "./run-fixture.ts";

// The change journal and checkpoints (docs/files.md#checkpoints-and-rewind): a
// session whose Lead writes three files over two turns, then `agent rewind
// --to 2` puts them back as they were before its second turn, byte for byte —
// after refusing, without --force, a file changed meanwhile from outside.

const servers: ScriptedModelServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});
beforeAll(() => {
  ensureBinary();
}, 120_000);

const call = (name: string, args: Record<string, unknown>): ScriptedReply => ({ identity: "lead", toolCalls: [{ name, arguments: args }] });
// Bytes a careless restore would change: CRLF, no final newline, non-ASCII.
const A1 = "alpha\r\nfirst turn ✓";
const C0 = "config = 0\n";
const C1 = "config = 1\n# set in turn 1\n";

describe("agent rewind", () => {
  test("--to 2 restores the files changed in turn 2 byte for byte; a file changed from outside is refused without --force", async () => {
    const { workspace, stateDir, run, sessionDir } = runSetup();
    writeFileSync(join(workspace, "c.conf"), C0);
    const server = ScriptedModelServer.start([
      // Turn 1: a.txt created, c.conf edited.
      call("write_file", { path: "a.txt", content: A1 }),
      call("read_file", { path: "c.conf" }),
      call("write_file", { path: "c.conf", content: C1 }),
      { identity: "lead", text: "turn 1 done" },
      // Turn 2: a.txt rewritten, b.txt created, c.conf edited.
      call("write_file", { path: "a.txt", content: "alpha, second turn\n" }),
      call("write_file", { path: "b.txt", content: "new in turn 2\n" }),
      call("edit_file", { path: "c.conf", old_string: "config = 1", new_string: "config = 2" }),
      { identity: "lead", text: "turn 2 done" },
    ]);
    servers.push(server);
    const common = ["--session", "rewind-demo", "--permission-mode", "acceptEdits", "--base-url", server.url];
    expect((await run([...common, "turn one"])).code).toBe(0);
    expect((await run([...common, "turn two"])).code).toBe(0);
    server.assertDone();
    expect(readFileSync(join(workspace, "c.conf"), "utf8")).toBe("config = 2\n# set in turn 1\n");

    const admin = (...args: string[]) => runAgent([...args, "--session", "rewind-demo", "--workspace", workspace, "--state-dir", stateDir]);
    const listed = await admin("changes");
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain("lead #2");
    expect(listed.stdout.split("\n").filter((line) => /^\d+ /.test(line))).toHaveLength(5);

    // Changed from outside since turn 2: refused, nothing restored.
    writeFileSync(join(workspace, "c.conf"), "config = edited by hand\n");
    const refused = await admin("rewind", "--to", "2");
    expect(refused.code).toBe(5);
    expect(refused.stderr.trim()).toBe(
      "agent: agent rewind refused: c.conf changed since by something outside the agents; nothing was restored (--force restores them too, losing those changes)",
    );
    expect(readFileSync(join(workspace, "a.txt"), "utf8")).toBe("alpha, second turn\n");

    const dry = await admin("rewind", "--to", "2", "--dry-run");
    expect(dry.stdout).toContain("would restore a.txt");
    expect(dry.stdout).toContain("would remove b.txt");

    const forced = await admin("rewind", "--to", "2", "--force");
    expect({ code: forced.code, stderr: forced.stderr }).toEqual({ code: 0, stderr: "" });
    expect(readFileSync(join(workspace, "a.txt"))).toEqual(Buffer.from(A1));
    expect(readFileSync(join(workspace, "c.conf"))).toEqual(Buffer.from(C1));
    expect(existsSync(join(workspace, "b.txt"))).toBe(false);

    // The Lead is told, and the journal keeps the rewind (so it can be undone in turn).
    const history = readFileSync(join(sessionDir(), "agents", "lead.jsonl"), "utf8");
    expect(history).toContain("[agent rewind] The user put the workspace's files back as they were before turn 2");
    const after = await admin("changes", "--agent", "rewind");
    expect(after.stdout.split("\n").filter((line) => /^\d+ /.test(line))).toHaveLength(3);
  }, 90_000);

  test("files of an --add-dir directory come back too while the session's run adds it; named and left alone once it does not", async () => {
    const { root, workspace, stateDir, run } = runSetup();
    const shared = join(root, "shared");
    mkdirSync(shared);
    writeFileSync(join(shared, "s.txt"), "shared 0\n");
    const server = ScriptedModelServer.start([
      call("read_file", { path: "../shared/s.txt" }),
      call("write_file", { path: "../shared/s.txt", content: "shared 1\n" }),
      { identity: "lead", text: "turn 1 done" },
      call("edit_file", { path: join(shared, "s.txt"), old_string: "shared 1", new_string: "shared 2" }),
      call("write_file", { path: "../shared/new.txt", content: "made in turn 2\n" }),
      call("write_file", { path: "w.txt", content: "workspace 2\n" }),
      { identity: "lead", text: "turn 2 done" },
    ]);
    servers.push(server);
    const common = ["--session", "rewind-added", "--permission-mode", "acceptEdits", "--base-url", server.url];
    expect((await run([...common, "turn one", "--add-dir", shared])).code).toBe(0);
    expect((await run([...common, "turn two", "--add-dir", shared])).code).toBe(0);
    server.assertDone();
    expect(readFileSync(join(shared, "s.txt"), "utf8")).toBe("shared 2\n");

    const admin = (...args: string[]) => runAgent([...args, "--session", "rewind-added", "--workspace", workspace, "--state-dir", stateDir]);
    const dry = await admin("rewind", "--to", "2", "--dry-run");
    expect(dry.stdout.split("\n").filter((line) => line.startsWith("  ")).sort()).toEqual([
      "  would remove ../shared/new.txt",
      "  would remove w.txt",
      "  would restore ../shared/s.txt",
    ]);
    const rewound = await admin("rewind", "--to", "2");
    expect({ code: rewound.code, stderr: rewound.stderr }).toEqual({ code: 0, stderr: "" });
    expect(readFileSync(join(shared, "s.txt"), "utf8")).toBe("shared 1\n");
    expect(existsSync(join(shared, "new.txt"))).toBe(false);
    expect(existsSync(join(workspace, "w.txt"))).toBe(false);

    // A later run without --add-dir: the directory is no longer the session's, so its file is named and not touched.
    server.push({ identity: "lead", text: "turn 3 done" });
    expect((await run([...common, "turn three"])).code).toBe(0);
    const outside = await admin("rewind", "--to", "1");
    expect({ code: outside.code, stderr: outside.stderr }).toEqual({ code: 0, stderr: "" });
    expect(outside.stdout).toContain(
      "  left ../shared/s.txt as it is (outside the workspace and the directories the session's last run added with --add-dir)\n",
    );
    expect(readFileSync(join(shared, "s.txt"), "utf8")).toBe("shared 1\n");
  }, 90_000);
});
