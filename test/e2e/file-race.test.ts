import { expect, test } from "bun:test";
import { mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type RecordedRequest, type ScriptedReply, ScriptedModelServer } from "../support/model-server.ts";
import { ensureBinary } from "./agent-binary.ts";
import { runSetup } from "./run-fixture.ts";

// The check-then-use race of issue 23, on the compiled binary: a background
// process swaps a workspace directory with a symlink, as fast as it can, while
// the scripted model writes, edits and reads a file through that directory as
// often as it can. Through a symlink to the outside: nothing outside may change
// and no read or grep may return outside content. Through a symlink to `.git` (inside
// the workspace, but guarded): git's config may not change.

interface Race {
  /** Tool results, in order. */
  results: string[];
  swaps: number;
}

/** `workspace/real` (a directory holding `name`) and `workspace/spare` (a symlink to `spareTarget`) swapped for `ms`. */
async function race(setup: ReturnType<typeof runSetup>, spareTarget: string, name: string, ms: number, grep = false): Promise<Race> {
  const { workspace, run } = setup;
  mkdirSync(join(workspace, "real"));
  writeFileSync(join(workspace, "real", name), "inside 0\n");
  symlinkSync(spareTarget, join(workspace, "spare"));
  const results: string[] = [];
  let started = 0;
  const respond = (request: RecordedRequest): ScriptedReply => {
    // The results of the previous reply's calls: everything after the last assistant message.
    const messages = request.body.messages;
    const since = messages.findLastIndex((m) => m.role === "assistant");
    for (const m of since < 0 ? [] : messages.slice(since + 1)) if (m.role === "tool") results.push(String(m.content));
    // A request without tools is the history being summarised: not a turn.
    if (!request.body.tools?.length) return { text: "The Lead writes, edits and reads one file, over and over." };
    started ||= Date.now();
    if (Date.now() - started > ms) return { text: "done" };
    const path = `real/${name}`;
    const calls = Array.from({ length: 10 }, () => [
      { name: "write_file", arguments: { path, content: "inside 0\n" } },
      { name: "edit_file", arguments: { path, old_string: " 0\n", new_string: " 1\n" } },
      { name: "read_file", arguments: { path } },
      ...(grep ? [{ name: "grep", arguments: { pattern: "inside|secret", path: "real" } }] : []),
    ]).flat();
    return { toolCalls: calls };
  };
  const server = ScriptedModelServer.start([], { respond });
  const flipper = Bun.spawn([process.execPath, join(import.meta.dir, "flip-dir.ts"), join(workspace, "real"), join(workspace, "spare")], {
    stdout: "pipe",
    stderr: "inherit",
  });
  const output = flipper.stdout.getReader();
  try {
    await output.read();
    const result = await run(["--base-url", server.url, "--permission-mode", "acceptEdits", "--max-turns", "100000", "go"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("done\n");
  } finally {
    flipper.kill("SIGTERM");
    await flipper.exited;
    await server.close();
  }
  const swaps = Number(new TextDecoder().decode((await output.read()).value).trim());
  return { results, swaps };
}

test("a directory swapped with a symlink to the outside for 10 s: 0 writes, edits, reads or greps outside", async () => {
  ensureBinary();
  const setup = runSetup();
  const outside = join(setup.root, "outside");
  mkdirSync(outside);
  writeFileSync(join(outside, "x"), "outside-secret 0\n");
  const { results, swaps } = await race(setup, "../outside", "x", 10_000, true);
  const refused = results.filter((text) => text.includes("outside the workspace")).length;
  console.log(JSON.stringify({ toolCalls: results.length, refusedAsOutside: refused, swaps }));
  expect(readdirSync(outside)).toEqual(["x"]);
  expect(readFileSync(join(outside, "x"), "utf8")).toBe("outside-secret 0\n");
  expect(results.filter((text) => text.includes("outside-secret"))).toEqual([]);
  // The race was run: many calls, and the swaps made some of them meet the symlink.
  expect(results.length).toBeGreaterThan(300);
  expect(refused).toBeGreaterThan(0);
  expect(swaps).toBeGreaterThan(1000);
}, 120_000);

test("a directory swapped with a symlink to .git for 5 s: git's config never changes", async () => {
  ensureBinary();
  const setup = runSetup();
  const git = join(setup.workspace, ".git");
  mkdirSync(git);
  writeFileSync(join(git, "config"), "[core] 0\n");
  const { results, swaps } = await race(setup, ".git", "config", 5_000);
  const refused = results.filter((text) => /permission denied|leads to \.git\/config/.test(text)).length;
  console.log(JSON.stringify({ toolCalls: results.length, refusedAsGuarded: refused, swaps }));
  expect(readdirSync(git)).toEqual(["config"]);
  expect(readFileSync(join(git, "config"), "utf8")).toBe("[core] 0\n");
  expect(results.length).toBeGreaterThan(150);
  expect(refused).toBeGreaterThan(0);
}, 120_000);
