// Bun's pool for node:fs callback calls (the fsyncs stores wait for off the event
// loop) is sized when made: widenFsPool makes it wider for a process that hosts
// agents, without leaving UV_THREADPOOL_SIZE to its children, and leaves a size
// the user chose alone.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";

const CORES = availableParallelism();
// Compiled once for the file (tempDir's directories go after each test).
const binDir = mkdtempSync(join(tmpdir(), "agent-fs-pool-bin-"));
const binary = join(binDir, "burst");
afterAll(() => rmSync(binDir, { recursive: true, force: true }));

beforeAll(() => {
  const build = Bun.spawnSync([process.execPath, "build", "--compile", join(import.meta.dir, "..", "fixtures", "fs-pool-burst.ts"), "--outfile", binary], { stdout: "pipe", stderr: "pipe" });
  if (build.exitCode !== 0) throw new Error(`compiling the burst program failed: ${build.stderr}`);
}, 60_000);

function burst(mode: "widen" | "control", env: Record<string, string | undefined> = {}): { threads: number; child: string } {
  const environment = Object.fromEntries(Object.entries({ ...process.env, ...env }).filter(([, value]) => value !== undefined)) as Record<string, string>;
  delete environment.UV_THREADPOOL_SIZE;
  if (env.UV_THREADPOOL_SIZE !== undefined) environment.UV_THREADPOOL_SIZE = env.UV_THREADPOOL_SIZE;
  const run = Bun.spawnSync([binary, mode], { env: environment, stdout: "pipe", stderr: "pipe" });
  if (run.exitCode !== 0) throw new Error(`burst ${mode} failed: ${run.stderr}`);
  return JSON.parse(run.stdout.toString());
}

describe.skipIf(process.platform !== "linux")("the file-work pool", () => {
  test("widened: 64 fsyncs at once run on more threads than the cores give, and no child sees the variable", () => {
    const widened = burst("widen");
    expect(widened.child).toBe("unset");
    expect(widened.threads).toBeLessThanOrEqual(Math.max(8, CORES));
    // Where the cores give fewer than 8, the pool is wider than Bun makes it.
    if (CORES < 8) {
      const control = burst("control");
      expect(control.threads).toBeLessThanOrEqual(CORES);
      expect(widened.threads).toBeGreaterThan(control.threads);
    }
  }, 30_000);

  test("a size the user set is kept, and their children still see it", () => {
    const chosen = burst("widen", { UV_THREADPOOL_SIZE: "3" });
    expect(chosen.child).toBe("3");
    expect(chosen.threads).toBeLessThanOrEqual(3);
  }, 30_000);
});
