import type { FileSink } from "bun";
import { type CappedText, readCapped } from "../core/truncate.ts";
import { type GroupReaper, gatedCommand, openGate, processReaper } from "./reaper.ts";

/**
 * After the command exits, a background child it started (`server &`) may still
 * hold the output pipe open; waiting for end-of-file would hang the tool call.
 * Whatever is already in the pipe is read within this grace period.
 */
const OUTPUT_GRACE_MS = 250;

export interface GroupCommand {
  cmd: string[];
  cwd: string;
  env?: Record<string, string | undefined>;
  /** Written to the command's stdin; stdin is empty when absent. */
  stdin?: Uint8Array;
  /**
   * Which output is kept: stdout and stderr interleaved as written (shell), or
   * stderr as `output` and stdout apart as `stdout` (hooks: a reason on stderr,
   * a JSON answer on stdout).
   */
  capture: "combined" | "split";
  maxChars: number;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Kills the group if this process dies first; this process's own when absent. */
  reaper?: GroupReaper;
}

export interface GroupResult {
  output: CappedText;
  /** With `capture: "split"`: what the command wrote to stdout. */
  stdout?: CappedText;
  /** Null when the command was ended by a signal. */
  exitCode: number | null;
  signalCode: NodeJS.Signals | number | null;
  timedOut: boolean;
  aborted: boolean;
}

/**
 * Runs a command as the leader of a new process group (setsid), so a timeout or
 * an abort kills everything it started, not just the shell: `sh -c "sleep 100 | cat"`
 * would otherwise leave `sleep` running after `sh` is gone. The group dies with
 * this process too, however it ends: the reaper's watchdog kills it, and on
 * Linux the direct child also gets SIGKILL from the kernel when its parent dies
 * (PR_SET_PDEATHSIG, set by util-linux's `setpriv` before it execs the command,
 * since Bun runs no code between fork and exec). Throws only when the process
 * cannot be started (e.g. the cwd does not exist).
 */
export async function runProcessGroup(command: GroupCommand): Promise<GroupResult> {
  // Windows has neither process groups nor sh.
  const reaper = process.platform === "win32" ? undefined : (command.reaper ?? processReaper());
  const gated = reaper !== undefined;
  // One pipe for both streams keeps stdout and stderr in the order they were
  // written; the wrapper `exec`s the command, so it stays the group leader.
  // Where there are process groups, the command waits behind a gate until its
  // group is listed with the reaper (gatedCommand).
  const cmd = gated
    ? gatedCommand(command.cmd, command.capture === "combined")
    : command.capture === "combined"
      ? ["sh", "-c", 'exec "$@" 2>&1', "sh", ...command.cmd]
      : command.cmd;
  const proc = Bun.spawn({
    cmd: [...deathSignalPrefix(), ...cmd],
    cwd: command.cwd,
    env: command.env ?? process.env,
    stdin: gated ? "pipe" : (command.stdin ?? "ignore"),
    stdout: "pipe",
    stderr: command.capture === "split" ? "pipe" : "ignore",
    detached: true,
  });
  if (reaper) {
    reaper.track(proc.pid);
    openGate(proc.stdin as FileSink, command.stdin);
  }
  const stream = (command.capture === "combined" ? proc.stdout : proc.stderr) as ReadableStream<Uint8Array>;
  const reader = stream.getReader();
  const reading = readCapped(reader, command.maxChars);
  const outReader = command.capture === "split" ? (proc.stdout as ReadableStream<Uint8Array>).getReader() : undefined;
  const readingOut = outReader ? readCapped(outReader, command.maxChars) : undefined;

  let timedOut = false;
  let aborted = false;
  const killGroup = () => {
    try {
      process.kill(-proc.pid, "SIGKILL");
    } catch {
      // ESRCH: the group is already gone.
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, command.timeoutMs);
  const onAbort = () => {
    aborted = true;
    killGroup();
  };
  command.signal?.addEventListener("abort", onAbort, { once: true });
  if (command.signal?.aborted) onAbort();
  try {
    await proc.exited;
  } finally {
    clearTimeout(timer);
    command.signal?.removeEventListener("abort", onAbort);
    reaper?.release(proc.pid);
  }
  const stopReading = setTimeout(() => {
    void reader.cancel().catch(() => {});
    void outReader?.cancel().catch(() => {});
  }, OUTPUT_GRACE_MS);
  const [output, stdout] = await Promise.all([reading, readingOut]).finally(() => clearTimeout(stopReading));
  return { output, ...(stdout ? { stdout } : {}), exitCode: proc.exitCode, signalCode: proc.signalCode, timedOut, aborted };
}

/**
 * `setpriv --pdeathsig KILL --` where util-linux's setpriv takes it (Linux;
 * 2.33 and later): the kernel kills the direct child the moment this process
 * dies, before the watchdog has read its end-of-file. Elsewhere nothing; the
 * watchdog alone. Probed once per process: an older setpriv would fail every
 * command.
 */
function deathSignalPrefix(): string[] {
  deathSignal ??= probeDeathSignal();
  return deathSignal;
}

let deathSignal: string[] | undefined;

function probeDeathSignal(): string[] {
  if (process.platform !== "linux") return [];
  const setpriv = Bun.which("setpriv");
  if (setpriv === null) return [];
  const prefix = [setpriv, "--pdeathsig", "KILL", "--"];
  try {
    return Bun.spawnSync([...prefix, "true"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0 ? prefix : [];
  } catch {
    return [];
  }
}
