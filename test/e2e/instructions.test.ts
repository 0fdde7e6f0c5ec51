import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest } from "../support/model-server.ts";
import { runSetup, scriptedServers } from "./run-fixture.ts";

// Project instructions on the compiled binary: AGENTS.md (else CLAUDE.md) and the
// appended text reach the system prompt of every agent — Lead, teammate and
// `task` subagent — as delimited sections, with the environment section last.

const startServer = scriptedServers();
const RULE = "Always run `make check` before you say a change is done.";

const systemOf = (request: RecordedRequest | undefined) => {
  const first = request?.body.messages[0];
  expect(first?.role).toBe("system");
  return String(first?.content);
};

describe("AGENTS.md and the environment in every system prompt", () => {
  test("Lead, teammate and task subagent all get AGENTS.md, the appended text and the environment", async () => {
    const server = startServer([
      {
        identity: "lead",
        toolCalls: [
          { name: "task", arguments: { description: "look", prompt: "List the files." } },
          { name: "spawn_teammate", arguments: { name: "alice", role: "backend", prompt: "Say hello." } },
        ],
      },
      { identity: "lead/task-1", text: "There is AGENTS.md." },
      { identity: "alice", text: "Hello." },
      { identity: "lead", text: "Working on it." },
      { identity: "lead", text: "All done." },
    ]);
    const { run, workspace, root } = runSetup();
    writeFileSync(join(workspace, "AGENTS.md"), `# House rules\n\n${RULE}\n`);
    writeFileSync(join(workspace, "CLAUDE.md"), "NOT THIS ONE\n");
    // A git repository on branch feature/x (a HEAD file is all the detection reads).
    mkdirSync(join(workspace, ".git"));
    writeFileSync(join(workspace, ".git", "HEAD"), "ref: refs/heads/feature/x\n");
    const home = join(root, "home");
    mkdirSync(join(home, ".config", "agent"), { recursive: true });
    writeFileSync(join(home, ".config", "agent", "config.json"), JSON.stringify({ appendSystemPrompt: "From the user's config." }));
    const result = await run(
      ["go", "--base-url", server.url, "--permission-mode", "bypassPermissions", "--append-system-prompt", "From the flag."],
      { env: { HOME: home } },
    );
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "All done.\n" });
    server.assertDone();

    const today = new Date();
    const date = `${today.getFullYear()}-${String(today.getMonth() + 1).padStart(2, "0")}-${String(today.getDate()).padStart(2, "0")}`;
    const identities = new Set(server.requests.map((request) => request.identity));
    expect([...identities].sort()).toEqual(["alice", "lead", "lead/task-1"]);
    for (const identity of identities) {
      const system = systemOf(server.requests.find((request) => request.identity === identity));
      expect(system).toContain(`<project-instructions file="AGENTS.md">\n# House rules\n\n${RULE}\n</project-instructions>`);
      expect(system).not.toContain("NOT THIS ONE");
      expect(system).toContain("<appended-instructions>\nFrom the user's config.\n\nFrom the flag.\n</appended-instructions>");
      expect(system).toEndWith(
        `<environment>\nWorking directory: . (the workspace)\nPlatform: ${process.platform}\nToday's date: ${date}\nGit repository: yes, on branch feature/x\n</environment>`,
      );
      // The agent's own prompt comes first.
      expect(system.indexOf("<project-instructions")).toBeGreaterThan(100);
    }
    expect(systemOf(server.requests[0])).toStartWith("You are the Lead");
    expect(systemOf(server.requests.find((r) => r.identity === "alice"))).toStartWith("You are alice, a teammate (backend)");
    expect(systemOf(server.requests.find((r) => r.identity === "lead/task-1"))).toStartWith("You are a subagent");
  });

  test("CLAUDE.md when there is no AGENTS.md; a big file is cut at 32 KB with a note; no git repository", async () => {
    const server = startServer([{ text: "ok" }]);
    const { run, workspace } = runSetup();
    writeFileSync(join(workspace, "CLAUDE.md"), `${"x".repeat(40 * 1024)}\nTHE END\n`);
    const result = await run(["hi", "--base-url", server.url]);
    expect(result.code).toBe(0);
    const system = systemOf(server.requests[0]);
    expect(system).toContain('<project-instructions file="CLAUDE.md">\nxxx');
    expect(system).not.toContain("THE END");
    expect(system).toContain("[CLAUDE.md is 40969 bytes: only its first 32768 are included here; read the file for the rest]\n</project-instructions>");
    expect(system).toContain("Git repository: no\n</environment>");
    server.assertDone();
  });

  test("no instruction file: only the environment section is added", async () => {
    const server = startServer([{ text: "ok" }]);
    const { run } = runSetup();
    expect((await run(["hi", "--base-url", server.url])).code).toBe(0);
    const system = systemOf(server.requests[0]);
    expect(system).not.toContain("<project-instructions");
    expect(system).not.toContain("<appended-instructions");
    expect(system).toMatch(/\n\n<environment>\nWorking directory: \. \(the workspace\)\n[^]*<\/environment>$/);
    server.assertDone();
  });
});
