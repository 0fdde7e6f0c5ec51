import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { LEAD } from "../../core/agent-name.ts";
import { ttyAskerIfInteractive } from "../../permissions/tty-asker.ts";
import type { LeadContext, LeadRuntime } from "../../app/lead.ts";
import type { PermissionAsker } from "../../permissions/policy.ts";
import { writeScreenErr, writeScreenOut } from "../output.ts";
import { VERSION } from "../version.ts";
import { OrderedWriter } from "./ordered-writer.ts";
import type { RunInfo } from "./result-json.ts";
import { terminalColumns } from "../terminal/columns.ts";
import { terminalHyperlinks } from "../terminal/hyperlinks.ts";
import { RunOutput } from "./run-output.ts";
import { RunFailedError } from "./run-failed.ts";
import type { HeadlessSetup } from "./runtime-args.ts";
import { type OpenSession, withRuntime } from "./runtime.ts";
import { RunStop } from "./stop.ts";
import { isTerminal } from "../../process/terminal.ts";
import { writeLastMessage } from "./last-message.ts";
import type { UsageLedger } from "../../usage/usage-ledger.ts";
import { startTracing } from "./tracing.ts";
import { claudeShapes } from "./claude-stream.ts";
import { codexShapes } from "./codex-stream.ts";
import { agentShapes } from "./stream-shapes.ts";
import { type PermissionDenialRecord, type TeamOutcome, type TeamOutcomeInput, teamOutcome } from "./team-outcome.ts";

/** What a headless command does with the runtime: `run` a user turn and its team, `drain` the team. */
export interface HeadlessWork<T extends Omit<TeamOutcomeInput, "stopReason" | "durationMs" | "permissionDenials">> {
  /** The user turn's key, when there is one. */
  idempotencyKey?: string;
  /**
   * `turnEnded` prints one result line for a user turn that is over while more may
   * follow (--input-format stream-json), as `claude` answers each message of its SDK.
   * `session` records the first prompt once its turn is accepted.
   */
  body(lead: LeadRuntime, stop: RunStop, turnEnded: (done: T) => void, session: OpenSession): Promise<T>;
  /** A line for stderr once the runtime is closed: what is left, or that there was nothing to do. */
  note?(done: T, outcome: TeamOutcome, info: RunInfo): string | undefined;
  /** The program driving the run over stdin and stdout (the Claude Agent SDK: sdk-control.ts), when there is one. */
  client?: HeadlessClient;
}

/** What a driving program changes in the frame: where stdout goes, who is asked, its hooks. */
export interface HeadlessClient {
  /** stdout, shared in order with the client's own control lines. */
  stdout: (text: string) => Promise<void>;
  /** Asked what a person would be asked (instead of the terminal). */
  asker?: PermissionAsker;
  hostHooks?: LeadContext["hostHooks"];
  /** Told the runtime once it is built. */
  started?(lead: LeadRuntime): void;
  /** Each turn's result line is printed as it ends (`turnEnded`): no other at the end. */
  eachTurnReported: boolean;
}

/**
 * The frame of `agent run` and `agent drain`: warnings, progress and the stop
 * (--timeout, signals) around the runtime; the result printed once the state
 * dir is released, so a script reacting to it finds the state dir free. A
 * failed result is thrown after it is printed, for the exit code.
 */
