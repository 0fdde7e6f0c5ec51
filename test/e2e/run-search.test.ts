import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../support/temp-dir.ts";
import { REPO_ROOT, runAgent } from "./agent-binary.ts";
import { lastToolResult as lastResult, scriptedServers, toolCallReply as call } from "./run-fixture.ts";

// The compiled binary searching real trees in `plan` mode (grep and glob are
// reads, allowed in every mode): this very repository, node_modules and all,
// and a workspace whose state root sits in it, as it does by default.

const startServer = scriptedServers();

describe("agent run: grep and glob on real trees", () => {
  test("in this repository, glob **/*.ts lists src/ and test/ and no node_modules; grep finds a class with its line", async () => {
    // The point is a tree with an installed node_modules, as a user's checkout has.
    expect(existsSync(join(REPO_ROOT, "node_modules", "zod"))).toBe(true);
    const server = startServer([
      call("glob", { pattern: "**/*.ts" }),
      call("glob", { pattern: "src/*.ts" }, (text) => {
        // Past the result cap (500) the last line says how many more there are: not a path.
        const paths = text.split("\n").filter((line) => !line.startsWith("[… "));
        // Newest first, capped: which files make the cut depends on their times, so the
        // whole listing is checked for what it must not hold, and a narrower one for a file.
        expect(paths.filter((path) => path.includes("node_modules"))).toEqual([]);
        // The listing is capped: past the cap its last line says how many more there are.
        expect(paths.filter((path) => !/^(src|test|bench|examples|scripts)\/|^[^/]+\.ts$|^\[… \d+ more files not shown/.test(path))).toEqual([]);
      }),
      call("grep", { pattern: "class FileMailboxStore", path: "src" }, (text) => {
        expect(text.split("\n")).toContain("src/main.ts");
      }),
      {
        text: "found",
        check: (r) => {
          const text = lastResult(r);
          expect(text).toMatch(/^src\/mailbox\/file-store\.ts:\d+:export class FileMailboxStore /);
          expect(text.split("\n")).toHaveLength(1);
        },
      },
    ]);
    const stateDir = tempDir("agent-search-state-");
    const result = await runAgent(
      ["run", "--base-url", server.url, "--permission-mode", "plan", "--workspace", REPO_ROOT, "--state-dir", stateDir, "find the store"],
      { env: { OPENAI_API_KEY: "test-key" } },
    );
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "found\n" });
    server.assertDone();
  });

  test("with the state root in the workspace (the default), neither lists nor searches it, and both refuse it", async () => {
    const workspace = realpathSync(tempDir("agent-search-ws-"));
    mkdirSync(join(workspace, "src"));
    writeFileSync(join(workspace, "src", "notes.md"), "MARKER-51c2 in the notes\n");
    const server = startServer([
      call("grep", { pattern: "MARKER-51c2", output_mode: "files_with_matches" }),
      // The prompt holds the marker too, in the Lead's history under .agent/state/ by now.
      call("grep", { pattern: "MARKER", path: ".agent/state" }, (text) => expect(text).toBe("src/notes.md")),
      // Refused by the permission policy (or by the tool, whose fence says the same): either names the state directory.
      call("glob", { pattern: "**/*", include_ignored: true }, (text) => expect(text).toMatch(/"\.agent\/state".* the agent's state directory/)),
      call("glob", { pattern: ".agent/state/**", path: "." }, (text) => expect(text).toBe("src/notes.md")),
      { text: "done", check: (r) => expect(lastResult(r)).toBe('no files match ".agent/state/**" in .') },
    ]);
    const result = await runAgent(
      ["run", "--base-url", server.url, "--permission-mode", "plan", "--workspace", workspace, "look for MARKER-51c2"],
      { env: { OPENAI_API_KEY: "test-key", AGENT_STATE_DIR: undefined } },
    );
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "done\n" });
    expect(existsSync(join(workspace, ".agent"))).toBe(true);
    server.assertDone();
  });
});
