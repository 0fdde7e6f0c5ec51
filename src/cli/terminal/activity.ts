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
  /** Files its write_file/edit_file calls changed in its current (or last) turn. */
  files?: string[];
}

/** The tools whose successful call changed the file named by their `path`. */
const FILE_TOOLS = new Set(["write_file", "edit_file"]);

const LEAD = "lead";

/**
 * Follows the run's and the team's events into one activity line per agent:
 * the Lead's and each teammate's state, current tool, time in that state. Read
 * by `/team` and the live team view; it never changes what happens.
 */
export class TeamActivity {
  readonly #agents = new Map<string, AgentActivity>();
  /** The path of each file tool call in flight, by call id. */
  readonly #paths = new Map<string, string>();
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
        if (name === LEAD) this.#set(LEAD, { state: "working", doing: "thinking", files: [] });
        if (event.type === "event" && name === LEAD) this.#waiting = Math.max(0, this.#waiting - 1);
        break;
      case "model_request":
        this.#set(name, { doing: "thinking", ...(name === LEAD ? { state: "working" } : {}) });
        break;
      case "tool_call":
        if (FILE_TOOLS.has(event.name)) {
          const path = pathOf(event.arguments);
          if (path !== undefined) this.#paths.set(event.id, path);
        }
        this.#set(name, { doing: event.name, ...(name === LEAD ? { state: "working" } : {}) });
        break;
      case "tool_result": {
        const path = this.#paths.get(event.id);
        this.#paths.delete(event.id);
        const files = this.#agents.get(name)?.files ?? [];
        const changed = path !== undefined && !event.isError && !files.includes(path) ? { files: [...files, path] } : {};
        this.#set(name, { doing: "thinking", ...changed });
        break;
      }
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
      // A teammate's new turn starts its list of changed files afresh.
      const starts = working && this.#agents.get(event.name)?.state !== "running";
      this.#set(event.name, { role: event.role, state: event.state, doing: working ? "thinking" : undefined, ...(starts ? { files: [] } : {}) });
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

function pathOf(json: string): string | undefined {
  try {
    const path = (JSON.parse(json) as { path?: unknown }).path;
    return typeof path === "string" ? path : undefined;
  } catch {
    return undefined;
  }
}

/** `changed a.ts, b.ts +2`: the files an agent's turn changed, the first three named. */
function filesNote(files: readonly string[]): string {
  const shown = files.slice(0, 3).join(", ");
  return `changed ${shown}${files.length > 3 ? ` +${files.length - 3}` : ""}`;
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

/** One agent's line: `alice (writer)  working  write_file  12s  1.2k tokens  changed a.ts`. */
export function activityLine(agent: AgentActivity, now: number): string {
  const who = agent.role ? `${agent.name} (${agent.role})` : agent.name;
  const parts = [who, agent.state];
  if (agent.doing) parts.push(agent.doing);
  parts.push(elapsed(now - agent.since));
  if (agent.tokens > 0) parts.push(`${tokenCount(agent.tokens)} tokens`);
  if (agent.files && agent.files.length > 0) parts.push(filesNote(agent.files));
  return parts.join("  ");
}

/** The live team view: the Lead's line, one per teammate, and the events waiting for the Lead. */
export function teamViewLines(activity: TeamActivity, now: number): string[] {
  const lines = activity.list().map((agent) => activityLine(agent, now));
  const waiting = activity.waitingEvents;
  if (waiting > 0) lines.push(`${waiting} event${waiting === 1 ? "" : "s"} waiting for the Lead`);
  return lines;
}
