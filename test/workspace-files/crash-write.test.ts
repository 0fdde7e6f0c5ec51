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

/** The child's output a line at a time: `until(line)` resolves once that line has come. */
function linesOf(stream: ReadableStream<Uint8Array>) {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  return {
    async until(line: string): Promise<void> {
      while (!text.split("\n").includes(line)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the child ended before it printed "${line}"`);
        text += decoder.decode(value, { stream: true });
      }
    },
  };
}

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
  // One write's time, as the last round that waited for one measured it.
  let writeMs = 60;
  for (let round = 0; round < ROUNDS; round += 1) {
    const child = Bun.spawn([process.execPath, join(import.meta.dir, "write-child.ts"), workspace, "big.txt", join(inputs, "a"), join(inputs, "b")], {
      stdout: "pipe",
      stderr: "inherit",
    });
    // Killed after 0, 1 or 2 finished writes (the second writes the other content), at a
    // random point of the next one: a fixed window would miss the other content on a disk
    // slow enough that no write finishes within it.
    const lines = linesOf(child.stdout);
    await lines.until("writing");
    const started = performance.now();
    const finished = round % 3;
    if (finished > 0) {
      await lines.until(`wrote ${finished}`);
      writeMs = (performance.now() - started) / finished;
    }
    await Bun.sleep(Math.random() * writeMs);
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
