import * as fs from "node:fs";
import { renameNoReplace } from "./no-replace-rename.ts";

/**
 * The synchronous file-system calls the durable stores make. Stores take this as
 * a parameter so a test can hand in the real calls with one made to fail (a
 * rename, an fsync) and check that nothing is lost or left behind.
 *
 * The calls are synchronous on purpose: each runs inside a short critical section
 * under both locks, where the thread-pool hop of the async API only adds latency.
 */
export type FsOps = NodeCalls & {
  /**
   * rename that fails with EEXIST instead of replacing the target, in one atomic
   * call, names resolved in directory descriptors (see no-replace-rename.ts);
   * false, having done nothing, where the platform cannot. Absent from a test's
   * `node:fs`: a store then looks and renames.
   */
  renameNoReplaceSync?: (fromDir: number, from: string, toDir: number, to: string) => boolean;
};

type NodeCalls = Pick<
  typeof fs,
  | "openSync"
  | "writeSync"
  | "fsyncSync"
  | "closeSync"
  | "renameSync"
  | "unlinkSync"
  | "lstatSync"
  | "statSync"
  | "fstatSync"
  | "readSync"
  | "readFileSync"
  | "readdirSync"
  | "mkdirSync"
  | "rmSync"
  | "writeFileSync"
  | "linkSync"
  | "utimesSync"
>;

export const realFs: FsOps = { ...fs, renameNoReplaceSync: renameNoReplace };
