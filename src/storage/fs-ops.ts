import * as fs from "node:fs";
import { linkAt } from "./link-at.ts";
import { renameNoReplace } from "./no-replace-rename.ts";

/**
 * The synchronous file-system calls the durable stores make. Stores take this as
 * a parameter so a test can hand in the real calls with one made to fail (a
 * rename, an fsync) and check that nothing is lost or left behind.
 *
 * The calls are synchronous on purpose: each runs inside a short critical section
 * under both locks, where the thread-pool hop of the async API only adds latency —
 * except fsync, which with the real calls waits off the event loop (see
 * awaitFsync in atomic-file.ts): a disk's latency must not stall the other agents.
 */
export type FsOps = NodeCalls & {
  /**
   * rename that fails with EEXIST instead of replacing the target, in one atomic
   * call, names resolved in directory descriptors (see no-replace-rename.ts);
   * false, having done nothing, where the platform cannot. Absent from a test's
   * `node:fs`: a store then looks and renames.
   */
  renameNoReplaceSync?: (fromDir: number, from: string, toDir: number, to: string) => boolean;
  /**
   * link with names resolved in directory descriptors (see link-at.ts); false,
   * having done nothing, where the platform cannot. Absent from a test's
   * `node:fs`: a store then links by path and opens the directory to fsync it.
   */
  linkAtSync?: (fromDir: number, from: string, toDir: number, to: string) => boolean;
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

// Named one by one, not `{ ...fs }`: spreading node:fs reads every property, and its
// lazy ones (ReadStream, promises…) load node:stream and node:readline — ~1–2 ms of
// every admin command's start-up (measured with Bun's --cpu-prof on `mailbox show`).
export const realFs: FsOps = {
  openSync: fs.openSync,
  writeSync: fs.writeSync,
  fsyncSync: fs.fsyncSync,
  closeSync: fs.closeSync,
  renameSync: fs.renameSync,
  unlinkSync: fs.unlinkSync,
  lstatSync: fs.lstatSync,
  statSync: fs.statSync,
  fstatSync: fs.fstatSync,
  readSync: fs.readSync,
  readFileSync: fs.readFileSync,
  readdirSync: fs.readdirSync,
  mkdirSync: fs.mkdirSync,
  rmSync: fs.rmSync,
  writeFileSync: fs.writeFileSync,
  linkSync: fs.linkSync,
  utimesSync: fs.utimesSync,
  renameNoReplaceSync: renameNoReplace,
  linkAtSync: linkAt,
};
