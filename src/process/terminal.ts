import { type Libc, bindLibc } from "../storage/libc.ts";

let libc: Libc<"isatty"> | null | undefined;

/**
 * Whether this process's stdin (0), stdout (1) or stderr (2) is a terminal, as
 * libc's isatty(3) says. Reading `process.stdin.isTTY` builds the stdin stream
 * (loading node:stream for it): ~2.5 ms of a run's start before its first model
 * request, to learn it is not a terminal; binding isatty is ~0.2 ms. Where libc
 * cannot be bound (Windows), the streams are asked.
 */
export function isTerminal(fd: 0 | 1 | 2): boolean {
  if (libc === undefined) libc = bindLibc({ isatty: { args: ["i32"], returns: "i32" } });
  if (libc === null) return (fd === 0 ? process.stdin : fd === 1 ? process.stdout : process.stderr).isTTY === true;
  const isatty = libc.call.isatty as (fd: number) => number;
  return isatty(fd) === 1;
}

let flushing: Libc<"tcflush"> | null | undefined;

/** tcflush(3)'s TCIFLUSH: the same value on Linux and the BSDs (macOS). */
const TCIFLUSH = process.platform === "linux" ? 0 : 1;

/**
 * Drops what was typed at terminal `fd` and not read yet — keys a person typed
 * before a question was drawn are not its answer. False where libc cannot be
 * bound (the typed-ahead keys then stay, and are told apart as a burst).
 */
export function discardTypedAhead(fd: number): boolean {
  if (flushing === undefined) flushing = bindLibc({ tcflush: { args: ["i32", "i32"], returns: "i32" } });
  if (flushing === null) return false;
  return (flushing.call.tcflush as (fd: number, queue: number) => number)(fd, TCIFLUSH) === 0;
}
