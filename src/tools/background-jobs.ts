import type { Clock } from "../core/clock.ts";
import { UsageError } from "../core/errors.ts";
import type { IdSource } from "../core/ids.ts";
import type { RuntimeEvent } from "../core/runtime-event.ts";
import type { EventInbox, EventOwner } from "../runtime/event-inbox.ts";
import type { JobHandle, JobSupervisor } from "../runtime/job-supervisor.ts";
import { type EnvPolicy, commandEnv } from "../security/env-policy.ts";
import type { Sandbox } from "../security/sandbox/sandbox.ts";
import { runProcessGroup } from "../process/process-group.ts";
import { DEFAULT_BACKGROUND_TIMEOUT_MS, DEFAULT_SHELL_OUTPUT_CHARS, exitLine } from "./shell.ts";
import { withTruncationNote } from "../core/truncate.ts";

export interface BackgroundJobsOptions {
  /** The Lead's inbox: each completion is published here, with these jobs as its owner. */
  inbox: EventInbox;
  /** The runtime's one owner of background work: every job runs under it. */
  supervisor: JobSupervisor;
  clock: Clock;
  ids: IdSource;
  /** Output kept per job (the shell tool's cap by default). */
  maxOutputChars?: number;
  /** The OS sandbox jobs run in, as the shell tool's commands do; none in tests of bare jobs. */
  sandbox?: Sandbox;
  /** Which of the agent's variables jobs see (config `shell.env`), as the shell tool's commands do. */
  env?: EnvPolicy;
}

export interface BackgroundJobInfo {
  id: string;
  command: string;
  startedAtUtc: string;
}

/**
 * Shell commands the Lead started with `run_in_background`: each runs in its own
 * process group under the supervisor, and its end (exit code, duration, output)
 * reaches the Lead as one event. Not durable: close() kills whatever still runs,
 * and a job cut short by close reports nothing (there is no turn left to tell).
 */
export class BackgroundJobs implements EventOwner {
  readonly #o: BackgroundJobsOptions;
  readonly #running = new Map<string, { info: BackgroundJobInfo; handle: JobHandle }>();
  /** Completions the Lead has (acknowledged), kept so a caller can tell a job finished from one never started. */
  readonly #reported = new Set<string>();
  #closed = false;

  constructor(options: BackgroundJobsOptions) {
    this.#o = options;
  }

  get inbox(): EventInbox {
    return this.#o.inbox;
  }

  get supervisor(): JobSupervisor {
    return this.#o.supervisor;
  }

  /** Jobs still running, oldest first. */
  running(): BackgroundJobInfo[] {
    return [...this.#running.values()].map((job) => ({ ...job.info }));
  }

  hasRunning(): boolean {
    return this.#running.size > 0;
  }

  wasReported(id: string): boolean {
    return this.#reported.has(id);
  }

  /** Starts `command` in `workspace` and returns its job id at once. */
  start(command: string, options: { workspace: string; timeoutMs?: number }): string {
    if (this.#closed) throw new UsageError("background jobs are shut down; run the command in the foreground");
    // Built before the job exists: a sandbox that cannot start refuses the call itself.
    const cmd = this.#o.sandbox ? this.#o.sandbox.command(command, options.workspace) : ["sh", "-c", command];
    const info = { id: this.#o.ids.next(), command, startedAtUtc: this.#o.clock.now().toISOString() };
    const timeoutMs = options.timeoutMs ?? DEFAULT_BACKGROUND_TIMEOUT_MS;
    const handle = this.#o.supervisor.start(`background job ${info.id}`, async (signal) => {
      try {
        const content = await this.#run(command, cmd, options.workspace, timeoutMs, signal);
        if (content !== undefined) this.#o.inbox.publish({ event: this.#event(info.id, content), owner: this });
      } finally {
        this.#running.delete(info.id);
      }
    });
    this.#running.set(info.id, { info, handle });
    return info.id;
  }

  async acknowledge(event: RuntimeEvent): Promise<void> {
    this.#reported.add(event.eventId.replace(/^background:/, ""));
  }

  /** Refuses new jobs, kills the running ones' process groups and waits for them to end. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#running.values()].map((job) => job.handle.cancel()));
  }

  /** The report of a finished job, or undefined when close() cut it short. */
  async #run(command: string, cmd: string[], workspace: string, timeoutMs: number, signal: AbortSignal): Promise<string | undefined> {
    const started = performance.now();
    const maxChars = this.#o.maxOutputChars ?? DEFAULT_SHELL_OUTPUT_CHARS;
    let status: string;
    let output: string;
    try {
      const result = await runProcessGroup({ cmd, cwd: workspace, env: commandEnv(this.#o.env), capture: "combined", maxChars, timeoutMs, signal });
      if (result.aborted) return undefined;
      status = exitLine(result, timeoutMs);
      output = withTruncationNote(result.output, "next time redirect the output to a file and read parts of it");
    } catch (error) {
      // It never ran (e.g. the workspace is gone): still an answer the Lead is waiting for.
      status = `[could not start: ${(error as Error).message}]`;
      output = "";
    }
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const body = output === "" ? "(no output)\n" : output.endsWith("\n") ? output : `${output}\n`;
    return `finished after ${seconds} s ${status}\n$ ${command}\n${body}`;
  }

  #event(id: string, content: string): RuntimeEvent {
    return {
      eventId: `background:${id}`,
      source: "background",
      sender: "shell",
      kind: "background",
      content: `background job ${id} ${content}`,
      createdAtUtc: this.#o.clock.now().toISOString(),
    };
  }
}
