import type { CommandPart } from "../security/shell-command/analyse.ts";
import type { PermissionDecision, PermissionRequest, RuledTool } from "./policy.ts";

// The reasons the policy gives: what the model reads after a denial, and what a person is told.

export function planDenial(tool: RuledTool): PermissionDecision {
  return {
    behavior: "deny",
    reason: `plan mode is read-only: ${tool.name} (${tool.effect}) is not allowed; describe the change instead, or run with another --permission-mode`,
  };
}

export function stateRootReason(tool: string, path: string): string {
  return (
    `permission denied: ${tool} may not touch ${JSON.stringify(path)}: it is in the agent's state directory ` +
    "(histories, mailboxes, locks), which no tool may read or change in any mode; use send_message to reach teammates"
  );
}

export function describe(tool: string, subject: string): string {
  const short = subject.length > 80 ? `${subject.slice(0, 77)}...` : subject;
  return subject === "" ? tool : `${tool}(${short})`;
}

/** Names the first part of a command line no allow rule covers, so the model (and the user) see why. */
export function unmatchedWhy(parts: CommandPart[], allowed: (part: CommandPart) => boolean): string {
  if (parts.length === 0) return "runs no simple command an allow rule could match";
  const opaque = parts.find((part) => part.opaque);
  if (opaque) return `cannot be checked part by part (${opaque.opaque})`;
  const part = parts.find((candidate) => !allowed(candidate));
  if (!part) return "needs approval";
  const named = part.mustName.length > 0 ? ` (an allow rule must name what changes the program it runs, literally before any *: ${part.mustName.join(", ")})` : "";
  return `runs "${part.ruled}", which no allow rule matches${named}`;
}

/**
 * The message of a headless denial names the ways to allow the call next time.
 * `hookAllowed`: a PreToolUse hook answered allow, which a guarded write does not take.
 */
export function headlessReason({ tool, effect, subject, why, guarded }: PermissionRequest, hookAllowed = false): string {
  const example = subject !== "" && subject.length <= 60 && !/[\n()]/.test(subject) ? `${tool}(${subject})` : tool;
  const hook = hookAllowed && guarded ? " (a PreToolUse hook's allow does not approve a guarded write)" : "";
  if (why !== undefined && effect === "edit") {
    return (
      `permission denied: ${tool}(${subject}) needs explicit approval because ${why}, and there is no TTY to ask${hook}; ` +
      `allow it with a rule naming the path in permissions.allow or --allow (e.g. ${JSON.stringify(example)})`
    );
  }
  if (guarded) {
    return (
      `permission denied: ${tool} needs explicit approval because ${why ?? "it writes a guarded file"}, and there is no TTY to ask${hook}; ` +
      "allow it with an edit rule naming each such path in permissions.allow or --allow (edit_file(PATH)); no mode approves it"
    );
  }
  const modes = effect === "edit" ? "--permission-mode acceptEdits or bypassPermissions" : "--permission-mode bypassPermissions";
  const because = why === undefined ? "" : ` (${why})`;
  return (
    `permission denied: ${tool} needs approval${because} and there is no TTY to ask; ` +
    `allow it with permissions.allow in config.json (e.g. ${JSON.stringify(example)}) or ${modes}`
  );
}
