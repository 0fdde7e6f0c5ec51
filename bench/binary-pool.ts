import { fsPoolThreads } from "../src/storage/fs-pool.ts";

/**
 * The compiled agent sizes Bun's file-work pool before anything uses it, for the
 * commands that host agents (src/storage/fs-pool.ts); a `bun` run of a .ts file
 * has made the pool while loading its modules, before that could run. A bench
 * of the runtime as users run it therefore runs itself again with the size the
 * binary sets — unless UV_THREADPOOL_SIZE is set already: that size is measured.
 */
export function sizePoolAsTheBinaryDoes(): void {
  if (process.env.UV_THREADPOOL_SIZE !== undefined) return;
  const again = Bun.spawnSync([process.execPath, ...process.argv.slice(1)], {
    env: { ...process.env, UV_THREADPOOL_SIZE: String(fsPoolThreads()) },
    stdio: ["inherit", "inherit", "inherit"],
  });
  process.exit(again.exitCode ?? 1);
}
