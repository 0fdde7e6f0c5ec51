import { readFileSync } from "node:fs";

/**
 * Whether a pid recorded in a lock's owner file still names that owner.
 *
 * `kill(pid, 0)` alone is not enough, for two reasons seen in practice:
 * - a SIGKILLed process whose parent does not reap it (a container whose pid 1 is
 *   not an init) stays a zombie, and `kill` still succeeds on it, so its lock would
 *   look held until it goes stale;
 * - pids are reused, so a live process may carry a dead owner's pid.
 * On Linux `/proc/<pid>/stat` gives both the state (`Z` for a zombie) and the start
 * time in clock ticks since boot, which owner files record beside the pid.
 */
interface ProcStat {
  state: string;
  startTicks: string;
}

function readProcStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may itself hold spaces and
  // parentheses: the fields that follow start after the last ")".
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const state = fields[0];
  const startTicks = fields[19];
  if (!state || !startTicks || !/^\d+$/.test(startTicks)) return undefined;
  return { state, startTicks };
}

/** This process's start time as the kernel records it, or undefined off Linux. */
export function processStartTicks(pid: number = process.pid): string | undefined {
  return readProcStat(pid)?.startTicks;
}

/**
 * Whether `pid` is a running process of this host — and, when `startTicks` is
 * given and /proc can tell, the very process that recorded it.
 */
export function isProcessAlive(pid: number, startTicks?: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to another user — alive.
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
  const stat = readProcStat(pid);
  if (!stat) return true; // no /proc (macOS) or it raced away: trust kill()
  if (stat.state === "Z" || stat.state === "X") return false;
  return startTicks === undefined || stat.startTicks === startTicks;
}
