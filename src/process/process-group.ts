import { type CappedText, readCapped } from "../core/truncate.ts";

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
  /** Which output is kept: stdout and stderr interleaved as written (shell), or stderr alone (hooks). */
  capture: "combined" | "stderr";
  maxChars: number;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface GroupResult {
  output: CappedText;
  /** Null when the command was ended by a signal. */
  exitCode: number | null;
  signalCode: NodeJS.Signals | number | null;
  timedOut: boolean;
  aborted: boolean;
}

/**
 * Runs a command as the leader of a new process group (setsid), so a timeout or
 * an abort kills everything it started, not just the shell: `sh -c "sleep 100 | cat"`
 * would otherwise leave `sleep` running after `sh` is gone. Throws only when the
 * process cannot be started (e.g. the cwd does not exist).
 */
export async function runProcessGroup(command: GroupCommand): Promise<GroupResult> {
  // One pipe for both streams keeps stdout and stderr in the order they were
  // written; the wrapper `exec`s the command, so it stays the group leader.
  const cmd = command.capture === "combined" ? ["sh", "-c", 'exec "$@" 2>&1', "sh", ...command.cmd] : command.cmd;
  const proc = Bun.spawn({
    cmd,
    cwd: command.cwd,
    env: command.env ?? process.env,
    stdin: command.stdin ?? "ignore",
    stdout: command.capture === "combined" ? "pipe" : "ignore",
    stderr: command.capture === "stderr" ? "pipe" : "ignore",
    detached: true,
  });
  const stream = (command.capture === "combined" ? proc.stdout : proc.stderr) as ReadableStream<Uint8Array>;
  const reader = stream.getReader();
  const reading = readCapped(reader, command.maxChars);

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
  }
  const stopReading = setTimeout(() => void reader.cancel().catch(() => {}), OUTPUT_GRACE_MS);
  const output = await reading.finally(() => clearTimeout(stopReading));
  return { output, exitCode: proc.exitCode, signalCode: proc.signalCode, timedOut, aborted };
}
