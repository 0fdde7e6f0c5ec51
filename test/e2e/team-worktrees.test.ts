import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest } from "../support/model-server.ts";
import { git } from "../../src/worktrees/git.ts";
import { lastToolResult, scriptedServers } from "./run-fixture.ts";
import { TeamList, eventsIn, teamSetup } from "./team-fixture.ts";

// Worktree isolation on the compiled binary, in a real git repository: alice and
// bob each change line two of notes.txt on their own branch. The Lead merges
// alice's branch (a merge commit), then bob's, which conflicts: the merge is
// aborted, the Lead's tree is left clean (no MERGE_HEAD). Then `agent team send`
// and `agent drain` find alice's worktree again after its directory was deleted,
// and `agent team rm bob` removes bob's worktree and keeps its branch.

const startServer = scriptedServers();

async function gitOut(cwd: string, ...args: string[]): Promise<string> {
  const result = await git(cwd, args);
  if (result.code !== 0) throw new Error(`git ${args.join(" ")} failed: ${result.stderr}`);
  return result.stdout.trim();
}

async function repository(workspace: string): Promise<void> {
  await gitOut(workspace, "init", "--quiet", "--initial-branch=main");
  await gitOut(workspace, "config", "user.name", "Test User");
  await gitOut(workspace, "config", "user.email", "test@example.invalid");
  writeFileSync(join(workspace, "notes.txt"), "one\ntwo\nthree\n");
  await gitOut(workspace, "add", "notes.txt");
  await gitOut(workspace, "commit", "--quiet", "-m", "start");
}

const spawnIsolated = (name: string, line: string) => ({
  name: "spawn_teammate",
  arguments: { name, role: "editor", prompt: `Change line two of notes.txt to "${line}".`, isolation: "worktree" },
});

/** The content of the last event the Lead was given. */
/** The last result a Lead request carries (an idle notice may follow it). */
const lastEvent = (request: RecordedRequest) => eventsIn(request).findLast((event) => event.kind === "result")!;