export async function runHeadless<T extends Omit<TeamOutcomeInput, "stopReason" | "durationMs" | "permissionDenials">>(
  setup: HeadlessSetup,
  work: HeadlessWork<T>,
): Promise<void> {
  const stderr = new OrderedWriter(writeScreenErr);
  // Asked of libc, not of process.stdout and process.stderr: reading their isTTY builds the streams.
  const stdoutIsTerminal = isTerminal(1);
  const stderrIsTerminal = isTerminal(2);
  const output = new RunOutput({
    format: setup.format,
    level: setup.level,
    stdout: work.client?.stdout ?? writeScreenOut,
    stderr,
    terminal: { stdout: stdoutIsTerminal, stderr: stderrIsTerminal },
    version: VERSION,
    streamAnswer: stdoutIsTerminal,
    ...(stdoutIsTerminal && (process.env.NO_COLOR ?? "") === "" && process.env.TERM !== "dumb"
      ? { markdown: { columns: () => terminalColumns(process.stdout), hyperlinks: terminalHyperlinks(process.env) } }
      : {}),
    ...(stderrIsTerminal && process.env.TERM !== "dumb"
      ? { teamView: { columns: () => terminalColumns(process.stderr), colour: (process.env.NO_COLOR ?? "") === "" } }
      : {}),
    includePartialMessages: setup.includePartialMessages,
    shapes: setup.events === "claude" ? claudeShapes(VERSION) : setup.events === "codex" ? codexShapes((path) => existsSync(resolve(setup.workspace, path))) : agentShapes(VERSION),
  });
  for (const warning of setup.warnings) output.warn(warning);
  // A script reading stream-json learns what was ignored (an untrusted project's settings) without parsing stderr.
  for (const warning of setup.warnings) output.setupWarning(LEAD, warning);
  const info: RunInfo = {
    agent: LEAD,
    model: setup.settings.model,
    workspace: setup.workspace,
    // Known once the session is open (a new one is created then).
    sessionId: "",
    stateDir: setup.stateRoot,
    permissionMode: setup.settings.permissionMode,
    // Set once the sandbox's probe is done (asking earlier would wait for it here).
    idempotencyKey: work.idempotencyKey,
  };
  let reportedTraceError = false;
  const tracer = await startTracing(
    work.idempotencyKey === undefined ? "agent drain" : "agent run",
    { "agent.model": setup.settings.model, "agent.workspace": setup.workspace, ...(work.idempotencyKey ? { "agent.turn.key": work.idempotencyKey } : {}) },
    (message) => {
      // Once: a collector that is down must not flood stderr.
      if (!reportedTraceError) output.warn(message);
      reportedTraceError = true;
    },
  );
  let outcome: TeamOutcome | undefined;
  let signal: NodeJS.Signals | undefined;
  let budgetStop: string | undefined;
  let ledger: UsageLedger | undefined;
  const permissionDenials: PermissionDenialRecord[] = [];
  try {
    using stop = new RunStop(setup.timeout);
    const started = performance.now();
    const done = await withRuntime(
      {
        setup,
        stop,
        observer: tracer ? (event) => (output.observe(event), tracer.observe(event)) : output.observe,
        teamObserver: tracer ? (event) => (output.observeTeam(event), tracer.observeTeam(event)) : output.observeTeam,
        asker: work.client ? work.client.asker : ttyAskerIfInteractive((ask) => output.whileAsking(ask)),
        ...(work.client?.hostHooks ? { hostHooks: work.client.hostHooks } : {}),
        onPermissionDenied: (denial) => {
          permissionDenials.push(denial);
          tracer?.denied(denial.agent, denial.tool, denial.reason);
        },
        ...(tracer ? { tracing: tracer } : {}),
        onClosing: () => output.stopProgress(),
        onBudgetExhausted: (error) => {
          budgetStop = error.message;
          // The whole team stops: what is unfinished stays durable for `agent drain`.
          stop.abort(error);
        },
      },
      async (lead, session) => {
        // The sandbox's probe ran while the session and runtime were set up: its
        // verdict is said before the init line (the sandbox itself never wraps a
        // command on an unknown verdict: src/security/sandbox/sandbox.ts).
        const sandboxWarning = await setup.sandboxWarning;
        if (sandboxWarning !== undefined) {
          output.warn(sandboxWarning);
          output.setupWarning(LEAD, sandboxWarning);
        }
        info.sandbox = setup.sandbox.status === "unavailable" ? "unavailable" : setup.sandbox.mode;
        info.sessionId = session.meta.id;
        info.stateDir = session.dir;
        ledger = lead.usage;
        // The init line lists the MCP servers with their tools, so they start now:
        // the first turn would need them a moment later anyway.
        if (setup.format === "stream-json" && lead.mcp.configured) {
          await lead.mcp.start();
          info.mcpServers = lead.mcp.statuses();
        }
        if (setup.events === "claude") info.tools = lead.runner?.toolNames() ?? [];
        work.client?.started?.(lead);
        output.start(info);
        let turnStarted = started;
        let denialsReported = 0;
        const turnEnded = (done: T) => {
          const turn = teamOutcome({
            ...done,
            durationMs: Math.round(performance.now() - turnStarted),
            permissionDenials: permissionDenials.slice(denialsReported),
            usage: lead.usage.run(setup.settings.pricing),
          });
          turnStarted = performance.now();
          denialsReported = permissionDenials.length;
          output.turnResult(turn, info);
        };
        return work.body(lead, stop, turnEnded, session);
      },
    );
    signal = stop.signalName;
    outcome = teamOutcome({
      ...done,
      stopReason: stop.reason,
      durationMs: Math.round(performance.now() - started),
      permissionDenials,
      budgetStop,
      // Read after the runtime closed: the turns it stopped are in it.
      usage: ledger?.run(setup.settings.pricing),
    });
    const note = work.note?.(done, outcome, info);
    if (note !== undefined) output.note(note);
    // Before the result is printed: if the file cannot be written, the one
    // error the entry prints is the only result, not a second one.
    if (setup.lastMessagePath !== undefined && !outcome.result.isError) writeLastMessage(setup.lastMessagePath, outcome.result.result);
    await output.finish(outcome, info, { result: !work.client?.eachTurnReported });
  } finally {
    // After the result: a slow collector does not hold it back.
    await tracer?.close(outcome?.result);
    // Progress first, then whatever error line the entry prints.
    await stderr.flush();
  }
  if (outcome.result.isError) throw new RunFailedError(outcome.result, signal);
}
