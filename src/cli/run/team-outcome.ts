import { ZERO_USAGE, addUsage } from "../../model/types.ts";
import type { RunResult } from "../../runtime/run-types.ts";
import type { QuietOutcome } from "../../app/until-quiet.ts";
import type { TeammateRecord } from "../../team/team-registry.ts";
import type { UsageReport } from "../../usage/agent-usage.ts";

/** What `agent run` and `agent drain` report: the Lead's turns, the events behind them, the team. */
export interface TeamOutcome {
  /** The Lead's last turn (the last event turn when there were any), or why waiting stopped. */
  result: RunResult;
  /** Events that reached the Lead's history and were acknowledged. */
  events: number;
  /** Model turns the Lead ran for those events (an event answered before a crash gets none). */
  eventTurns: number;
  /** Each teammate as it was when the command stopped working. */
  teammates: TeammateRecord[];
  /** Every tool call the permission policy denied, in order, by any agent. */
  permissionDenials: PermissionDenialRecord[];
  /** What every agent of the command used (and cost, when priced). */
  usage?: UsageReport;
  /** The final answer as the JSON value --json-schema asked for, once it passed. */
  structuredOutput?: unknown;
}

export interface PermissionDenialRecord {
  agent: string;
  tool: string;
  callId: string;
  input: unknown;
  reason: string;
}

export interface TeamOutcomeInput {
  /** The user turn; absent for `drain`. */
  userTurn?: RunResult;
  /** The event turns after it; absent with --no-wait and after a failed user turn. */
  quiet?: QuietOutcome;
  /** Lead turns of this command before the user turn (earlier --input-format stream-json messages and their event turns), in order. */
  earlier?: { turns: RunResult[]; events: number; eventTurns: number };
  /** The --json-schema answer: its value, or why the last answer still did not match. */
  structured?: { value: unknown } | { problem: string };
  teammates: TeammateRecord[];
  /** Why the command was stopped (--timeout, a signal), when it was. */
  stopReason?: string;
  permissionDenials?: PermissionDenialRecord[];
  durationMs: number;
  /** Why the budget stopped the run, when it did. */
  budgetStop?: string;
  usage?: UsageReport;
}

/**
 * One result for the whole command. Its text and subtype are the last turn's,
 * so a failed last event turn fails the command like a failed user turn; when
 * the wait itself was cut short, it is `error_interrupted` and says what is left.
 * Turns and usage add up every turn; the duration is the command's.
 */
export function teamOutcome(input: TeamOutcomeInput): TeamOutcome {
  const { userTurn, quiet, teammates, stopReason, durationMs, permissionDenials = [], budgetStop, usage, earlier, structured } = input;
  const turns = [...(earlier?.turns ?? []), ...(userTurn ? [userTurn] : []), ...(quiet?.turns.map((turn) => turn.result) ?? [])];
  const last = turns.at(-1);
  let { result, subtype } = last ?? { result: "", subtype: "success" as const };
  if (structured && "problem" in structured && subtype === "success") {
    subtype = "error_max_structured_output_retries";
    result = `the final answer does not match --json-schema after one corrective turn: ${structured.problem}`;
  }
  if (quiet?.interrupted && subtype !== "error_interrupted") {
    subtype = "error_interrupted";
    result = `stopped waiting for the team (${workLeft(teammates)}); run \`agent drain\` to go on`;
  }
  if (budgetStop !== undefined) {
    // Whoever hit it (the Lead, a teammate), the whole command stops for the budget.
    const running = teammates.filter((teammate) => teammate.state === "running").map((teammate) => teammate.name);
    subtype = "error_budget";
    result = running.length > 0 ? `${budgetStop} (stopped mid-turn: ${running.join(", ")})` : budgetStop;
  }
  // The runner knows it was interrupted; only the command knows why.
  if (subtype === "error_interrupted" && stopReason !== undefined) result = `${stopReason}: ${result}`;
  return {
    result: {
      result,
      subtype,
      isError: subtype !== "success",
      turns: turns.reduce((sum, turn) => sum + turn.turns, 0),
      modelRetries: turns.reduce((sum, turn) => sum + (turn.modelRetries ?? 0), 0),
      usage: turns.reduce((sum, turn) => addUsage(sum, turn.usage), ZERO_USAGE),
      durationMs,
    },
    events: (quiet?.events ?? 0) + (earlier?.events ?? 0),
    eventTurns: (quiet?.turns.length ?? 0) + (earlier?.eventTurns ?? 0),
    teammates,
    permissionDenials,
    ...(usage ? { usage } : {}),
    ...(structured && "value" in structured && subtype === "success" ? { structuredOutput: structured.value } : {}),
  };
}

function workLeft(teammates: TeammateRecord[]): string {
  const running = teammates.filter((teammate) => teammate.state === "running").map((teammate) => teammate.name);
  return running.length > 0 ? `${running.join(", ")} still running` : "messages still on their way";
}

/**
 * What a runtime that stops before the team is quiet (--no-wait, the end of a
 * session) leaves behind, and how to finish it; undefined when nothing is left.
 */
export function leftForDrain(teammates: TeammateRecord[], waitingForLead: number, sessionId?: string): string | undefined {
  const running = teammates.filter((teammate) => teammate.state === "running").map((teammate) => teammate.name);
  const parts = [
    ...(running.length > 0 ? [`${running.join(", ")} still working (stopped now; the task stays in the mailbox)`] : []),
    ...(waitingForLead > 0 ? [`${waitingForLead} message(s) waiting for the Lead`] : []),
  ];
  const drain = sessionId === undefined ? "agent drain" : `agent drain --session ${sessionId}`;
  return parts.length === 0 ? undefined : `${parts.join(", ")}; run \`${drain}\` to continue`;
}
