import type { ArgsDef } from "citty";
import { MAILBOX_STATES } from "../core/mailbox-state.ts";

/**
 * Shared arg fragments. Global flags are part of every command's definition, so
 * they are accepted before or after a subcommand and listed in every `--help`.
 */
export const globalArgs = {
  workspace: {
    type: "string",
    valueHint: "dir",
    description: "The project's directory (default: the git repository around the current directory, else the current directory); the state root defaults to its .agent/state",
  },
  "state-dir": {
    type: "string",
    valueHint: "dir",
    description: "State root, holding every session (default: $AGENT_STATE_DIR, else .agent/state in the workspace)",
  },
  verbose: { type: "boolean", description: "Show stack traces with errors" },
  help: { type: "boolean", alias: "h", description: "Show this help" },
} as const satisfies ArgsDef;

export const jsonArg = {
  json: { type: "boolean", description: "Print one JSON object instead of text" },
} as const satisfies ArgsDef;

/** `--session` of the admin commands (mailbox, team, cron): which existing session they look at. */
export const sessionArg = {
  session: { type: "string", valueHint: "id", description: "Session: short id, id, unique id prefix or name (default: the most recently used)" },
} as const satisfies ArgsDef;

export const agentFilterArg = {
  agent: { type: "string", valueHint: "name", description: "Only this agent's mailbox" },
} as const satisfies ArgsDef;

export const stateFilterArg = {
  state: { type: "enum", options: [...MAILBOX_STATES], description: "Only messages in this state" },
} as const satisfies ArgsDef;

/** The values every command receives from `globalArgs`. */
export interface GlobalValues {
  workspace?: string;
  "state-dir"?: string;
  verbose?: boolean;
}
