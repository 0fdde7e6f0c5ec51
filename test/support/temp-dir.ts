import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "bun:test";

const made: string[] = [];

/**
 * A fresh directory, removed after the current test. Set AGENT_KEEP_TEST_DIRS=1 to
 * keep them (their paths are printed) when a failure needs the files inspected.
 */
export function tempDir(prefix = "agent-test-"): string {
  const path = mkdtempSync(join(tmpdir(), prefix));
  made.push(path);
  return path;
}

afterEach(() => {
  for (const path of made.splice(0)) {
    if (process.env.AGENT_KEEP_TEST_DIRS) process.stderr.write(`kept test dir: ${path}\n`);
    else rmSync(path, { recursive: true, force: true });
  }
});