describe("worktree teammates", () => {
  test("two teammates edit one file on their branches; the first merges, the second conflicts cleanly; restore and rm keep the work", async () => {
    const { run, drain, agent, workspace, sessionDir } = teamSetup();
    await repository(workspace);
    let releaseBob!: () => void;
    const bobMayFinish = new Promise<void>((resolve) => {
      releaseBob = resolve;
    });
    const server = startServer([
      {
        identity: "lead",
        toolCalls: [spawnIsolated("alice", "alice"), spawnIsolated("bob", "bob")],
        check: (request) => {
          const tools = (request.body.tools ?? []).map((tool) => tool.function.name);
          expect(tools).toContain("merge_teammate");
          const spawn = request.body.tools!.find((tool) => tool.function.name === "spawn_teammate")!;
          expect(JSON.stringify(spawn.function.parameters)).toContain('"worktree"');
        },
      },
      {
        identity: "lead",
        text: "alice and bob are editing notes.txt.",
        check: (request) => {
          const results = request.body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
          expect(results[0]).toMatch(/in its own worktree on branch agent\/[0-9a-f-]+\/alice/);
          expect(results[1]).toMatch(/in its own worktree on branch agent\/[0-9a-f-]+\/bob/);
        },
      },
      {
        identity: "alice",
        // Its workspace is its worktree: the Lead's notes.txt, five levels up, is outside it.
        toolCalls: [{ name: "read_file", arguments: { path: "../../../../../notes.txt" } }],
        check: (request) => expect(String(request.body.messages[0]?.content)).toContain("your own git worktree, on branch agent/"),
      },
      {
        identity: "alice",
        toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "one\nalice\nthree\n" } }],
        check: (request) => expect(lastToolResult(request)).toContain("outside the workspace"),
      },
      { identity: "alice", text: "Line two now says alice." },
      // bob edits with its shell, in its worktree, inside the sandbox.
      { identity: "bob", toolCalls: [{ name: "shell", arguments: { command: "pwd && printf 'one\\nbob\\nthree\\n' > notes.txt" } }] },
      {
        identity: "bob",
        text: "Line two now says bob.",
        // bob's result waits until the Lead has alice's: the order of the Lead's turns is then fixed.
        gate: bobMayFinish,
        check: (request) => {
          const output = lastToolResult(request);
          expect(output).toContain("[exit code 0]");
          expect(output).toMatch(/\.agent\/worktrees\/[0-9a-f-]+\/bob\n/);
        },
      },
      {
        identity: "lead",
        toolCalls: [{ name: "merge_teammate", arguments: { name: "alice" } }],
        check: (request) => {
          const event = lastEvent(request);
          expect(event.from).toBe("alice");
          expect(event.content).toContain("Line two now says alice.");
          expect(event.content).toMatch(/\[worktree: branch agent\/[0-9a-f-]+\/alice; changes since it branched:\nnotes\.txt \| 2 \+-\n1 file changed, 1 insertion\(\+\), 1 deletion\(-\)\]/);
          releaseBob();
        },
      },
      {
        identity: "lead",
        text: "alice's change is merged.",
        check: (request) => {
          expect(lastToolResult(request)).toMatch(/^merged agent\/[0-9a-f-]+\/alice into main \(merge commit [0-9a-f]+\):\nnotes\.txt \| 2 \+-/);
        },
      },
      {
        identity: "lead",
        toolCalls: [{ name: "merge_teammate", arguments: { name: "bob" } }],
        check: (request) => {
          const event = lastEvent(request);
          expect(event.from).toBe("bob");
          expect(event.content).toContain("notes.txt | 2 +-");
        },
      },
      {
        identity: "lead",
        text: "bob's change conflicts with alice's; I left it on its branch.",
        check: (request) => {
          const result = lastToolResult(request);
          expect(result).toContain("conflicts in notes.txt; the merge was aborted and the workspace is unchanged");
          expect(result.split("\n")).toHaveLength(1);
        },
      },
    ]);
    const result = await run([
      "Have alice and bob each change line two of notes.txt, then merge their work.",
      "--base-url",
      server.url,
      "--permission-mode",
      "acceptEdits",
      "--allow",
      "shell",
    ]);
    expect(result.code).toBe(0);
    server.assertDone();

    // The Lead's tree: alice's change merged, bob's conflict left no trace.
    expect(readFileSync(join(workspace, "notes.txt"), "utf8")).toBe("one\nalice\nthree\n");
    expect(await gitOut(workspace, "status", "--porcelain")).toBe("");
    expect(existsSync(join(workspace, ".git", "MERGE_HEAD"))).toBe(false);
    expect(await gitOut(workspace, "log", "-1", "--format=%s")).toMatch(/^Merge teammate alice \(agent\/[0-9a-f-]+\/alice\)$/);
    const team = JSON.parse(readFileSync(join(sessionDir(), "team.json"), "utf8"));
    const session = team.teammates[0].worktree.branch.split("/")[1];
    expect(sessionDir().endsWith(session)).toBe(true);
    const bob = team.teammates.find((t: { name: string }) => t.name === "bob").worktree;
    const alice = team.teammates.find((t: { name: string }) => t.name === "alice").worktree;
    expect(await gitOut(workspace, "show", `${bob.branch}:notes.txt`)).toBe("one\nbob\nthree");
    expect(alice.path).toBe(join(workspace, ".agent", "worktrees", session, "alice"));

    const listed = TeamList.parse(JSON.parse((await agent("team", "list", "--json")).stdout));
    expect(listed.teammates.map((t) => t.worktree?.branch)).toEqual([alice.branch, bob.branch]);
    expect((await agent("team", "list")).stdout).toContain(`branch ${bob.branch}`);

    // The next runtime finds alice's worktree again, even with its directory gone.
    rmSync(alice.path, { recursive: true, force: true });
    expect((await agent("team", "send", "alice", "Add done.txt saying done.")).code).toBe(0);
    const next = startServer([
      { identity: "alice", toolCalls: [{ name: "write_file", arguments: { path: "done.txt", content: "done\n" } }] },
      { identity: "alice", text: "Added done.txt." },
      // Her answer is the operator's; the Lead hears only that she is idle again.
      { identity: "lead", text: "noted", check: (request) => expect(eventsIn(request).at(-1)).toEqual({ from: "alice", kind: "idle", content: "alice is idle" }) },
    ]);
    const drained = await drain(["--base-url", next.url, "--permission-mode", "acceptEdits"]);
    expect(drained.code).toBe(0);
    next.assertDone();
    // The operator asked, so the answer with its worktree report is the operator's (in the mailbox of "user").
    const answers = readdirSync(join(sessionDir(), "mailboxes", "user", "ready")).filter((n) => n.endsWith(".json"));
    expect(answers).toHaveLength(1);
    const answer = JSON.parse(readFileSync(join(sessionDir(), "mailboxes", "user", "ready", answers[0]!), "utf8"));
    expect(answer.content).toMatch(/done\.txt +\| 1 \+\nnotes\.txt \| 2 \+-\n2 files changed, 2 insertions\(\+\), 1 deletion\(-\)\]$/);
    expect(readFileSync(join(alice.path, "done.txt"), "utf8")).toBe("done\n");
    expect(existsSync(join(workspace, "done.txt"))).toBe(false);

    // rm: the worktree goes, the branch (with bob's unmerged commit) stays.
    const removed = await agent("team", "rm", "bob");
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain(`worktree ${bob.path} removed; its branch ${bob.branch} is kept with 1 commit(s) not merged`);
    expect(existsSync(bob.path)).toBe(false);
    expect(await gitOut(workspace, "show", `${bob.branch}:notes.txt`)).toBe("one\nbob\nthree");
    expect(await gitOut(workspace, "status", "--porcelain")).toBe("");
  });

  test("a merge into a workspace with uncommitted changes is refused with one line, and nothing changes", async () => {
    const { run, workspace } = teamSetup();
    await repository(workspace);
    writeFileSync(join(workspace, "notes.txt"), "the user's unsaved edit\n");
    const head = await gitOut(workspace, "rev-parse", "HEAD");
    const server = startServer([
      { identity: "lead", toolCalls: [spawnIsolated("alice", "alice")] },
      { identity: "lead", text: "alice is on it." },
      { identity: "alice", toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "one\nalice\nthree\n" } }] },
      { identity: "alice", text: "Line two now says alice." },
      { identity: "lead", toolCalls: [{ name: "merge_teammate", arguments: { name: "alice" } }] },
      {
        identity: "lead",
        text: "Your tree has uncommitted changes; commit them and I will merge.",
        check: (request) => {
          const result = lastToolResult(request);
          expect(result).toContain("cannot merge alice: the workspace has uncommitted changes (notes.txt); commit or stash them, then merge again");
          expect(result.split("\n")).toHaveLength(1);
        },
      },
    ]);
    const result = await run(["Have alice change line two, then merge.", "--base-url", server.url, "--permission-mode", "acceptEdits"]);
    expect(result.code).toBe(0);
    server.assertDone();
    expect(readFileSync(join(workspace, "notes.txt"), "utf8")).toBe("the user's unsaved edit\n");
    expect(await gitOut(workspace, "rev-parse", "HEAD")).toBe(head);
    expect(existsSync(join(workspace, ".git", "MERGE_HEAD"))).toBe(false);
  });

  test("outside git, isolation is not offered, and a definition asking for it is refused with one line", async () => {
    const { run, workspace } = teamSetup();
    const { mkdirSync } = await import("node:fs");
    mkdirSync(join(workspace, ".agent", "agents"), { recursive: true });
    writeFileSync(join(workspace, ".agent", "agents", "isolated.md"), "---\nname: isolated\ndescription: works on its own branch\nisolation: worktree\n---\n");
    const server = startServer([
      {
        identity: "lead",
        toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "r", prompt: "p", agent: "isolated" } }],
        check: (request) => {
          const tools = (request.body.tools ?? []).map((tool) => tool.function.name);
          expect(tools).not.toContain("merge_teammate");
          const spawn = request.body.tools!.find((tool) => tool.function.name === "spawn_teammate")!;
          expect(JSON.stringify(spawn.function.parameters)).not.toContain("isolation");
        },
      },
      {
        identity: "lead",
        text: "Not a git repository.",
        check: (request) => {
          const result = lastToolResult(request);
          expect(result).toContain('isolation "worktree" needs a git repository');
          expect(result).toContain("git init");
          expect(result.split("\n")).toHaveLength(1);
        },
      },
    ]);
    const result = await run(["Spawn an isolated teammate.", "--base-url", server.url]);
    expect(result.code).toBe(0);
    server.assertDone();
  });
});
