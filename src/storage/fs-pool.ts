import { access } from "node:fs";
import { availableParallelism } from "node:os";
import { bindLibc } from "./libc.ts";

/**
 * Bun runs node:fs's callback calls — the fsyncs a store waits for off the
 * event loop, openWhereCheap's creates — on a pool of threads made at the first
 * such call, as many as UV_THREADPOOL_SIZE says when it is set, else one a
 * core: two on a small machine. There a team's durable writes queue two at a
 * time: 64 fsyncs of 64 files took 11–17 ms on two threads and 4–9 ms on
 * eight (they wait on the disk, not the CPU, and the disk takes several at once).
 *
 * A process that will host agents calls this before anything uses the pool: it
 * makes the pool with the variable set for that moment only (unset again at
 * once, so no child process inherits it). Nothing is changed when the user set
 * the variable (Bun reads theirs), where libc cannot be reached, or when the
 * pool already exists (it keeps its size).
 */
export function widenFsPool(threads = fsPoolThreads()): void {
  if (process.env.UV_THREADPOOL_SIZE !== undefined) return;
  const libc = bindLibc({ setenv: { args: ["ptr", "ptr", "i32"], returns: "i32" }, unsetenv: { args: ["ptr"], returns: "i32" } });
  if (!libc) return;
  const name = cString(POOL_SIZE);
  if ((libc.call.setenv as (name: Uint8Array, value: Uint8Array, replace: number) => number)(name, cString(String(threads)), 1) !== 0) return;
  try {
    // The pool is made, and reads the variable, when its first task is queued.
    access(".", () => {});
  } finally {
    (libc.call.unsetenv as (name: Uint8Array) => number)(name);
  }
}

/** The pool's size in a process that hosts agents: 8 threads, or one a core where there are more. */
export function fsPoolThreads(): number {
  return Math.max(MIN_THREADS, availableParallelism());
}

const POOL_SIZE = "UV_THREADPOOL_SIZE";
const MIN_THREADS = 8;

function cString(text: string): Uint8Array {
  return Buffer.from(`${text}\0`);
}
