import type { RunEvent } from "../../runtime/run-types.ts";
import type { TeamEvent } from "../../team/teammate-runtime.ts";

/** What one agent is doing, as far as the events tell. */
export interface AgentActivity {
  name: string;
  role?: string;
  /** `working`, `idle`, `failed`… for teammates (their lifecycle state); `working` or `idle` for the Lead. */
  state: string;
  /** The tool running, or "thinking" while the model is asked; undefined when idle. */
  doing?: string;
  /** When the state began (ms since the epoch). */
  since: number;
  /** Model tokens used (input + output) in this process, when the events carry them. */
  tokens: number;
}

const LEAD = "lead";

/**
 * Follows the run's and the team's events into one activity line per agent:
 * the Lead's and each teammate's state, current tool, time in that state. Read
 * by `/team` and the live team view; it never changes what happens.
 */
export class TeamActivity {
  readonly #agents = new Map<string, AgentActivity>();
  /** Messages sent to the Lead that no event turn has taken yet. */
  #waiting = 0;
  #changed: () => void = () => {};

  constructor(private readonly now: () => number = Date.now) {
    this.#agents.set(LEAD, { name: LEAD, state: "idle", since: now(), tokens: 0 });
  }

  /** Forgets every agent but a fresh, idle Lead (a new session). */
  reset(): void {
    this.#agents.clear();
    this.#agents.set(LEAD, { name: LEAD, state: "idle", since: this.now(), tokens: 0 });
    this.#waiting = 0;
  }

  /** Called after each change (the live view redraws). */
  onChange(listener: () => void): void {
    this.#changed = listener;
  }

  get waitingEvents(): number {
    return this.#waiting;
  }

  /** The Lead first, then the teammates in the order they appeared. */
  list(): AgentActivity[] {
    return [...this.#agents.values()].map((agent) => ({ ...agent }));
  }

  get(name: string): AgentActivity | undefined {
    const agent = this.#agents.get(name);
    return agent ? { ...agent } : undefined;
  }

  /** Marks the Lead's turn over (its events do not say so). */
  leadIdle(): void {
    this.#set(LEAD, { state: "idle", doing: undefined });
  }

  readonly observe = (event: RunEvent): void => {
    // Task subagents (`lead/task-1`) count as the agent that started them.
    const name = event.agent.split("/")[0] as string;
    switch (event.type) {
      case "user":
      case "event":
        if (name === LEAD) this.#set(LEAD, { state: "working", doing: "thinking" });
        if (event.type === "event" && name === LEAD) this.#waiting = Math.max(0, this.#waiting - 1);
        break;
      case "model_request":
        this.#set(name, { doing: "thinking", ...(name === LEAD ? { state: "working" } : {}) });
        break;
      case "tool_call":
        this.#set(name, { doing: event.name, ...(name === LEAD ? { state: "working" } : {}) });
        break;
      case "tool_result":
        this.#set(name, { doing: "thinking" });
        break;
      case "assistant":
        // The Lead's reply without tool calls ends its turn.
        if (name === LEAD && event.agent === LEAD) this.#set(LEAD, { state: "idle", doing: undefined });
        else return;
        break;
      case "usage":
        this.#add(name, event.inputTokens + event.outputTokens);
        break;
      default:
        return;
    }
    this.#changed();
  };

  readonly observeTeam = (event: TeamEvent): void => {
    if (event.type === "mailbox") {
      if (event.agent !== LEAD) return;
      // A permission request is answered by the runtime, not by a Lead turn.
      if (event.op === "send" && event.kind !== "permission_request") this.#waiting += 1;
    } else if (event.type === "protocol" || event.type === "unattended") {
      return;
    } else {
      const working = event.state === "running";
      this.#set(event.name, { role: event.role, state: event.state, doing: working ? "thinking" : undefined });
    }
    this.#changed();
  };

  #set(name: string, change: Partial<AgentActivity>): void {
    const current = this.#agents.get(name) ?? { name, state: "working", since: this.now(), tokens: 0 };
    const stateChanged = change.state !== undefined && change.state !== current.state;
    this.#agents.set(name, { ...current, ...change, ...(stateChanged ? { since: this.now() } : {}) });
  }

  #add(name: string, tokens: number): void {
    const current = this.#agents.get(name);
    if (current) current.tokens += tokens;
  }
}

/** `4s`, `2m05s`, `1h02m`: elapsed time for a status line. */
export function elapsed(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}

/** `1.2k`, `34k`: a token count for a status line. */
export function tokenCount(tokens: number): string {
  if (tokens < 1000) return String(tokens);
  if (tokens < 100_000) return `${(tokens / 1000).toFixed(1)}k`;
  return `${Math.round(tokens / 1000)}k`;
}

/** One agent's line: `alice (writer)  working  write_file  12s  1.2k tokens`. */
export function activityLine(agent: AgentActivity, now: number): string {
  const who = agent.role ? `${agent.name} (${agent.role})` : agent.name;
  const parts = [who, agent.state];
  if (agent.doing) parts.push(agent.doing);
  parts.push(elapsed(now - agent.since));
  if (agent.tokens > 0) parts.push(`${tokenCount(agent.tokens)} tokens`);
  return parts.join("  ");
}

/** The live team view: the Lead's line, one per teammate, and the events waiting for the Lead. */
export function teamViewLines(activity: TeamActivity, now: number): string[] {
  const lines = activity.list().map((agent) => activityLine(agent, now));
  const waiting = activity.waitingEvents;
  if (waiting > 0) lines.push(`${waiting} event${waiting === 1 ? "" : "s"} waiting for the Lead`);
  return lines;
}
