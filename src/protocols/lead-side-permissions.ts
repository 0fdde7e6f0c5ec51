import type { AgentName } from "../core/agent-name.ts";
import type { PermissionAsker, PermissionPolicy } from "../permissions/policy.ts";
import type { PermissionRequestContent, PermissionResponse } from "./protocol-messages.ts";

/**
 * The Lead's side of a teammate's permission request: the call as the Lead's
 * policy sees it — its deny and allow rules, its mode, and on a terminal the
 * user, asked with the teammate's name. The verdict says who decided.
 */
export function leadSideDecider(policy: PermissionPolicy, workspace: string, asker: PermissionAsker | undefined) {
  return async (request: PermissionRequestContent, teammate: AgentName, requestId: string, signal: AbortSignal): Promise<PermissionResponse> => {
    let asked = false;
    // The person asked sees that a teammate asks, not the Lead: "teammate alice wants to run …".
    const ask: PermissionAsker | undefined = asker && ((question, stop) => ((asked = true), asker({ ...question, identity: `teammate ${question.identity}` }, stop)));
    // A write to a path another teammate owns needs an allow rule naming it or the user's yes: the mode alone does not do.
    const lead = policy.withMode(request.owner !== undefined ? "default" : policy.mode, ask);
    const call = { name: request.tool, effect: request.effect, subject: () => request.subject };
    const decision = await lead.decide(call, request.input, { identity: teammate, idempotencyKey: requestId, workspace, signal });
    if (decision.behavior === "deny") return { allow: false, reason: decision.reason };
    return { allow: true, reason: asked ? "allowed by the user" : `allowed by the Lead's rules and mode (${policy.mode})` };
  };
}
