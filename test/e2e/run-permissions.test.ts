import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runSetup, scriptedServers } from "./run-fixture.ts";

// Permission rules given on the command line (--allow / --deny, repeatable) on
// the compiled binary, headless in the default mode, where an unruled edit or
// command is denied.

const startServer = scriptedServers();

const lastToolResult = (body: { messages: Array<Record<string, unknown>> }) => String(body.messages.at(-1)!.content);

describe("agent run --allow / --deny", () => {
  test("an allowed command and edit run headless; a denied path is refused even though write_file is allowed", async () => {
    const server = startServer([
      { toolCalls: [{ name: "shell", arguments: { command: "echo ruled-in" } }] },
      { check: (r) => expect(lastToolResult(r.body)).toContain("ruled-in"), toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "ok\n" } }] },
      { check: (r) => expect(lastToolResult(r.body)).toContain("created notes.txt"), toolCalls: [{ name: "write_file", arguments: { path: "secret.env", content: "x" } }] },
      { check: (r) => expect(lastToolResult(r.body)).toContain("permission denied"), toolCalls: [{ name: "shell", arguments: { command: "ls" } }] },
      { check: (r) => expect(lastToolResult(r.body)).toContain("permission denied"), text: "done" },
    ]);
    const { run, workspace } = runSetup();
    const result = await run([
      "--base-url",
      server.url,
      "--allow",
      "shell(echo*)",
      "--allow",
      "write_file",
      "--deny",
      "write_file(*.env)",
      "go",
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("done\n");
    expect(readFileSync(join(workspace, "notes.txt"), "utf8")).toBe("ok\n");
    expect(existsSync(join(workspace, "secret.env"))).toBe(false);
    server.assertDone();
  });

  test("a malformed rule is a usage error before any model call", async () => {
    const server = startServer([]);
    const { run } = runSetup();
    const result = await run(["--base-url", server.url, "--allow", "shell(unclosed", "go"]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    server.assertDone();
  });
});
