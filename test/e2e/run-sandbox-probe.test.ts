import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lastToolResult, runSetup, scriptedServers, toolCallReply } from "./run-fixture.ts";
import { tempDir } from "../support/temp-dir.ts";

// `agent run` probes the sandbox while it sets up its session. Whatever runs
// first through the sandbox — a SessionStart hook fires before the first model
// request — gets the probe's verdict, never a guess: with a bwrap that cannot
// start, the hook is refused like a command, and the warning comes first.

const startServer = scriptedServers();

/** A PATH with `sh` and a bwrap that cannot create a sandbox (user namespaces refused). */
function failingBwrapPath(): string {
  const bin = tempDir("agent-failing-bwrap-");
  mkdirSync(bin, { recursive: true });
  symlinkSync(Bun.which("sh")!, join(bin, "sh"));
  writeFileSync(join(bin, "bwrap"), "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n");
  chmodSync(join(bin, "bwrap"), 0o755);
  return bin;
}

describe("the sandbox probed while the run sets up", () => {
  test("a bwrap that cannot start: the warning right after the init line, before the refused SessionStart hook and command", async () => {
    const { run, root, workspace } = runSetup();
    const hookRan = join(root, "HOOK-RAN");
    const commandRan = join(root, "COMMAND-RAN");
    mkdirSync(join(workspace, ".agent"));
    writeFileSync(
      join(workspace, ".agent", "config.json"),
      JSON.stringify({ hooks: { SessionStart: [{ hooks: [{ type: "command", command: `echo ran > ${hookRan}` }] }] } }),
    );
    const server = startServer([
      toolCallReply("shell", { command: `echo ran > ${commandRan}` }),
      { check: (r) => expect(lastToolResult(r)).toMatch(/^refused: commands run only inside the workspace-write sandbox, which cannot start here \(bwrap cannot create/), text: "done" },
    ]);
    const result = await run(["go", "--base-url", server.url, "--permission-mode", "bypassPermissions", "--trust-project", "--output-format", "stream-json"], {
      env: { PATH: failingBwrapPath() },
    });
    expect(result.code).toBe(0);
    server.assertDone();
    expect(existsSync(hookRan)).toBe(false);
    expect(existsSync(commandRan)).toBe(false);
    expect(result.stderr).toMatch(/warning: shell commands will be refused: the workspace-write sandbox cannot start here \(bwrap cannot create a sandbox here \(bwrap: No permissions/);
    const lines = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; subtype?: string; message?: unknown; sandbox?: string });
    const warning = lines.findIndex((line) => line.subtype === "warning" && String(line.message).startsWith("shell commands will be refused"));
    // Right after the init line (which says so), before the hook's refusal and every turn.
    expect(warning).toBe(1);
    expect(lines[0]).toMatchObject({ type: "system", subtype: "init", sandbox: "unavailable" });
    expect(String(lines[2]?.message)).toMatch(/^SessionStart/);
  });
});
