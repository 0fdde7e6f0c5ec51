import { oneLineVisible } from "../../security/terminal-text.ts";
import type { RunEvent } from "../../runtime/run-types.ts";
import type { TeamEvent } from "../../team/teammate-runtime.ts";

/** How much `agent run` tells on stderr: errors only, a line per tool call, or everything. */
export type ProgressLevel = "quiet" | "normal" | "verbose";

const BRIEF = 100;
const LONG = 300;

/**
 * The stderr line for an event at a level, or undefined to say nothing. Tool
 * failures, retries and warnings show by default: they explain a slow or odd run.
 */
export function progressLine(event: RunEvent, level: ProgressLevel): string | undefined {
  if (level === "quiet") return undefined;
  const who = `[${event.agent}]`;
  const verbose = level === "verbose";
  switch (event.type) {
    case "tool_call":
      return `${who} ${event.name} ${clip(event.arguments, verbose ? LONG : BRIEF)}`;
    case "tool_result":
      if (event.isError) return `${who} ${event.name} failed: ${clip(event.content, verbose ? LONG : BRIEF)}`;
      return verbose ? `${who} ${event.name} ok: ${clip(event.content, LONG)}` : undefined;
    case "model_retry":
      return `${who} model request failed (${clip(event.reason, LONG)}); retry ${event.attempt} in ${(event.delayMs / 1000).toFixed(1)} s`;
    case "warning":
      return `${who} warning: ${clip(event.message, LONG)}`;
    case "assistant":
      return verbose ? `${who} ${clip(event.text, LONG)}` : undefined;
    case "assistant_delta":
    case "tool_input_delta":
    case "thinking_delta":
      return undefined; // the whole reply follows as "assistant" and "tool_call"
    case "model_request":
      return verbose ? `${who} model request ${event.turn}` : undefined;
    case "usage":
      return undefined; // the team view's token counts
    case "compaction":
      return verbose
        ? `${who} compacted the history: ${event.summarisedMessages} message(s) summarised, ${event.persistedResults} large result(s) saved to files`
        : undefined;
    case "event":
      return undefined; // said once for its batch, by "event_turn"
    case "event_turn":
      return `${who} event turn: ${batchText(event.events)}`;
    case "user":
      return undefined; // the user knows what they asked
    case "todos": {
      // The plan is for the user to follow: shown whole, one item a line.
      const mark = { pending: "[ ]", in_progress: "[>]", completed: "[x]" } as Record<string, string>;
      const items = event.todos.map((todo) => `  ${mark[todo.status] ?? "[?]"} ${clip(todo.content, BRIEF)}`);
      return [`${who} todo list:`, ...items].join("\n");
    }
  }
}

/**
 * The stderr line for a team event: teammates starting, finishing and failing
 * show by default (they explain what a run is waiting for); mailbox moves and
 * the shutdown at close only with --verbose.
 */
export function teamProgressLine(event: TeamEvent, level: ProgressLevel): string | undefined {
  if (level === "quiet") return undefined;
  const verbose = level === "verbose";
  if (event.type === "mailbox") {
    return verbose ? `[mailbox] ${event.op} ${event.kind} ${event.from} → ${event.agent} ${event.id}` : undefined;
  }
  // Requests and answers between the Lead and a teammate say what the team waits for: always shown.
  if (event.type === "protocol") return `[${event.from}] ${clip(event.summary, verbose ? LONG : BRIEF)} (${event.kind} ${event.requestId})`;
  // Said as a warning by the command, which knows the session and store a worker needs (unattendedWarning).
  if (event.type === "unattended") return undefined;
  if (event.state === "shutdown" && !verbose) return undefined;
  const reason = event.reason === undefined ? "" : `: ${clip(event.reason, verbose ? LONG : BRIEF)}`;
  const plan = event.plan === undefined ? "" : `, plan ${event.plan}`;
  return `[${event.name}] ${event.state} (${event.role}${plan})${reason}`;
}

/** A batch as one line: "result from alice, message from bob"; a long one counted after the first few. */
function batchText(events: readonly { sender: string; kind: string }[]): string {
  // Idle notices say one thing each: their teammates, named together at the end.
  const idle = events.filter((event) => event.kind === "idle").map((event) => event.sender);
  const others = events.filter((event) => event.kind !== "idle");
  const shown = others.slice(0, 4).map((event) => `${event.kind} from ${event.sender}`);
  const more = others.length - shown.length;
  const listed = more > 0 ? `${shown.join(", ")} and ${more} more` : shown.join(", ");
  if (idle.length === 0) return listed;
  const names = idle.length === 1 ? `${idle[0]} is` : `${idle.slice(0, -1).join(", ")} and ${idle.at(-1)} are`;
  return listed === "" ? `${names} idle` : `${listed}; ${names} idle`;
}

/** One line, at most `max` characters: newlines shown as ⏎, the rest cut with an ellipsis. */
export function clip(text: string, max: number): string {
  // A tool's output or a model's arguments: one row, its control characters shown, not obeyed.
  const flat = oneLineVisible(text);
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** The RunObserver behind stderr progress: a line per event worth telling, at the level chosen. */
export class ProgressPrinter {
  constructor(
    private readonly write: (text: string) => void,
    private readonly level: ProgressLevel,
  ) {}

  readonly observe = (event: RunEvent): void => {
    const line = progressLine(event, this.level);
    if (line !== undefined) this.write(`${line}\n`);
  };

  readonly observeTeam = (event: TeamEvent): void => {
    const line = teamProgressLine(event, this.level);
    if (line !== undefined) this.write(`${line}\n`);
  };
}
