import { SessionNotFoundError, UsageError } from "../core/errors.ts";
import { NoOwnSessionError } from "./session-errors.ts";
import { assertSessionName, type SessionMeta } from "./session-meta.ts";
import type { SessionStore } from "./session-store.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Which session a runtime takes: a new one (named or not), or one that exists. */
/** `forkOf`: a new session that starts with a copy of this one's Lead conversation (--fork-session). */
export type SessionPlan = { kind: "new"; name?: string; id?: string; forkOf?: SessionMeta } | { kind: "existing"; meta: SessionMeta };

/** How `agent run` and `agent` choose their session: new unless told otherwise. */
export interface SessionChoice {
  /** The most recently used session of the state root. */
  continue?: boolean;
  /** An id, a unique id prefix, or a name. */
  resume?: string;
  /** Continue the session of this name, or create it. */
  session?: string;
  /** claude's --session-id: the session of this id, or a new one with it. */
  sessionId?: string;
  /** --fork-session: continue a copy of the chosen session instead of the session itself. */
  fork?: boolean;
}

/**
 * Validates the choice and finds the session it names; creates nothing. Only
 * this user's own sessions are taken: --continue passes over foreign ones,
 * --resume and --session refuse them (ForeignSessionError, exit 5).
 */
export function planSession(store: SessionStore, choice: SessionChoice): SessionPlan {
  const plan = choose(store, choice);
  if (choice.fork !== true) return plan;
  if (plan.kind !== "existing") throw new UsageError("--fork-session copies the session that -c or --resume names; give one of them");
  return { kind: "new", forkOf: plan.meta };
}

function choose(store: SessionStore, choice: SessionChoice): SessionPlan {
  const given = [
    choice.continue === true ? "--continue" : "",
    choice.resume !== undefined ? "--resume" : "",
    choice.session !== undefined ? "--session" : "",
    choice.sessionId !== undefined ? "--session-id" : "",
  ].filter(Boolean);
  if (given.length > 1) throw new UsageError(`${given.join(" and ")} each choose the session; give one of them`);
  if (choice.sessionId !== undefined) {
    const id = choice.sessionId.toLowerCase();
    if (!UUID.test(id)) throw new UsageError(`--session-id needs a UUID, e.g. --session-id ${crypto.randomUUID()}`);
    const meta = store.list().find((session) => session.id === id);
    return meta ? { kind: "existing", meta: store.requireOwn(meta) } : { kind: "new", id };
  }
  if (choice.continue === true) {
    const recent = store.mostRecent();
    if (!recent) {
      const foreign = store.list().length;
      throw foreign > 0 ? new NoOwnSessionError(store.root, foreign) : new SessionNotFoundError(undefined, store.root);
    }
    return { kind: "existing", meta: recent };
  }
  if (choice.resume !== undefined) {
    if (choice.resume.length === 0) throw new UsageError("--resume needs a session id (its short id from `agent sessions list`, the full id or a unique prefix of it)");
    return { kind: "existing", meta: store.requireOwn(store.find(choice.resume)) };
  }
  if (choice.session !== undefined) {
    const name = assertSessionName(choice.session);
    const meta = store.named(name);
    return meta ? { kind: "existing", meta: store.requireOwn(meta) } : { kind: "new", name };
  }
  return { kind: "new" };
}

/** The session the plan names, created now if it is new. */
export async function openPlannedSession(store: SessionStore, plan: SessionPlan): Promise<SessionMeta> {
  if (plan.kind === "existing") return plan.meta;
  return plan.name === undefined ? store.create(plan.id) : store.createNamed(plan.name);
}
