import { describe, expect, test } from "bun:test";
import { leftForDrain, teamOutcome } from "../../../src/cli/run/team-outcome.ts";
import { teamProgressLine } from "../../../src/cli/run/progress.ts";
import type { RunResult } from "../../../src/runtime/run-types.ts";
import type { QuietOutcome } from "../../../src/app/until-quiet.ts";
import type { TeammateRecord } from "../../../src/team/team-registry.ts";

const turn = (result: string, extra: Partial<RunResult> = {}): RunResult => ({
  result,
  subtype: "success",
  isError: false,
  turns: 2,
  usage: { inputTokens: 10, outputTokens: 3 },
  durationMs: 5,
  ...extra,
});
const event = { eventId: "e", source: "mailbox" as const, sender: "alice", kind: "result", content: "c", createdAtUtc: "2026-01-01T00:00:00.000Z" };
const quiet = (results: RunResult[], interrupted = false): QuietOutcome => ({
  events: results.length,
  turns: results.map((result) => ({ event, key: event.eventId, result })),
  interrupted,
});
const mate = (name: string, state: TeammateRecord["state"]): TeammateRecord => ({
  name,
  role: "dev",
  state,
  createdAtUtc: "2026-01-01T00:00:00.000Z",
  updatedAtUtc: "2026-01-01T00:00:00.000Z",
});

describe("teamOutcome", () => {
  test("the last event turn is the result; turns, retries and usage add up; the duration is the command's", () => {
    const outcome = teamOutcome({ userTurn: turn("spawned", { modelRetries: 1 }), quiet: quiet([turn("one"), turn("two", { modelRetries: 2 })]), teammates: [], durationMs: 99 });
    expect(outcome.result).toEqual({ result: "two", subtype: "success", isError: false, turns: 6, modelRetries: 3, usage: { inputTokens: 30, outputTokens: 9 }, durationMs: 99 });
    expect({ events: outcome.events, eventTurns: outcome.eventTurns }).toEqual({ events: 2, eventTurns: 2 });
  });

  test("a failed last event turn fails the command; a failed earlier one does not", () => {
    const failedLast = teamOutcome({ userTurn: turn("u"), quiet: quiet([turn("ok"), turn("cap", { subtype: "error_max_turns", isError: true })]), teammates: [], durationMs: 1 });
    expect(failedLast.result).toMatchObject({ subtype: "error_max_turns", isError: true, result: "cap" });
    const failedFirst = teamOutcome({ userTurn: turn("u"), quiet: quiet([turn("cap", { subtype: "error_model", isError: true }), turn("ok")]), teammates: [], durationMs: 1 });
    expect(failedFirst.result).toMatchObject({ subtype: "success", isError: false, result: "ok" });
  });

  test("stopped while waiting: error_interrupted naming the stop and the teammates still running", () => {
    const outcome = teamOutcome({
      userTurn: turn("spawned"),
      quiet: quiet([], true),
      teammates: [mate("alice", "running"), mate("bob", "idle")],
      stopReason: "timed out (--timeout 5s)",
      durationMs: 1,
    });
    expect(outcome.result).toMatchObject({
      subtype: "error_interrupted",
      isError: true,
      result: "timed out (--timeout 5s): stopped waiting for the team (alice still running); run `agent drain` to go on",
    });
  });

  test("an interrupted turn keeps its own text, prefixed with why", () => {
    const interrupted = turn("interrupted before the turn finished", { subtype: "error_interrupted", isError: true });
    const outcome = teamOutcome({ userTurn: interrupted, teammates: [], stopReason: "interrupted by SIGINT", durationMs: 1 });
    expect(outcome.result.result).toBe("interrupted by SIGINT: interrupted before the turn finished");
  });

  test("drain with nothing to do: an empty success", () => {
    expect(teamOutcome({ quiet: quiet([]), teammates: [], durationMs: 1 }).result).toMatchObject({ result: "", subtype: "success", isError: false, turns: 0 });
  });

  test("leftForDrain names what a stop leaves, or nothing", () => {
    expect(leftForDrain([mate("alice", "idle")], 0)).toBeUndefined();
    expect(leftForDrain([mate("alice", "running"), mate("bob", "running")], 2)).toBe(
      "alice, bob still working (stopped now; the task stays in the mailbox), 2 message(s) waiting for the Lead; run `agent drain` to continue",
    );
  });
});

describe("teamProgressLine", () => {
  const id = "0192d4c8-5e1f-7b3a-8c44-2f0a1d9e6b7c";
  test("teammate states by default; shutdown and mailbox moves only when verbose; nothing when quiet", () => {
    const running = { type: "teammate" as const, name: "alice", role: "backend", state: "running" as const };
    expect(teamProgressLine(running, "normal")).toBe("[alice] running (backend)");
    expect(teamProgressLine({ ...running, state: "failed", reason: "model\nbroke" }, "normal")).toBe("[alice] failed (backend): model⏎broke");
    expect(teamProgressLine({ ...running, state: "shutdown" }, "normal")).toBeUndefined();
    expect(teamProgressLine({ ...running, state: "shutdown" }, "verbose")).toBe("[alice] shutdown (backend)");
    const send = { type: "mailbox" as const, op: "send" as const, agent: "lead", id, from: "alice", kind: "result" as const };
    expect(teamProgressLine(send, "normal")).toBeUndefined();
    expect(teamProgressLine(send, "verbose")).toBe(`[mailbox] send result alice → lead ${id}`);
    expect(teamProgressLine(running, "quiet")).toBeUndefined();
  });
});
