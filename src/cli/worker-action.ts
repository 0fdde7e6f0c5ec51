import type { CommandContext } from "citty";
import { buildWorker } from "../app/lead.ts";
import { SessionNotFoundError, UsageError } from "../core/errors.ts";
import { parseDuration } from "../core/duration.ts";
import { parsePositiveInt } from "../core/values.ts";
import { writeErr } from "./output.ts";
import { ProgressPrinter } from "./run/progress.ts";
import { type RuntimeValues, runtimeSetup } from "./run/runtime-args.ts";
import { RunStop } from "./run/stop.ts";
import { SessionStore } from "../sessions/session-store.ts";
import { VERSION } from "./version.ts";
import type { workerArgs } from "./worker.ts";

const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `agent worker`: runs the session's teammates no live process holds until stopped. */
export async function workerAction({ args, rawArgs }: CommandContext<typeof workerArgs>): Promise<void> {
  if (args.session === undefined || args.session === "") {
    throw new UsageError("agent worker needs --session ID: the session whose teammates it runs (`agent sessions list` shows them)");
  }
  const maxTeammates = args["max-teammates"] === undefined ? undefined : parsePositiveInt(args["max-teammates"], { flag: "--max-teammates" });
  const leaseTtlMs = args["lease-ttl"] === undefined ? undefined : parseLeaseTtl(args["lease-ttl"]);
  const ref = args.session;
  // The session's record is on the Lead's machine; with a PostgreSQL store a
  // worker elsewhere names it by its full id (its team is in the store).
  let remoteId: string | undefined;
  const setup = runtimeSetup(args as RuntimeValues, rawArgs, (store) => {
    try {
      return { kind: "existing", meta: store.requireOwn(store.find(ref)) };
    } catch (error) {
      if (!(error instanceof SessionNotFoundError) || !SESSION_ID.test(ref)) throw error;
      remoteId = ref;
      return { kind: "new" };
    }
  });
  if (remoteId !== undefined && setup.settings.store.kind !== "postgres") {
    throw new SessionNotFoundError(ref, setup.stateRoot);
  }
  const sessionId = remoteId ?? (setup.session.kind === "existing" ? setup.session.meta.id : ref);
  const quiet = args.quiet === true;
  const say = (line: string) => (quiet ? Promise.resolve() : writeErr(`${line}\n`));
  for (const warning of setup.warnings) await say(`agent: warning: ${warning}`);
  const printer = new ProgressPrinter((text) => void writeErr(text), quiet ? "quiet" : args.verbose ? "verbose" : "normal");
  using stop = new RunStop(undefined);
  // No runtime lock: the Lead's process holds the session's; a worker holds teammate leases only.
  const worker = await buildWorker(setup.settings, {
    // Per machine even with a shared store: usage, large tool results.
    stateDir: new SessionStore(setup.stateRoot).dirOf(sessionId),
    sessionId,
    stateRoot: setup.stateRoot,
    workspace: setup.workspace,
    observer: printer.observe,
    teamObserver: printer.observeTeam,
    version: VERSION,
    sandbox: setup.sandbox,
    hosting: { ...(maxTeammates !== undefined ? { maxTeammates } : {}), ...(leaseTtlMs !== undefined ? { ttlMs: leaseTtlMs } : {}) },
  });
  try {
    await say(
      `agent worker: session ${sessionId}: running the teammates no other process holds` +
        `${maxTeammates !== undefined ? ` (at most ${maxTeammates})` : ""}, pid ${process.pid}; SIGTERM or Ctrl-C stops it`,
    );
    await new Promise<void>((resolve) => {
      if (stop.signal.aborted) return resolve();
      stop.signal.addEventListener("abort", () => resolve(), { once: true });
    });
    await say(`agent worker: ${stop.reason ?? "stopping"}: giving the teammates back`);
  } finally {
    // Messages in progress back to ready/, then the leases: the next holder starts at once.
    await worker.close();
  }
}

/** A lease shorter than a second would be lost to an ordinary pause (a garbage collection, a slow store). */
function parseLeaseTtl(text: string): number {
  const ms = parseDuration(text);
  if (ms < 1_000) throw new UsageError(`invalid value ${JSON.stringify(text)} for --lease-ttl: give at least 1s, e.g. 15s`);
  return ms;
}
