import type { RunEvent } from "../../runtime/run-types.ts";
import type { TeamEvent } from "../../team/teammate-runtime.ts";
import { type RunInfo, eventJson, initJson, resultJson } from "./result-json.ts";
import type { TeamOutcome } from "./team-outcome.ts";

/** What a stream-json line is made from: a run's or a team's event. */
export type StreamEvent = RunEvent | TeamEvent;

/**
 * One dialect of stream-json output: the lines of the start, of each event and
 * of the result. Ours (`--output stream-json`), Claude Code's (`--output-format
 * stream-json`, claude-stream.ts) and codex exec's (`--json`, codex-stream.ts).
 */
export interface StreamShapes {
  init(info: RunInfo): unknown[];
  event(event: StreamEvent): unknown[];
  result(outcome: TeamOutcome, info: RunInfo): unknown[];
}

/** Our own shapes (docs/output.md). */
export function agentShapes(version: string): StreamShapes {
  return {
    init: (info) => [initJson(info, version)],
    // Ours has text pieces only (assistant_delta); an answer's other pieces and its token count are Claude's partial messages'.
    event: (event) => (event.type === "usage" || event.type === "tool_input_delta" || event.type === "thinking_delta" ? [] : [eventJson(event)]),
    result: (outcome, info) => [resultJson(outcome.result, info, outcome)],
  };
}

/** A tool call's arguments as an object, as the Claude and codex shapes carry them; unparsable text as is. */
export function callInput(text: string): unknown {
  try {
    return text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    return text;
  }
}
