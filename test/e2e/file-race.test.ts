import { expect, test } from "bun:test";
import { mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type RecordedRequest, type ScriptedReply, ScriptedModelServer } from "../support/model-server.ts";
import { ensureBinary } from "./agent-binary.ts";
import { runSetup } from "./run-fixture.ts";

// The check-then-use race of issue 23, on the compiled binary: a background
// process swaps a workspace directory with a symlink to the outside, as fast as
// it can, for 10 s, while the scripted model writes, edits and reads a file
// through that directory as often as it can. Nothing outside may change and no
// read may return outside content.

const FLIP_MS = 10_000;
const OUTSIDE = "outside-secret 0\n";

test("a directory swapped with a symlink to the outside for 10 s: 0 writes, edits or reads outside", async () => {
  ensureBinary();
  const { root, workspace, run } = runSetup();
  const outside = join(root, "outside");
  mkdirSync(outside);
  writeFileSync(join(outside, "x"), OUTSIDE);
  mkdirSync(join(workspace, "real"));
  writeFileSync(join(workspace, "real/x"), "inside 0\n");
  symlinkSync("../outside", join(workspace, "spare"));

  const tally = { calls: 0, refused: 0, leaked: [] as string[] };
  let started = 0;
  const respond = (request: RecordedRequest): ScriptedReply => {
    // The results of the previous reply's calls: everything after the last assistant message.
    const messages = request.body.messages;
    const since = messages.findLastIndex((m) => m.role === "assistant");
    for (const m of since < 0 ? [] : messages.slice(since + 1)) {
      if (m.role !== "tool") continue;
      const text = String(m.content);
      tally.calls += 1;
      if (text.includes("outside-secret")) tally.leaked.push(text);
      if (text.includes("outside the workspace")) tally.refused += 1;
    }
    started ||= Date.now();
    if (Date.now() - started > FLIP_MS) return { text: "done" };
    const calls = Array.from({ length: 10 }, () => [
      { name: "write_file", arguments: { path: "real/x", content: "inside 0\n" } },
      { name: "edit_file", arguments: { path: "real/x", old_string: " 0\n", new_string: " 1\n" } },
      { name: "read_file", arguments: { path: "real/x" } },
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
  console.log(JSON.stringify({ toolCalls: tally.calls, refusedAsOutside: tally.refused, swaps }));
  expect(readdirSync(outside)).toEqual(["x"]);
  expect(readFileSync(join(outside, "x"), "utf8")).toBe(OUTSIDE);
  expect(tally.leaked).toEqual([]);
  // The race was run: many calls, and the swaps made some of them meet the symlink.
  expect(tally.calls).toBeGreaterThan(300);
  expect(tally.refused).toBeGreaterThan(0);
  expect(swaps).toBeGreaterThan(1000);
}, 120_000);
