import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

export const REPO_ROOT = join(import.meta.dir, "..", "..");
export const AGENT_BINARY = join(REPO_ROOT, "dist", "agent");

/** Newest modification time among the inputs of the build. */
function newestSourceMtime(): number {
  let newest = 0;
  const visit = (path: string) => {
    const stats = statSync(path);
    if (stats.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
    else newest = Math.max(newest, stats.mtimeMs);
  };
  for (const input of ["src", "build.ts", "package.json", "package-lock.json"]) visit(join(REPO_ROOT, input));
  return newest;
}

/**
 * Builds dist/agent unless it is newer than every source, so `bun test` alone
 * tests what the sources say (`npm test` builds first anyway).
 */
export function ensureBinary(): string {
  let built = 0;
  try {
    built = statSync(AGENT_BINARY).mtimeMs;
  } catch {
    // Not built yet.
  }
  if (built > newestSourceMtime()) return AGENT_BINARY;
  const build = Bun.spawnSync([process.execPath, "build.ts"], { cwd: REPO_ROOT, stdout: "pipe", stderr: "pipe" });
  if (build.exitCode !== 0) {
    throw new Error(`building dist/agent failed (${build.exitCode}):\n${build.stdout}\n${build.stderr}`);
  }
  return AGENT_BINARY;
}

export interface AgentResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  stdin?: string | Uint8Array;
  env?: Record<string, string | undefined>;
  cwd?: string;
}

/** Runs the compiled binary as a user would: a real child process, real files. */
export async function runAgent(args: string[], options: RunOptions = {}): Promise<AgentResult> {
  // An env value of undefined removes the variable for the child.
  const env = Object.fromEntries(
    Object.entries({ ...process.env, NO_COLOR: "1", ...options.env }).filter(([, v]) => v !== undefined),
  ) as Record<string, string>;
  const child = Bun.spawn([AGENT_BINARY, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env,
    stdin: options.stdin === undefined ? "ignore" : new Blob([options.stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { code, stdout, stderr };
}
