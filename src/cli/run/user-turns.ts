import { UsageError } from "../../core/errors.ts";
import { uuidV7Source } from "../../core/ids.ts";
import { ZERO_USAGE } from "../../model/types.ts";
import type { LeadRuntime } from "../../app/lead.ts";
import { type QuietOutcome, runUntilQuiet } from "../../app/until-quiet.ts";
import type { RunResult } from "../../runtime/run-types.ts";
import type { TeammateRecord } from "../../team/team-registry.ts";
import { type AnswerSchema, correctionPrompt, schemaInstruction } from "./structured-output.ts";

export interface UserTurnsOptions {
  /** The first prompt's key (recorded before the runtime started); later turns get fresh ones. */
  firstKey: string;
  /** Wait for the team after each user turn (not with --no-wait). */
  wait: boolean;
  /** --json-schema: the answer is checked, and corrected once. */
  schema?: AnswerSchema;
  signal: AbortSignal;
  /** Told each turn that ended while more prompts may follow (--input-format stream-json). */
  turnEnded?: (done: UserTurnsDone) => void;
  /** Told each user's prompt (as the user wrote it) once its turn is in the history. */
  onAccepted?: (prompt: string) => void;
  /**
   * A driving program (the Claude Agent SDK) that may interrupt each turn: the
   * turn stops, its result is reported, and the next message is read. With one,
   * every turn's result goes to `turnEnded`, a failed last one too.
   */
  client?: { turnSignal(): AbortSignal; readonly interrupted: boolean };
}

export interface UserTurnsDone {
  userTurn: RunResult;
  quiet?: QuietOutcome;
  earlier: { turns: RunResult[]; events: number; eventTurns: number };
  structured?: { value: unknown } | { problem: string };
  teammates: TeammateRecord[];
  waitingForLead: number;
}

/**
 * The Lead's user turns of one `agent run`: one per prompt (several with
 * --input-format stream-json, in one session), each followed by the team's
 * event turns until it is quiet; then, with a schema, one corrective turn when
 * the final answer does not match it. A failed turn ends the run: what the
 * team still has to do stays durable for `agent drain`.
 */
export async function runUserTurns(lead: LeadRuntime, prompts: AsyncIterable<string>, o: UserTurnsOptions): Promise<UserTurnsDone> {
  const runner = lead.runner!;
  const earlier = { turns: [] as RunResult[], events: 0, eventTurns: 0 };
  let last: { userTurn: RunResult; quiet?: QuietOutcome } | undefined;
  let key: string | undefined = o.firstKey;
  // Set by `turn`, which the checker cannot see through.
  const lastTurn = () => last as { userTurn: RunResult; quiet?: QuietOutcome };
  const turn = async (prompt: string, written?: string) => {
    if (last) {
      earlier.turns.push(last.userTurn, ...(last.quiet?.turns.map((t) => t.result) ?? []));
      earlier.events += last.quiet?.events ?? 0;
      earlier.eventTurns += last.quiet?.turns.length ?? 0;
    }
    const accepted = written === undefined || !o.onAccepted ? undefined : () => o.onAccepted?.(written);
    // A new session's first prompt: its model request goes out while the turn makes it durable.
    runner.sendAhead(prompt);
    const signal = o.client ? AbortSignal.any([o.signal, o.client.turnSignal()]) : o.signal;
    const userTurn = await runner.run(prompt, { idempotencyKey: key ?? uuidV7Source.next(), signal, ...(accepted ? { onAccepted: accepted } : {}) });
    key = undefined;
    const quiet = o.wait && !userTurn.isError ? await runUntilQuiet(lead, signal) : undefined;
    last = { userTurn, ...(quiet ? { quiet } : {}) };
    return !userTurn.isError && !(quiet?.interrupted ?? false) && !(quiet?.turns.at(-1)?.result.isError ?? false);
  };
  const input = prompts[Symbol.asyncIterator]();
  for (;;) {
    const next = await nextOrAbort(input, o.signal);
    if (next === "aborted") {
      // --timeout or a signal while waiting for the next line: the command was interrupted.
      if (last) earlier.turns.push(lastTurn().userTurn, ...(lastTurn().quiet?.turns.map((t) => t.result) ?? []));
      last = { userTurn: { result: "stopped waiting for the next message on stdin", subtype: "error_interrupted", isError: true, turns: 0, usage: ZERO_USAGE, durationMs: 0 } };
      return { ...lastTurn(), earlier, teammates: lead.team.list(), waitingForLead: lead.inbox.size };
    }
    if (next.done) break;
    const prompt = next.value;
    const ok = await turn(o.schema ? `${prompt}\n\n${schemaInstruction(o.schema)}` : prompt, prompt);
    // The client's interrupt ends the turn, not the run.
    const goOn = ok || (o.client?.interrupted === true && !o.signal.aborted);
    // Before the next line is read: a driver may wait for this before writing it.
    if (goOn || o.client) o.turnEnded?.({ ...lastTurn(), earlier: { turns: [], events: 0, eventTurns: 0 }, teammates: lead.team.list(), waitingForLead: lead.inbox.size });
    if (!goOn) break;
  }
  if (!last) throw new UsageError('--input-format stream-json: stdin ended before any user message; send {"type":"user","message":{"role":"user","content":"..."}} lines');
  let structured: UserTurnsDone["structured"];
  if (o.schema && finalAnswer(lastTurn()).subtype === "success") {
    let checked = o.schema.check(finalAnswer(lastTurn()).result);
    if (!checked.ok && (await turn(correctionPrompt(o.schema, checked.problem)))) checked = o.schema.check(finalAnswer(lastTurn()).result);
    structured = checked.ok ? { value: checked.value } : { problem: checked.problem };
  }
  return { ...lastTurn(), earlier, ...(structured ? { structured } : {}), teammates: lead.team.list(), waitingForLead: lead.inbox.size };
}

/** The iterator's next value, or "aborted" as soon as `signal` is (a pipe nobody writes to must not outlast --timeout). */
async function nextOrAbort<T>(iterator: AsyncIterator<T>, signal: AbortSignal): Promise<IteratorResult<T> | "aborted"> {
  if (signal.aborted) return "aborted";
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<"aborted">((resolve) => {
    onAbort = () => resolve("aborted");
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([iterator.next(), aborted]);
  } finally {
    signal.removeEventListener("abort", onAbort!);
  }
}

function finalAnswer(last: { userTurn: RunResult; quiet?: QuietOutcome }): RunResult {
  return last.quiet?.turns.at(-1)?.result ?? last.userTurn;
}
