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

/**
 * The syscalls the event loop's thread makes per operation, from an strace of
 * the child between its two marks. The thread pool's (the fsyncs, the O_SYNC
 * writes, their wake-ups) and the garbage collector's threads are not counted:
 * they do not hold the loop that every agent of the process shares.
 */
function loopSyscallsPer(mode: "send" | "pair"): number {
  const dir = tempDir();
  const trace = join(dir, "trace");
  const child = Bun.spawnSync(["strace", "-f", "-o", trace, process.execPath, FIXTURE, dir, mode, String(COUNT)], { stdout: "pipe", stderr: "pipe" });
  if (!child.success) throw new Error(`the traced child failed: ${child.stderr.toString()}`);
  const lines = readFileSync(trace, "utf8").split("\n");
  const begin = lines.findIndex((line) => line.includes(`${dir}/begin`));
  const end = lines.findIndex((line) => line.includes(`${dir}/end`));
  if (begin < 0 || end < begin) throw new Error("the trace has no marks");
  const loop = lines[begin]!.split(" ")[0];
  // A call another thread interrupted shows as "<unfinished ...>" then "<... resumed>": counted once.
  const calls = lines.slice(begin + 1, end).filter((line) => line.startsWith(`${loop} `) && !line.includes(" resumed>"));
  return calls.length / COUNT;
}

describe.if(process.platform === "linux")("mailbox syscalls on the event loop (strace)", () => {
  if (!requirePrerequisite("strace", straceProblem())) return;

  test("a send makes at most 16", () => {
    const perSend = loopSyscallsPer("send");
    console.log(`syscalls on the event loop per send: ${perSend.toFixed(2)}`);
    expect(perSend).toBeLessThanOrEqual(16);
  }, 120_000);

  test("an ackAndClaim makes at most 12", () => {
    const perPair = loopSyscallsPer("pair");
    console.log(`syscalls on the event loop per ackAndClaim: ${perPair.toFixed(2)}`);
    expect(perPair).toBeLessThanOrEqual(12);
  }, 120_000);
});
