import { InvalidAgentNameError } from "./errors.ts";

/** The Lead's reserved name: teammates may never take it. */
export const LEAD = "lead";

/**
 * The sender of the operator's own messages (`agent team send`): reserved, so a
 * message from "user" is never from a teammate.
 */
export const USER = "user";

export const AGENT_NAME_MAX_LENGTH = 40;

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

// Names become directory and file names, so anything Windows refuses as a file
// name is refused everywhere, whatever the host.
const WINDOWS_RESERVED = new Set([
  "con",
  "prn",
  "aux",
  "nul",
  ...Array.from({ length: 9 }, (_, i) => `com${i + 1}`),
  ...Array.from({ length: 9 }, (_, i) => `lpt${i + 1}`),
]);

/** Why `name` is not a valid agent name, or undefined when it is. */
export function agentNameProblem(name: string): string | undefined {
  if (name.length === 0) return "it is empty";
  if (name.length > AGENT_NAME_MAX_LENGTH) return `it is longer than ${AGENT_NAME_MAX_LENGTH} characters`;
  if (name.includes("/") || name.includes("\\") || name.includes("..")) return "it contains a path piece";
  if (name !== name.toLowerCase()) return "it has upper-case letters";
  if (!SLUG.test(name)) return "only a-z, 0-9 and single inner hyphens are allowed";
  if (WINDOWS_RESERVED.has(name)) return "it is a reserved device name on Windows";
  return undefined;
}

/**
 * A valid agent name. Zod-free on purpose (the reading commands start without zod);
 * the schema for zod objects is in agent-name-schema.ts.
 */
export type AgentName = string;

/** Validates a name before any work is done; throws `InvalidAgentNameError`. */
export function assertAgentName(name: string): AgentName {
  const problem = agentNameProblem(name);
  if (problem) throw new InvalidAgentNameError(name, problem);
  return name;
}

/** A teammate name: a valid agent name that is not the Lead's. */
export function assertTeammateName(name: string): AgentName {
  assertAgentName(name);
  if (name === LEAD) throw new InvalidAgentNameError(name, `"${LEAD}" is reserved for the Lead`);
  if (name === USER) throw new InvalidAgentNameError(name, `"${USER}" is reserved for the operator's messages`);
  return name;
}
