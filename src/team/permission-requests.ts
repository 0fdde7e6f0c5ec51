import { type AgentName, LEAD } from "../core/agent-name.ts";
import type { MailboxMessage } from "../core/message.ts";
import {
  type PermissionRequestContent,
  type PermissionResponse,
  PermissionRequestContent as PermissionRequestSchema,
  PermissionResponse as PermissionResponseSchema,
  parseProtocolContent,
  requestIdOf,
  tryProtocolContent,
} from "../protocols/protocol-messages.ts";
import { derivedId } from "./derived-id.ts";
import type { TeamContext } from "./team-context.ts";
import type { TeamMail } from "./team-mail.ts";

/** How long a teammate's call waits for the verdict on its permission request (docs/team-protocols.md). */
export const PERMISSION_TIMEOUT_MS = 5 * 60_000;
/** A permission request's input is shown to the person asked up to this size; a larger one is left out. */
const PERMISSION_INPUT_MAX_CHARS = 64 * 1024;
/** How often a teammate in `agent worker` looks for the verdict the Lead's process wrote. */
const PERMISSION_POLL_MS = 200;

/**
 * Both sides of the permission protocol: a teammate's call asking the Lead's
 * side and waiting for the verdict, and the Lead's side answering it.
 */
export class PermissionRequests {
  readonly #team: TeamContext;
  readonly #mail: TeamMail;
  /** Teammates' calls waiting for the verdict on their permission request, by request id. */
  readonly #waiters = new Map<string, (verdict: PermissionResponse) => void>();

  constructor(team: TeamContext, mail: TeamMail) {
    this.#team = team;
    this.#mail = mail;
  }

  /**
   * A teammate's call that needs approval: a `permission_request` in the Lead's
   * mailbox, answered on the Lead's side (see decidePermission) with a
   * `permission_response` to the teammate. The call waits for the verdict, up
   * to the timeout; a stopped wait is a denial that says why.
   */
  async request(name: AgentName, request: PermissionRequestContent, signal: AbortSignal): Promise<PermissionResponse> {
    const team = this.#team;
    const id = team.o.ids.next();
    const input = request.input === undefined || JSON.stringify(request.input).length > PERMISSION_INPUT_MAX_CHARS ? {} : { input: request.input };
    const content: PermissionRequestContent = {
      tool: request.tool,
      effect: request.effect,
      subject: request.subject,
      ...(request.why ? { why: request.why } : {}),
      ...(request.owner !== undefined ? { owner: request.owner } : {}),
      ...input,
    };
    const verdict = new Promise<PermissionResponse>((resolve) => this.#waiters.set(id, resolve));
    const timeoutMs = team.o.permissionTimeoutMs ?? PERMISSION_TIMEOUT_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    const settled = new AbortController();
    try {
      await this.#mail.deliver(name, LEAD, "permission_request", JSON.stringify(content), id, undefined, id);
      const stopped = new Promise<PermissionResponse>((resolve) => {
        const within = timeoutMs < 1000 ? `${timeoutMs} ms` : `${Math.round(timeoutMs / 1000)} s`;
        timer = setTimeout(() => resolve({ allow: false, reason: `no answer to permission request ${id} within ${within}` }), timeoutMs);
        onAbort = () => resolve({ allow: false, reason: `permission request ${id} was not answered: the run stopped` });
        if (signal.aborted) onAbort();
        else signal.addEventListener("abort", onAbort, { once: true });
      });
      // In `agent worker` the Lead's side is another process: its verdict is seen in the store.
      const remote = team.role === "worker" ? this.#verdictInStore(id, settled.signal) : new Promise<never>(() => {});
      return await Promise.race([verdict, stopped, remote]);
    } finally {
      settled.abort();
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener("abort", onAbort);
      this.#waiters.delete(id);
    }
  }

  /** Polls the store for the response to permission request `id` until it is there (or `stop`). */
  async #verdictInStore(id: string, stop: AbortSignal): Promise<PermissionResponse> {
    const responseId = derivedId(id, "permission_response");
    while (!stop.aborted) {
      await Bun.sleep(PERMISSION_POLL_MS);
      const found = await this.#team.o.store.find(responseId).catch(() => null);
      if (found?.message) return tryProtocolContent(PermissionResponseSchema, found.message) ?? { allow: false, reason: `the answer to permission request ${id} is malformed` };
    }
    return new Promise<never>(() => {});
  }

  /**
   * The Lead's side of a permission request, as a job of its own so the pump
   * goes on: the verdict goes to the teammate's mailbox (under an id derived
   * from the request, so a request answered before a crash is not answered
   * twice), then to the waiting call, then the request is acked. A request
   * nobody waits for any more (its runtime died) is denied without asking.
   */
  answer(message: MailboxMessage): void {
    const team = this.#team;
    const requestId = requestIdOf(message);
    team.o.supervisor.start(`permission request ${requestId}`, async (signal) => {
      const waiter = this.#waiters.get(requestId);
      let verdict: PermissionResponse;
      // A teammate run here that does not wait any more was stopped with this process;
      // one run by an `agent worker` waits there.
      if (!waiter && team.runsHere(message.sender)) verdict = { allow: false, reason: `permission request ${requestId} is no longer waited for (its runtime stopped); the call asks again when its turn resumes` };
      else if (!team.o.decidePermission) verdict = { allow: false, reason: "no one on the Lead's side can answer permission requests in this runtime" };
      else {
        try {
          verdict = await team.o.decidePermission(parseProtocolContent(PermissionRequestSchema, message), message.sender, requestId, signal);
        } catch (error) {
          verdict = { allow: false, reason: `the permission request could not be decided: ${(error as Error).message}` };
        }
      }
      const teammate = team.workers.get(message.sender);
      if (teammate) {
        await this.#mail.sendOnce(LEAD, message.sender, "permission_response", JSON.stringify(verdict), { inReplyTo: message.id, requestId }, derivedId(requestId, "permission_response"));
      }
      waiter?.(verdict);
      await team.o.store.ack(message);
      team.emit({ type: "mailbox", op: "ack", agent: LEAD, id: message.id, from: message.sender, kind: message.kind });
      // The loop of a teammate that is not busy consumes the response now.
      if (teammate) team.startWorker(message.sender);
    });
  }
}
