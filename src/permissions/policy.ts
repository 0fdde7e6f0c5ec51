import { isAbsolute, normalize, relative } from "node:path";
import type { ConfigFile, PermissionMode } from "../config/config.ts";
import type { Tool, ToolContext, ToolEffect } from "../tools/tool.ts";
import { type PermissionRule, parseRules } from "./rules.ts";

export type PermissionDecision = { behavior: "allow" } | { behavior: "deny"; reason: string };

export interface PermissionRequest {
  tool: string;
  effect: ToolEffect;
  /** The command or path the call is about, as rules see it. */
  subject: string;
  identity: string;
}

/** Asks a person; true means allowed. Only present when there is someone to ask (a TTY). */
export type PermissionAsker = (request: PermissionRequest, signal: AbortSignal) => Promise<boolean>;

type ModeAnswer = "allow" | "ask" | "deny";

/** What each mode does with a call no rule decided, by the tool's effect. */
// "coordinate" (spawning teammates, messages, the todo list, tasks) touches no
// file and runs no command: every mode allows it; each teammate's own tools are
// governed by the same policy.
const MODES: Record<PermissionMode, Record<ToolEffect, ModeAnswer>> = {
  default: { read: "allow", coordinate: "allow", edit: "ask", execute: "ask" },
  acceptEdits: { read: "allow", coordinate: "allow", edit: "allow", execute: "ask" },
  plan: { read: "allow", coordinate: "allow", edit: "deny", execute: "deny" },
  bypassPermissions: { read: "allow", coordinate: "allow", edit: "allow", execute: "allow" },
};

export interface PermissionPolicyOptions {
  mode: PermissionMode;
  allow?: readonly string[];
  deny?: readonly string[];
  ask?: PermissionAsker;
}

const ALLOW: PermissionDecision = { behavior: "allow" };

/**
 * Decides whether one tool call may run: deny rules, then allow rules, then the
 * mode. Malformed rules throw `ConfigError` here, at start-up.
 */
export class PermissionPolicy {
  readonly mode: PermissionMode;
  readonly #allow: PermissionRule[];
  readonly #deny: PermissionRule[];
  readonly #ask: PermissionAsker | undefined;

  constructor(options: PermissionPolicyOptions) {
    this.mode = options.mode;
    this.#allow = parseRules(options.allow, "allow");
    this.#deny = parseRules(options.deny, "deny");
    this.#ask = options.ask;
  }

  /** The policy of a config file and a mode (the flag's, else the file's, else `default`); extra rules come from flags. */
  static fromConfig(
    config: ConfigFile,
    options: { mode?: PermissionMode; ask?: PermissionAsker; allow?: readonly string[]; deny?: readonly string[] } = {},
  ): PermissionPolicy {
    return new PermissionPolicy({
      mode: options.mode ?? config.permissionMode ?? "default",
      allow: [...(config.permissions?.allow ?? []), ...(options.allow ?? [])],
      deny: [...(config.permissions?.deny ?? []), ...(options.deny ?? [])],
      ...(options.ask ? { ask: options.ask } : {}),
    });
  }

  async decide(tool: Tool, input: unknown, context: ToolContext): Promise<PermissionDecision> {
    const subject = ruleSubject(tool, input, context.workspace);
    const denied = this.#deny.find((rule) => rule.matches(tool, subject));
    if (denied) return deny(`permission denied: ${describe(tool.name, subject)} matches the deny rule "${denied.source}"`);
    if (this.#allow.some((rule) => rule.matches(tool, subject))) return ALLOW;
    const answer = MODES[this.mode][tool.effect];
    if (answer === "allow") return ALLOW;
    if (answer === "deny") {
      return deny(
        `plan mode is read-only: ${tool.name} (${tool.effect}) is not allowed; describe the change instead, or run with another --permission-mode`,
      );
    }
    return this.#askFor({ tool: tool.name, effect: tool.effect, subject, identity: context.identity }, context.signal);
  }

  async #askFor(request: PermissionRequest, signal: AbortSignal): Promise<PermissionDecision> {
    if (!this.#ask) return deny(headlessReason(request));
    try {
      if (await this.#ask(request, signal)) return ALLOW;
      return deny(`permission denied by the user for ${describe(request.tool, request.subject)}`);
    } catch (error) {
      return deny(`permission denied: could not ask for approval of ${request.tool} (${(error as Error).message})`);
    }
  }
}

function deny(reason: string): PermissionDecision {
  return { behavior: "deny", reason };
}

function describe(tool: string, subject: string): string {
  const short = subject.length > 80 ? `${subject.slice(0, 77)}...` : subject;
  return subject === "" ? tool : `${tool}(${short})`;
}

/** The message of a headless denial names the ways to allow the call next time. */
function headlessReason({ tool, effect, subject }: PermissionRequest): string {
  const example = subject !== "" && subject.length <= 60 && !/[\n()]/.test(subject) ? `${tool}(${subject})` : tool;
  const modes = effect === "edit" ? "--permission-mode acceptEdits or bypassPermissions" : "--permission-mode bypassPermissions";
  return (
    `permission denied: ${tool} needs approval and there is no TTY to ask; ` +
    `allow it with permissions.allow in config.json (e.g. ${JSON.stringify(example)}) or ${modes}`
  );
}

/**
 * The subject rules are matched against. Paths are normalised and made relative
 * to the workspace, so `./src/a.ts`, `src/x/../a.ts` and `/ws/src/a.ts` all meet
 * `write_file(src/**)` (and a deny rule cannot be dodged by spelling a path another way).
 */
export function ruleSubject(tool: Tool, input: unknown, workspace: string): string {
  const subject = tool.subject(input);
  if (tool.effect === "execute" || subject === "") return subject;
  const inWorkspace = isAbsolute(subject) ? relative(workspace, subject) : subject;
  const normal = normalize(inWorkspace);
  return normal === "." ? "" : normal.replace(/^\.\//, "").replace(/\/$/, "");
}
