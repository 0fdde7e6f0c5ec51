import { AgentError } from "../core/errors.ts";

export class TeammateUnavailableError extends AgentError {
  readonly code = "TEAMMATE_UNAVAILABLE";
  readonly category = "usage" as const;
}

/** A live process (an `agent worker`, a Lead's runtime) holds the teammate's lease: it runs it now. */
export class TeammateHeldError extends AgentError {
  readonly code = "TEAMMATE_HELD";
  readonly category = "busy" as const;
  constructor(
    readonly teammate: string,
    readonly holder: { kind: string; pid: number; host: string },
  ) {
    super(
      `teammate ${teammate} is run now by ${holder.kind} pid ${holder.pid} on host ${holder.host}; ` +
        "stop that process (or let it finish) first, then run this again",
    );
  }
}
