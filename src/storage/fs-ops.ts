import * as fs from "node:fs";

/**
 * The synchronous file-system calls the durable stores make. Stores take this as
 * a parameter so a test can hand in the real `node:fs` with one call made to fail
 * (a rename, an fsync) and check that nothing is lost or left behind.
 *
 * The calls are synchronous on purpose: each runs inside a short critical section
 * under both locks, where the thread-pool hop of the async API only adds latency.
 */
export type FsOps = Pick<
  typeof fs,
  | "openSync"
  | "writeSync"
  | "fsyncSync"
  | "closeSync"
  | "renameSync"
  | "unlinkSync"
  | "lstatSync"
  | "statSync"
  | "readFileSync"
  | "readdirSync"
  | "mkdirSync"
  | "rmSync"
  | "writeFileSync"
  | "linkSync"
  | "utimesSync"
>;

export const realFs: FsOps = fs;
