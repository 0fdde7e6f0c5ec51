import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { requirePrerequisite } from "../support/prerequisites.ts";
import { tempDir } from "../support/temp-dir.ts";

const FIXTURE = join(import.meta.dir, "../fixtures/mailbox-syscalls.ts");
const COUNT = 100;

function straceProblem(): string | undefined {
  if (process.platform !== "linux") return undefined;
  const probe = Bun.spawnSync(["strace", "-f", "-o", "/dev/null", "true"], { stdout: "ignore", stderr: "pipe" });
  return probe.success ? undefined : `strace could not trace a process (${probe.stderr.toString().trim() || "not installed"})`;
}

/** The calls by which the loop hands work to the pool and sleeps until it is back: how many depends on when the answer comes. */
const HAND_OFF = new Set(["futex", "epoll_pwait", "epoll_pwait2", "epoll_wait", "sched_yield"]);

/**
 * The syscalls the event loop's thread makes per operation, from an strace of
 * the child between its two marks, in all and without the hand-off calls. The
 * thread pool's (the fsyncs, the O_SYNC writes, their wake-ups) and the garbage
 * collector's threads are not counted: they do not hold the loop that every
 * agent of the process shares.
 */
function loopSyscallsPer(mode: "send" | "pair"): { all: number; own: number } {
  const dir = tempDir();
  const trace = join(dir, "trace");
  const child = Bun.spawnSync(["strace", "-f", "-o", trace, process.execPath, FIXTURE, dir, mode, String(COUNT)], { stdout: "pipe", stderr: "pipe" });
  if (!child.success) throw new Error(`the traced child failed: ${child.stderr.toString()}`);
  const lines = readFileSync(trace, "utf8").split("\n");
  const begin = lines.findIndex((line) => line.includes(`${dir}/begin`));
  const end = lines.findIndex((line) => line.includes(`${dir}/end`));
  if (begin < 0 || end < begin) throw new Error("the trace has no marks");
  const loop = lines[begin]!.split(" ")[0]!;
  // A call another thread interrupted shows as "<unfinished ...>" then "<... resumed>": counted once.
  const calls = lines.slice(begin + 1, end).filter((line) => line.startsWith(`${loop} `) && !line.includes(" resumed>"));
  // strace pads a short pid with spaces: the call's name is the first word after it.
  const own = calls.filter((line) => !HAND_OFF.has(/^\s*(\w+)\(/.exec(line.slice(loop.length))?.[1] ?? ""));
  return { all: calls.length / COUNT, own: own.length / COUNT };
}

/**
 * The loop's calls per operation: the fewest in all of up to three traced runs
 * (a loaded machine only ever adds hand-offs — a pool answer that finds the
 * loop asleep costs a wake-up more — as it only ever adds time), and the most
 * of its own calls in any run (those do not depend on load).
 */
function fewestOfThree(mode: "send" | "pair", goal: number): { all: number; own: number } {
  let best = { all: Infinity, own: 0 };
  for (let run = 0; run < 3 && best.all > goal; run++) {
    const counted = loopSyscallsPer(mode);
    best = { all: Math.min(best.all, counted.all), own: Math.max(best.own, counted.own) };
  }
  return best;
}

describe.if(process.platform === "linux")("mailbox syscalls on the event loop (strace)", () => {
  if (!requirePrerequisite("strace", straceProblem())) return;

  // Own calls: the lock taken and given back, the early marker's stat, its link
  // into ready/, the new name's stat, ready/'s stat and mtime, the index record's open, write, close.
  test("a send makes at most 16, 10 of its own", () => {
    const perSend = fewestOfThree("send", 16);
    console.log(`syscalls on the event loop per send: ${perSend.all.toFixed(2)} (${perSend.own.toFixed(2)} without the hand-offs)`);
    expect(perSend.all).toBeLessThanOrEqual(16);
    expect(perSend.own).toBeLessThanOrEqual(10.5);
  }, 120_000);

  // Own calls: the lock taken and given back, two renames, three stats.
  test("an ackAndClaim makes at most 12, 7 of its own", () => {
    const perPair = fewestOfThree("pair", 12);
    console.log(`syscalls on the event loop per ackAndClaim: ${perPair.all.toFixed(2)} (${perPair.own.toFixed(2)} without the hand-offs)`);
    expect(perPair.all).toBeLessThanOrEqual(12);
    expect(perPair.own).toBeLessThanOrEqual(7.5);
  }, 120_000);
});
