import { AgentError } from "../core/errors.ts";

/**
 * The default state root (`<workspace>/.agent/state`) is reached through a
 * symlink, or lies outside the workspace: a repository planted or redirected it,
 * and nothing may be written through it (exit 5).
 */
export class StateRootRedirectedError extends AgentError {
  readonly code = "STATE_ROOT_REDIRECTED";
  readonly category = "state" as const;
  constructor(
    readonly stateRoot: string,
    readonly path: string,
    readonly problem: string,
  ) {
    super(
      `refusing the state root ${stateRoot}: ${path} ${problem}, so the repository could redirect the agent's state; ` +
        "remove it (e.g. `rm .agent/state` for a symlink), or name a state root yourself with --state-dir or AGENT_STATE_DIR",
    );
  }
}

/** A session this user did not create (no valid marker): it is never taken up until adopted (exit 5). */
export class ForeignSessionError extends AgentError {
  readonly code = "FOREIGN_SESSION";
  readonly category = "state" as const;
  constructor(readonly sessionId: string) {
    super(
      `session ${sessionId} is foreign: it was not created by you here (committed to the repository, copied from another user, ` +
        `or from before session markers); look at it with \`agent sessions show ${sessionId}\`, take it over with \`agent sessions adopt ${sessionId}\``,
    );
  }
}

/** The user's session key file exists but does not hold a key (exit 5). */
export class SessionKeyError extends AgentError {
  readonly code = "SESSION_KEY";
  readonly category = "state" as const;
  constructor(readonly path: string) {
    super(
      `${path} does not hold a session key (64 hex digits); delete it to make a new one, then \`agent sessions adopt\` your sessions again`,
    );
  }
}

/**
 * `--continue` with none of this user's sessions in the root, but foreign ones:
 * said apart from "no session yet", since after an upgrade every earlier session
 * is foreign (exit 6, as for no session at all).
 */
export class NoOwnSessionError extends AgentError {
  readonly code = "SESSION_NOT_FOUND";
  readonly category = "not_found" as const;
  constructor(
    readonly root: string,
    readonly foreign: number,
  ) {
    super(
      `no session of yours in ${root}: its ${foreign} session(s) are foreign (committed, copied from another user, or made before session markers); ` +
        "`agent sessions list` shows them, `agent sessions adopt ID` takes one over, `agent run PROMPT` starts a new one",
    );
  }
}
