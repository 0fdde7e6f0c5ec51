import type { FileSink, Subprocess } from "bun";

/**
 * The watchdog's script. It reads `+<pgid>` and `-<pgid>` lines from the agent
 * and, at end-of-file, kills every group still listed. End-of-file comes when
 * the agent ends however it ends (exit, a signal, kill -9): the kernel closes
 * the agent's end of the pipe. Signals from the terminal are ignored; the
 * watchdog is in a session of its own, so a kill of the agent's process group
 * does not reach it either.
 */
const WATCHDOG = `trap '' INT TERM HUP
groups=" "
while read -r line; do
  id=\${line#?}
  case $line in
    +*) groups="$groups$id " ;;
    -*) case $groups in *" $id "*) groups="\${groups%%" $id "*} \${groups#*" $id "}" ;; esac ;;
  esac
done
for id in $groups; do kill -s KILL -- "-$id" 2>/dev/null; done`;

/**
 * Kills the process groups of the commands this process started when this
 * process ends, kill -9 included: one `sh` watchdog for the whole process,
 * started on first use. A group stays listed after its leader exits for as
 * long as anything is left in it (`server &`), so what a command left behind
 * dies with the run; an empty group is dropped before its id can be reused.
 */
export class GroupReaper {
  #watchdog: Subprocess<"pipe", "ignore", "ignore"> | undefined;
  readonly #groups = new Set<number>();

  /** Lists the group led by `pgid` (a process started with `detached: true`). */
  track(pgid: number): void {
    this.#sweep();
    this.#groups.add(pgid);
    this.#send(`+${pgid}\n`);
  }

  /** Said when the group's leader has exited: the group is dropped if nothing is left in it. */
  release(pgid: number): void {
    if (!this.#groups.has(pgid) || groupAlive(pgid)) return;
    this.#groups.delete(pgid);
    this.#send(`-${pgid}\n`);
  }

  #sweep(): void {
    for (const pgid of this.#groups) this.release(pgid);
  }

  #send(line: string): void {
    try {
      const stdin = this.#stdin();
      stdin.write(line);
      stdin.flush();
    } catch {
      // The watchdog is gone (killed by someone): a new one gets every group.
      this.#watchdog = undefined;
      try {
        const stdin = this.#stdin();
        for (const pgid of this.#groups) stdin.write(`+${pgid}\n`);
        stdin.flush();
      } catch {
        // Nothing more to do than the death signal and the groups' own kills.
      }
    }
  }

  #stdin(): FileSink {
    if (this.#watchdog === undefined || this.#watchdog.exitCode !== null || this.#watchdog.signalCode !== null) {
      // An empty environment: the watchdog needs none, and the API key stays in this process alone.
      const sh = Bun.which("sh") ?? "/bin/sh";
      this.#watchdog = Bun.spawn({ cmd: [sh, "-c", WATCHDOG], env: {}, stdin: "pipe", stdout: "ignore", stderr: "ignore", detached: true });
      // It must not keep the agent alive: it exists to outlive it.
      this.#watchdog.unref();
    }
    return this.#watchdog.stdin;
  }
}

/** Whether any process is left in the group (ESRCH: none; EPERM still means one exists). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

let shared: GroupReaper | undefined;

/**
 * The reaper of this OS process. One per process on purpose, not a piece of
 * context: it stands for the process's own lifetime, which every launcher in
 * it shares.
 */
export function processReaper(): GroupReaper {
  shared ??= new GroupReaper();
  return shared;
}

/**
 * `cmd` behind a gate: `sh` waits for one line on stdin, then execs `cmd` (its
 * stdin the rest of the pipe). The process that starts it opens the gate
 * (`openGate`) only after `GroupReaper.track` has listed its group. Without the
 * gate, a loaded machine could run the command — and the processes it puts in
 * the background — before the agent got to list the group; a kill -9 of the
 * agent then left them running (the direct child dies of its death signal,
 * what it started did not). Killed before the gate opens, the command never runs.
 * `stderrToStdout`: the command's stderr goes where its stdout does.
 */
export function gatedCommand(cmd: string[], stderrToStdout = false): string[] {
  return ["sh", "-c", `IFS= read -r _ || exit 1; exec "$@"${stderrToStdout ? " 2>&1" : ""}`, "sh", ...cmd];
}

/** Opens the gate of a gatedCommand started with `stdin: "pipe"`, then writes `input` after it, if given, and closes stdin unless `keepOpen`. */
export function openGate(stdin: FileSink, input?: Uint8Array, keepOpen = false): void {
  // A command that ends without reading all of its input makes the rest of the
  // write fail (EPIPE), now or — what the pipe could not take at once — later, as
  // the promise a write or the close returns then: its own business, said by its exit.
  const settle = (result: unknown) => {
    if (result instanceof Promise) result.catch(() => {});
  };
  try {
    settle(stdin.write("\n"));
    if (input !== undefined && input.length > 0) settle(stdin.write(input));
    settle(keepOpen ? stdin.flush() : stdin.end());
  } catch {
    // The command is gone already.
  }
}

