import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readSessionMeta } from "../../src/sessions/session-meta.ts";
import { requirePrerequisite } from "../support/prerequisites.ts";
import { AGENT_BINARY } from "./agent-binary.ts";
import { runSetup, scriptedServers } from "./run-fixture.ts";

// What a run on a new session writes durably before its first model request
// (docs/performance.md): the session (created once, not rewritten to say it was
// just used), not the lock's owner record (for messages only), and the first
// prompt recorded in session.json while the request goes out.

const startServer = scriptedServers();
const strace = Bun.which("strace");

/**
 * The line that made `path` durable before its rename: its fsync, or its
 * create with O_SYNC (each write then returns once it is on disk).
 */
function durableBy(line: string): string | undefined {
  const fsync = /fsync\(\d+<([^>]*)>/.exec(line); // also an "<unfinished ...>" one
  if (fsync) return fsync[1];
  const open = /openat\((?:AT_FDCWD<[^>]*>|\d+<[^>]*>), "([^"]+)", [^)]*O_SYNC/.exec(line);
  return open?.[1];
}

/** Each rename's target with whether the file renamed was fsynced first (strace -y lines). */
function renames(trace: string): { target: string; synced: boolean }[] {
  const lines = readFileSync(trace, "utf8").split("\n");
  const synced = new Set<string>();
  const out: { target: string; synced: boolean }[] = [];
  for (const line of lines) {
    const durable = durableBy(line);
    if (durable) synced.add(durable);
    const rename = /rename(?:at2?)?\((?:AT_FDCWD<[^>]*>, )?"([^"]+)", (?:AT_FDCWD<[^>]*>, )?"([^"]+)"/.exec(line);
    if (rename) out.push({ target: rename[2]!, synced: synced.has(rename[1]!) });
  }
  return out;
}

describe("a run's writes before its first request", () => {
  if (requirePrerequisite("strace", strace ? undefined : "strace is not installed")) {
    test("a new session's meta is written twice (created, first prompt) and the lock's owner record is not fsynced", async () => {
      const setup = runSetup();
      const server = startServer([{ text: "done" }]);
      const trace = join(setup.root, "trace.txt");
      const child = Bun.spawn(
        [strace!, "-f", "-y", "-e", "trace=fsync,openat,rename,renameat,renameat2", "-o", trace, AGENT_BINARY, "run", "hello there", "--workspace", setup.workspace, "--state-dir", setup.stateDir, "--base-url", server.url],
        { env: { ...process.env, OPENAI_API_KEY: "test-key", NO_COLOR: "1" }, stdout: "ignore", stderr: "pipe" },
      );
      expect(await child.exited).toBe(0);
      const all = renames(trace);
      const meta = all.filter((rename) => rename.target.endsWith("/session.json"));
      expect(meta).toHaveLength(2);
      expect(meta.every((rename) => rename.synced)).toBe(true);
      const owner = all.filter((rename) => rename.target.endsWith("/runtime.owner.json"));
      expect(owner).toHaveLength(1);
      expect(owner[0]!.synced).toBe(false);
      expect(readSessionMeta(setup.sessionDir())?.firstPrompt).toBe("hello there");
    });

    test("a new session's run-flags.json is made durable off the main thread while the runtime is built, before the prompt's history record", async () => {
      const setup = runSetup();
      const server = startServer([{ text: "done" }]);
      const trace = join(setup.root, "trace.txt");
      const child = Bun.spawn(
        [strace!, "-f", "-y", "-e", "trace=execve,fsync,openat,rename,renameat,renameat2,write", "-o", trace, AGENT_BINARY, "run", "hello there", "--workspace", setup.workspace, "--state-dir", setup.stateDir, "--base-url", server.url],
        { env: { ...process.env, OPENAI_API_KEY: "test-key", NO_COLOR: "1" }, stdout: "ignore", stderr: "pipe" },
      );
      expect(await child.exited).toBe(0);
      const lines = readFileSync(trace, "utf8").split("\n");
      // The agent's main thread: the process that execve'd it.
      const main = lines.find((line) => line.includes("execve("))!.split(" ")[0];
      // Also a rename strace prints as "<unfinished ...>" (another thread's call came between).
      const renamed = lines.findIndex((line) => /rename(?:at2?)?\(.*"[^"]*\/run-flags\.json"/.test(line));
      expect(renamed).toBeGreaterThan(-1);
      const temp = /rename(?:at2?)?\((?:AT_FDCWD<[^>]*>, )?"([^"]+)"/.exec(lines[renamed]!)![1]!;
      // Made durable (an fsync, or written through O_SYNC) before the rename.
      const tempSynced = lines.slice(0, renamed).find((line) => durableBy(line)?.endsWith(temp.slice(temp.lastIndexOf("/"))) === true);
      expect(tempSynced).toBeDefined();
      // Its durable write runs on the thread pool while the event loop builds the runtime.
      expect(tempSynced!.split(" ")[0]).not.toBe(main);
      const sessionDir = temp.slice(0, temp.lastIndexOf("/"));
      const dirSynced = lines.findIndex((line, index) => index > renamed && line.includes(`fsync(`) && line.includes(`<${sessionDir}>`));
      const historyWritten = lines.findIndex((line) => /^\d+ +write\(\d+<[^>]*\/agents\/lead\.jsonl>/.test(line));
      expect(dirSynced).toBeGreaterThan(renamed);
      expect(historyWritten).toBeGreaterThan(dirSynced);
    });
  }
});
