import { AgentError } from "../core/errors.ts";

export class TeammateUnavailableError extends AgentError {
  readonly code = "TEAMMATE_UNAVAILABLE";
  readonly category = "usage" as const;
}
