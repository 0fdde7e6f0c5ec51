import { expect, test } from "bun:test";
import { readFileSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TEMP_PREFIX } from "../../src/workspace-files/atomic-write.ts";
import { tempDir } from "../support/temp-dir.ts";

// kill -9 at random points while a real child process rewrites a 4 MiB file
// through write_file, 200 rounds: the file must hold one of the two contents,
// byte for byte, after every kill — never empty, never cut, never a mix.

const ROUNDS = 200;
const SIZE = 4 * 1024 * 1024;

test(`kill -9 during write_file, ${ROUNDS} rounds: the file is always the old or the new content`, async () => {
  const workspace = realpathSync(tempDir("agent-crash-write-"));
  const inputs = realpathSync(tempDir("agent-crash-inputs-"));
  const a = "A".repeat(SIZE - 2) + "a\n";
  const b = `${"0123456789abcdef".repeat(SIZE / 16 - 1)}${"b".repeat(15)}\n`;
  writeFileSync(join(inputs, "a"), a);
  writeFileSync(join(inputs, "b"), b);
  writeFileSync(join(workspace, "big.txt"), a);
  const bad: string[] = [];
  let seenB = 0;
  for (let round = 0; round < ROUNDS; round += 1) {
    const child = Bun.spawn([process.execPath, join(import.meta.dir, "write-child.ts"), workspace, "big.txt", join(inputs, "a"), join(inputs, "b")], {
      stdout: "pipe",
      stderr: "inherit",
    });
    const reader = child.stdout.getReader();
    await reader.read();
    await Bun.sleep(Math.random() * 60);
    child.kill("SIGKILL");
    await child.exited;
    const now = readFileSync(join(workspace, "big.txt"), "utf8");
    if (now === b) seenB += 1;
    else if (now !== a) bad.push(`round ${round}: ${now.length} bytes, starting ${JSON.stringify(now.slice(0, 12))}`);
  }
  expect(bad).toEqual([]);
  // The kills landed at different points: some after a write of the other content had finished.
  expect(seenB).toBeGreaterThan(0);
  expect(seenB).toBeLessThan(ROUNDS);
  // What the kills left behind is recognisable as ours (and removed by a later write, once stale).
  for (const name of readdirSync(workspace)) expect(name === "big.txt" || name.startsWith(TEMP_PREFIX)).toBe(true);
}, 300_000);
