import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Subprocess } from "bun";
import { gatedCommand, openGate, processReaper } from "../process/reaper.ts";
import { type EnvPolicy, commandEnv } from "../security/env-policy.ts";

/** How long a server may take to exit on its own once its stdin is closed, then after SIGTERM. */
const EXIT_GRACE_MS = 1_000;
/** What is kept of the server's stderr, for the message when it fails. */
const STDERR_TAIL_CHARS = 2_000;

export interface StdioServerParams {
  command: string;
  args?: string[];
  /** Set for this server by its config: passed as written, secrets included (the user named them). */
  env?: Record<string, string>;
  /** The environment policy (config `shell.env`) the rest comes from; the default policy when absent. */
  policy?: EnvPolicy;
  cwd: string;
  /** The argv actually started (the sandbox around the server); throws when the sandbox cannot start. */
  wrap?: (argv: string[], cwd: string) => string[];
}

/**
 * The MCP stdio transport, with the server as the leader of its own process
 * group (setsid): closing it ends everything the server started, and the
 * process's reaper (src/process/reaper.ts) ends the group when the agent is
 * killed without closing it, kill -9 included.
 */
export class StdioProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #params: StdioServerParams;
  readonly #buffer = new ReadBuffer();
  #proc: Subprocess<"pipe", "pipe", "pipe"> | undefined;
  #stderr = "";
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(params: StdioServerParams) {
    this.#params = params;
  }

  /** The server's process id (and process group id) while it runs. */
  get pid(): number | undefined {
    return this.#proc?.pid;
  }

  /** The end of what the server wrote on stderr, for error messages. */
  get stderrTail(): string {
    return this.#stderr.trim();
  }

  /** How the process ended, or undefined while it runs. */
  get exit(): string | undefined {
    const proc = this.#proc;
    if (!proc || proc.exitCode === null && proc.signalCode === null) return undefined;
    return proc.exitCode !== null ? `exited with code ${proc.exitCode}` : `was killed by ${proc.signalCode}`;
  }

  async start(): Promise<void> {
    // The core list at most (PATH, HOME, …), secrets removed: the agent's other
    // variables, API keys above all, reach a server only when its config names them.
    const env = commandEnv(this.#params.policy, process.env, { inherit: "core" });
    // Throws (ENOENT, EACCES, a sandbox that cannot start) when the command cannot be started: the caller reports it.
    const argv = [this.#params.command, ...(this.#params.args ?? [])];
    const wrapped = this.#params.wrap ? this.#params.wrap(argv, this.#params.cwd) : argv;
    // Windows has neither process groups nor sh: there the server is ended on its own.
    const gated = process.platform !== "win32";
    const proc = Bun.spawn({
      // Behind a gate until its group is listed with the reaper (gatedCommand).
      cmd: gated ? gatedCommand(wrapped) : wrapped,
      cwd: this.#params.cwd,
      env: { ...env, ...this.#params.env },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      detached: true,
    });
    this.#proc = proc;
    if (gated) {
      processReaper().track(proc.pid);
      openGate(proc.stdin, undefined, true);
    }
    void this.#readStdout(proc.stdout);
    void this.#readStderr(proc.stderr);
    void proc.exited.then(() => {
      if (!this.#closed) this.onclose?.();
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const proc = this.#proc;
    if (!proc || this.exit !== undefined) throw new Error(`the server process ${this.exit ?? "is not running"}`);
    proc.stdin.write(serializeMessage(message));
    await proc.stdin.flush();
  }

  /** Every caller waits for the same shutdown: the SDK may start one while another is under way. */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    this.#closed = true;
    const proc = this.#proc;
    if (proc) {
      try {
        await proc.stdin.end();
      } catch {
        // The process is already gone and the pipe with it.
      }
      if (!(await exitsWithin(proc, EXIT_GRACE_MS))) {
        killGroup(proc.pid, "SIGTERM");
        if (!(await exitsWithin(proc, EXIT_GRACE_MS))) killGroup(proc.pid, "SIGKILL");
      }
      // The server may have left children behind in its group: they go too.
      killGroup(proc.pid, "SIGKILL");
      if (process.platform !== "win32") processReaper().release(proc.pid);
    }
    this.#buffer.clear();
    this.onclose?.();
  }

  async #readStdout(stream: ReadableStream<Uint8Array>): Promise<void> {
    try {
      for await (const chunk of stream) {
        this.#buffer.append(Buffer.from(chunk));
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.#buffer.readMessage();
          } catch (error) {
            // A line that is not JSON-RPC (a server logging to stdout): skip it, say so.
            this.onerror?.(error as Error);
            continue;
          }
          if (message === null) break;
          this.onmessage?.(message);
        }
      }
    } catch (error) {
      if (!this.#closed) this.onerror?.(error as Error);
    }
  }

  async #readStderr(stream: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of stream) {
        this.#stderr = (this.#stderr + decoder.decode(chunk, { stream: true })).slice(-STDERR_TAIL_CHARS);
      }
    } catch {
      // stderr is only for diagnostics.
    }
  }
}

async function exitsWithin(proc: Subprocess, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([proc.exited.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(process.platform === "win32" ? pid : -pid, signal);
  } catch {
    // ESRCH: nothing is left in the group.
  }
}
