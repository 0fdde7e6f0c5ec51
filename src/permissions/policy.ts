import type { ConfigFile, PermissionMode } from "../config/config.ts";
import type { ProtectedPaths } from "../security/protected-paths.ts";
import { type AnalysedLine, type CommandPart, type FileWrite, analyseCommandLine } from "../security/shell-command/analyse.ts";
import type { Tool, ToolContext, ToolEffect } from "../core/tool.ts";
import { canonicalJson, pathArguments } from "./mcp-call.ts";
import { landing, pathSubjects } from "./path-subjects.ts";
import { describe, headlessReason, planDenial, stateRootReason, unmatchedWhy } from "./reasons.ts";
import { FILE_EDIT, type PermissionRule, isMcpTool, parseRules } from "./rules.ts";

/** `input`: the call's input as the one who allowed it changed it (the Claude Agent SDK's `updatedInput`). */
export type PermissionDecision = { behavior: "allow"; input?: unknown } | { behavior: "deny"; reason: string };

export interface PermissionRequest {
  tool: string;
  effect: ToolEffect;
  /** The command or path the call is about, as rules see it. */
  subject: string;
  identity: string;
  /** Why this call needs a person even where the mode would allow it (e.g. it writes the agent's own config). */
  why?: string;
  /**
   * It writes a guarded file (git's, the agent's configuration, a hook's script):
   * only a person or an allow rule naming the path approves it, in every mode —
   * a PreToolUse hook's allow answers the ordinary question only.
   */
  guarded?: true;
  /** The call's input and workspace, so a prompt can show what it will do (a diff, the arguments). */
  input?: unknown;
  workspace?: string;
  /** The session rules an "always" or a "never" answer adds (see sessionRulesFor). */
  remember?: SessionRules;
  /** The model's id of the call (Claude's `tool_use_id`), where there is one. */
  callId?: string;
}

/** Rules added for the rest of a session by the person answering. */
export interface SessionRules {
  allow: string[];
  deny: string[];
}

/**
 * A person's answer: once, always for this session (the request's `remember.allow`
 * rules are added), no (with the reason they gave, for the model), or never
 * for this session (its `remember.deny` rules are added).
 */
export type PermissionAnswer =
  // `input`: the call is allowed with this input instead (validated again before it runs).
  | { answer: "yes"; input?: unknown }
  | { answer: "always" }
  | { answer: "no"; reason?: string }
  | { answer: "never" }
  // Decided elsewhere (a teammate's request answered on the Lead's side): the reason is given as is.
  | { answer: "denied"; reason: string };

/** Asks a person; true (or yes/always) means allowed. Only present when there is someone to ask (a TTY). */
export type PermissionAsker = (request: PermissionRequest, signal: AbortSignal) => Promise<boolean | PermissionAnswer>;

type ModeAnswer = "allow" | "ask" | "deny";

/** What the policy needs of a tool: a teammate's call decided on the Lead's side has no handler here. */
export type RuledTool = Pick<Tool, "name" | "effect" | "subject">;

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
  /** The agent's own state and configuration (built by the composition root); none in tests of bare rules. */
  protected?: ProtectedPaths;
}

const ALLOW: PermissionDecision = { behavior: "allow" };

/**
 * Decides whether one tool call may run. For a path: the state root is refused
 * in every mode; deny rules (on the path as written and as resolved); writes
 * to a guarded file (the agent's own configuration, git's, a hook's script)
 * need a rule naming them or a person's "yes", in every mode (a hook's allow
 * is no one's: it answers only the ordinary question); allow rules; the mode. For a command line: each
 * simple command it runs is checked (src/security/shell-command/) — denied
 * when any part matches a deny rule, allowed by rules only when every part
 * matches an allow rule that names what changes the program it runs — and
 * each file it changes as an edit of that file (write_file, edit_file and
 * edit rules are one family). Under a `shell` deny rule, a line whose programs
 * cannot be seen is never allowed. An MCP tool is ruled on its arguments; its
 * annotations are hints. Malformed rules throw `ConfigError` here, at start-up.
 */
export class PermissionPolicy {
  #mode: PermissionMode;
  // Not readonly: withMode() shares them (and the session's answers) with a view.
  #allow: PermissionRule[];
  #deny: PermissionRule[];
  readonly #ask: PermissionAsker | undefined;
  readonly #protected: ProtectedPaths | undefined;
  /** Rules added by answers during this run, in the order given; they live as long as the policy. */
  #session: SessionRules = { allow: [], deny: [] };

  constructor(options: PermissionPolicyOptions) {
    this.#mode = options.mode;
    this.#allow = parseRules(options.allow, "allow");
    this.#deny = parseRules(options.deny, "deny");
    this.#ask = options.ask;
    this.#protected = options.protected;
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

  /**
   * The same rules under another mode (a teammate definition's permissionMode).
   * The rule lists are shared, not copied: an "always"/"never" answered through
   * either applies to both for the rest of the session.
   */
  withMode(mode: PermissionMode, ask: PermissionAsker | undefined = this.#ask): PermissionPolicy {
    return this.#view(mode, ask, this.#protected);
  }

  /**
   * The same rules, mode and asker over another workspace's protected paths (a
   * worktree teammate's), sharing the rule lists and answers as withMode does.
   */
  withProtected(paths: ProtectedPaths): PermissionPolicy {
    return this.#view(this.mode, this.#ask, paths);
  }

  #view(mode: PermissionMode, ask: PermissionAsker | undefined, paths: ProtectedPaths | undefined): PermissionPolicy {
    const view = new PermissionPolicy({ mode, ...(ask ? { ask } : {}), ...(paths ? { protected: paths } : {}) });
    view.#allow = this.#allow;
    view.#deny = this.#deny;
    view.#session = this.#session;
    return view;
  }

  get mode(): PermissionMode {
    return this.#mode;
  }

  /** Another mode for this policy's next decisions (the Claude Agent SDK's set_permission_mode); views made earlier keep theirs. */
  setMode(mode: PermissionMode): void {
    this.#mode = mode;
  }

  /** The rules in force, as written: config and flags first, then those added by answers in this session. */
  rules(): { allow: string[]; deny: string[]; session: SessionRules } {
    const session = { allow: [...this.#session.allow], deny: [...this.#session.deny] };
    const configured = (rules: PermissionRule[], added: string[]) => rules.slice(0, rules.length - added.length).map((rule) => rule.source);
    return { allow: configured(this.#allow, session.allow), deny: configured(this.#deny, session.deny), session };
  }

  /**
   * Whether every call of the tool `name` is denied: a deny rule names it with no
   * pattern. Such a tool is not offered to the model at all (`--deny shell`,
   * `--disallowedTools`), which would otherwise spend turns on calls it cannot make.
   */
  deniesWhole(name: string): boolean {
    return this.#deny.some((rule) => rule.pattern === undefined && rule.names(name));
  }

  /** Adds rules for the rest of this session (an "always" or "never" answer); malformed ones throw ConfigError. */
  addSessionRules(list: "allow" | "deny", sources: readonly string[]): void {
    const parsed = parseRules(sources, list);
    for (const rule of parsed) {
      if (this.#session[list].includes(rule.source)) continue;
      (list === "allow" ? this.#allow : this.#deny).push(rule);
      this.#session[list].push(rule.source);
    }
  }

  async decide(tool: RuledTool, input: unknown, context: ToolContext): Promise<PermissionDecision> {
    const decision = await this.#decide(tool, input, context);
    if (decision.behavior === "deny" || context.hookPermission?.decision !== "ask") return decision;
    const why = context.hookPermission.reason ?? "a PreToolUse hook asks for approval";
    return this.#askFor({ tool: tool.name, effect: tool.effect, subject: tool.subject(input), identity: context.identity, why }, input, context);
  }

  async #decide(tool: RuledTool, input: unknown, context: ToolContext): Promise<PermissionDecision> {
    if (isMcpTool(tool.name)) return this.#decideMcp(tool, input, context);
    // Only `shell`'s subject is a command line; another executing tool (an MCP tool) is ruled on its subject as is.
    if (tool.effect === "execute" && tool.name === "shell") return this.#decideCommand(tool, tool.subject(input), input, context);
    if (tool.effect === "execute") return this.#decideOther(tool, tool.subject(input), input, context);
    if (tool.effect === "coordinate") return this.#decideOther(tool, tool.subject(input), input, context);
    return this.#decidePath(tool, tool.subject(input), input, context);
  }

  async #decideOther(tool: RuledTool, subject: string, input: unknown, context: ToolContext): Promise<PermissionDecision> {
    const denied = this.#deny.find((rule) => rule.matches(tool, subject));
    if (denied) return deny(`permission denied: ${describe(tool.name, subject)} matches the deny rule "${denied.source}"`);
    if (this.#allow.some((rule) => rule.matches(tool, subject))) return ALLOW;
    return this.#byMode(tool, subject, input, context);
  }

  async #decidePath(tool: RuledTool, raw: string, input: unknown, context: ToolContext): Promise<PermissionDecision> {
    if (raw === "") return this.#decideOther(tool, raw, input, context);
    const { written, real, absolute, resolved } = pathSubjects(raw, context.workspace);
    // A pattern (glob's subject) is left to the tool, which never lists the state and refuses a search rooted in it.
    if (!/[*?[{]/.test(raw) && this.#protected?.inStateRoot(absolute, resolved)) return deny(stateRootReason(tool.name, raw));
    const denied = this.#deny.find((rule) => rule.matches(tool, written) || (real !== undefined && rule.matches(tool, real)));
    if (denied) return deny(`permission denied: ${describe(tool.name, written)} matches the deny rule "${denied.source}"`);
    if (tool.effect === "edit") {
      const guarded = this.#protected?.guardedWrite(absolute);
      if (guarded !== undefined) {
        const named = this.#allow.some((rule) => rule.pattern !== undefined && (rule.matches(tool, written) || (real !== undefined && rule.matches(tool, real))));
        if (named) return ALLOW;
        return this.#askFor({ tool: tool.name, effect: tool.effect, subject: written, identity: context.identity, why: `it writes ${guarded}`, guarded: true }, input, context);
      }
    }
    const allowed = this.#allow.some((rule) => rule.matches(tool, written) || (real !== undefined && rule.matches(tool, real)));
    if (allowed) return ALLOW;
    return this.#byMode(tool, written, input, context);
  }

  async #decideCommand(tool: RuledTool, line: string, input: unknown, context: ToolContext): Promise<PermissionDecision> {
    const analysed = analyseCommandLine(line);
    const parts = analysed.ok ? analysed.parts : [];
    // Deny rules see the whole line and each part, as run and with what it sets (`ruled`): any hit denies.
    const hits = (rule: PermissionRule, part: CommandPart) =>
      rule.matches(tool, part.text) || rule.matches(tool, part.ruled) || (part.core !== undefined && rule.matches(tool, part.core));
    const denied = this.#deny.find((rule) => rule.matches(tool, line) || parts.some((part) => hits(rule, part)));
    if (denied) {
      const part = parts.find((candidate) => hits(denied, candidate));
      const what = part && part.text !== line ? `${describe(tool.name, line)} runs "${part.text}", which` : describe(tool.name, line);
      return deny(`permission denied: ${what} matches the deny rule "${denied.source}"; it was not run`);
    }
    const writes = analysed.ok ? analysed.writes : [];
    // Claude Code's `Bash` rule allows what the line writes too (the sandbox bounds it); plan mode stays read-only.
    const wholeShell = this.mode !== "plan" && this.#allow.some((rule) => rule.wholeShell);
    const writeCheck = this.#checkWrites(writes, context, "the command", wholeShell);
    if (writeCheck.denied) return writeCheck.denied;
    // What a deny rule cannot be checked against is never allowed, by a rule or by the mode: a person decides.
    const unchecked = this.#uncheckedCommand(tool, analysed) ?? writeCheck.unchecked;
    if (unchecked !== undefined) {
      if (this.mode === "plan") return deny(`plan mode is read-only: the command ${unchecked}; describe the change instead`);
      // Headless, say why a person is needed (a PreToolUse hook's allow still answers for the person).
      if (!this.#ask && context.hookPermission?.decision !== "allow") return deny(`permission denied: ${describe(tool.name, line)} ${unchecked}, so it needs a person's approval and there is no TTY to ask; write the command so that every program it runs is visible (no $(…) as a command, no "| sh", no -c/-e code), or drop the deny rule`);
      const guarded = writeCheck.guarded.length > 0 ? { guarded: true as const } : {};
      return this.#askFor({ tool: tool.name, effect: tool.effect, subject: line, identity: context.identity, why: unchecked, ...guarded }, input, context, parts);
    }

    // A bare `shell` rule allows every line; a pattern must match each command the line runs, naming what it must.
    const bare = this.#allow.some((rule) => rule.pattern === undefined && rule.matches(tool, line));
    const byRules = bare || (analysed.ok && parts.length > 0 && parts.every((part) => this.#allowsPart(tool, part)));
    if (byRules && writeCheck.needs.length === 0) return ALLOW;
    const answer = MODES[this.mode].execute;
    if (answer !== "deny" && writeCheck.guarded.length > 0) {
      const why = `it writes ${writeCheck.guarded.join(", ")}`;
      return this.#askFor({ tool: tool.name, effect: tool.effect, subject: line, identity: context.identity, why, guarded: true }, input, context, parts);
    }
    if (answer === "allow") return ALLOW;
    if (answer === "deny" && !byRules) return planDenial(tool);
    // Said only when it helps: a line that does not parse, a write, or allow rules that did not cover every part.
    const hasRules = this.#allow.some((rule) => rule.tool === tool.name);
    const why = !analysed.ok
      ? `the command line does not parse (${analysed.error}), so no allow rule can match it`
      : byRules
        ? `it writes ${writeCheck.needs.join(", ")}`
        : hasRules
          ? unmatchedWhy(parts, (part) => this.#allowsPart(tool, part))
          : undefined;
    if (answer === "deny") return deny(`plan mode is read-only: the command ${why ?? "may change files"}; describe the change instead`);
    return this.#askFor({ tool: tool.name, effect: tool.effect, subject: line, identity: context.identity, ...(why ? { why } : {}) }, input, context, parts);
  }

  /**
   * Whether a pattern allow rule covers one command: it matches the command as
   * run (`ruled`: with the assignments and wrappers that change it) and spells
   * out literally, before its first `*`, everything that must be named.
   */
  #allowsPart(tool: RuledTool, part: CommandPart): boolean {
    if (part.opaque) return false;
    return this.#allow.some((rule) => rule.pattern !== undefined && rule.matches(tool, part.ruled) && rule.literalPrefix >= part.namedThrough);
  }

  /**
   * Why a line cannot be checked against the deny rules: under a `shell` deny
   * rule, it does not parse or runs what the line does not show (opaque or
   * hidden); under an edit-family deny rule, it runs code nobody can read.
   */
  #uncheckedCommand(tool: RuledTool, analysed: AnalysedLine): string | undefined {
    const rule = this.#deny.find((candidate) => candidate.pattern !== undefined && candidate.names(tool.name));
    // Code on the line nobody can read (`python3 -c`, `| sh`) may change any file, too.
    const editRule = this.#deny.find((candidate) => candidate.pattern !== undefined && candidate.names(FILE_EDIT.name));
    if (rule === undefined && editRule === undefined) return undefined;
    const named = (rule ?? editRule) as PermissionRule;
    if (!analysed.ok) return `does not parse (${analysed.error}), so the deny rule "${named.source}" cannot be checked`;
    const opaque = analysed.parts.find((part) => part.opaque !== undefined);
    if (opaque) return `runs "${opaque.ruled}", which cannot be checked against the deny rule "${named.source}" (${opaque.opaque})`;
    if (rule === undefined) return undefined;
    // A hidden command an allow rule names (`shell(GIT_PAGER=cat git log*)`) is what the user chose to run.
    const hidden = analysed.parts.find((part) => part.hidden !== undefined && !this.#allowsPart(tool, part));
    if (hidden) return `runs "${hidden.ruled}", which cannot be checked against the deny rule "${rule.source}" (${hidden.hidden})`;
    return undefined;
  }

  /**
   * An MCP tool: its annotations are its server's claim. Deny and allow rules
   * see the arguments' canonical JSON; a path-named argument is a file the call
   * may change (edit-family deny rules apply, the state root is refused, the
   * agent's config needs explicit approval); in plan mode it runs only when an
   * allow rule names it.
   */
  async #decideMcp(tool: RuledTool, input: unknown, context: ToolContext): Promise<PermissionDecision> {
    const subject = canonicalJson(input ?? {});
    const denied = this.#deny.find((rule) => rule.matches(tool, subject));
    if (denied) return deny(`permission denied: ${describe(tool.name, subject)} matches the deny rule "${denied.source}"`);
    const writes = pathArguments(input).map(({ name, path }) => ({ path, source: `its argument ${name}` }));
    const check = this.#checkWrites(writes, context, `the MCP tool ${tool.name}`);
    if (check.denied) return check.denied;
    const allowed = this.#allow.some((rule) => rule.matches(tool, subject));
    if (allowed && check.guarded.length === 0) return ALLOW;
    if (this.mode === "plan") {
      return deny(
        `plan mode is read-only: ${tool.name} is an MCP tool, and its read-only annotation is only its server's claim; in plan mode it runs only with an allow rule naming it (--allow ${tool.name})`,
      );
    }
    if (check.guarded.length > 0) {
      return this.#askFor({ tool: tool.name, effect: tool.effect, subject: "", identity: context.identity, why: `it writes ${check.guarded.join(", ")}`, guarded: true }, input, context);
    }
    if (allowed) return ALLOW;
    return this.#byMode(tool, "", input, context);
  }

  /**
   * The files a call changes besides its own path (a shell line's redirections
   * and writing programs, an MCP tool's path arguments), each an edit of that
   * file: the state root is refused, edit-family deny rules apply, and
   * anything the mode or an edit rule does not allow (the agent's config, a
   * path from an expansion) is listed as needing approval. A file the line does
   * not name cannot be checked against an edit deny rule: `unchecked` says so.
   */
  #checkWrites(
    writes: FileWrite[],
    context: ToolContext,
    who: string,
    allowed = false,
  ): { denied?: PermissionDecision; needs: string[]; guarded: string[]; unchecked?: string } {
    // `allowed`: an allow rule covers every ordinary write (Claude's `Bash`); deny rules, the state and guarded files still hold.
    const ordinary = allowed || MODES[this.mode].edit === "allow";
    const needs: string[] = [];
    const guardedPaths: string[] = [];
    let unchecked: string | undefined;
    const editDeny = this.#deny.filter((rule) => rule.names(FILE_EDIT.name));
    for (const write of writes) {
      if (write.path === undefined) {
        const bare = editDeny.find((rule) => rule.pattern === undefined);
        if (bare) return { denied: deny(`permission denied: ${who} changes a file (${write.source}), and the deny rule "${bare.source}" forbids changing files; it was not run`), needs, guarded: guardedPaths };
        if (editDeny.length > 0) unchecked ??= `changes a file it does not name (${write.source}), which cannot be checked against the deny rule "${editDeny[0]?.source}"`;
        if (!ordinary) needs.push(`a file the line does not name (${write.source})`);
        continue;
      }
      const { written, real, absolute } = pathSubjects(landing(write, context.workspace), context.workspace);
      if (this.#protected?.inStateRoot(absolute)) return { denied: deny(stateRootReason(who, write.path)), needs, guarded: guardedPaths };
      const matches = (rule: PermissionRule) => rule.matches(FILE_EDIT, written) || (real !== undefined && rule.matches(FILE_EDIT, real));
      const denied = this.#deny.find(matches);
      if (denied) {
        return { denied: deny(`permission denied: ${who} writes ${written} (${write.source}), which matches the deny rule "${denied.source}"; it was not run`), needs, guarded: guardedPaths };
      }
      const guarded = this.#protected?.guardedWrite(absolute);
      if (guarded !== undefined) {
        if (!this.#allow.some((rule) => rule.pattern !== undefined && matches(rule))) {
          needs.push(`${written} (${guarded})`);
          guardedPaths.push(`${written} (${guarded})`);
        }
        continue;
      }
      if (!ordinary && !this.#allow.some(matches)) needs.push(written);
    }
    return { needs, guarded: guardedPaths, ...(unchecked !== undefined ? { unchecked } : {}) };
  }

  async #byMode(tool: RuledTool, subject: string, input: unknown, context: ToolContext): Promise<PermissionDecision> {
    const answer = MODES[this.mode][tool.effect];
    if (answer === "allow") return ALLOW;
    if (answer === "deny") return planDenial(tool);
    return this.#askFor({ tool: tool.name, effect: tool.effect, subject, identity: context.identity }, input, context);
  }

  async #askFor(
    request: PermissionRequest,
    input: unknown,
    context: ToolContext,
    parts?: readonly Pick<CommandPart, "ruled" | "opaque">[],
  ): Promise<PermissionDecision> {
    // The user's own hook (or a trusted project's) answered for the person — the ordinary
    // question only: the model may have rewritten the hook's script (npm test, a guarded
    // write that slipped through), so a guarded write waits for a real person or rule.
    const hookAllowed = context.hookPermission?.decision === "allow";
    if (hookAllowed && !request.guarded) return ALLOW;
    if (!this.#ask) return deny(headlessReason(request, hookAllowed));
    const remember = sessionRulesFor(request, parts);
    try {
      const given = await this.#ask({ ...request, input, workspace: context.workspace, remember, ...(context.callId !== undefined ? { callId: context.callId } : {}) }, context.signal);
      const answer: PermissionAnswer = typeof given === "boolean" ? { answer: given ? "yes" : "no" } : given;
      if (answer.answer === "always") this.addSessionRules("allow", remember.allow);
      if (answer.answer === "never") this.addSessionRules("deny", remember.deny);
      if (answer.answer === "yes" && answer.input !== undefined) return { behavior: "allow", input: answer.input };
      if (answer.answer === "yes" || answer.answer === "always") return ALLOW;
      if (answer.answer === "denied") return deny(answer.reason);
      const denied = `permission denied by the user for ${describe(request.tool, request.subject)}`;
      if (answer.answer === "never") return deny(`${denied}, for the rest of this session`);
      const reason = answer.reason?.trim();
      return deny(reason ? `${denied}; the user says: ${reason}` : denied);
    } catch (error) {
      return deny(`permission denied: could not ask for approval of ${request.tool} (${(error as Error).message})`);
    }
  }
}

/**
 * The rules an "always" or "never" answer adds: for a command line, an allow
 * rule per simple command it runs (allow rules must cover every part) and a
 * deny rule for the line as given; for a path, the path under the tool; for a
 * call with no subject (an MCP tool), the tool by name. `*` in a command
 * stays a wildcard (rules have no escape for it); glob characters in a path
 * are escaped, so a path rule names just that path.
 */
export function sessionRulesFor(request: Pick<PermissionRequest, "tool" | "effect" | "subject">, parts?: readonly Pick<CommandPart, "ruled" | "opaque">[]): SessionRules {
  const { tool, effect, subject } = request;
  if (subject === "") return { allow: [tool], deny: [tool] };
  if (effect === "execute" && tool === "shell") {
    const simple = parts !== undefined && parts.length > 0 && parts.every((part) => !part.opaque) ? parts.map((part) => part.ruled) : [subject];
    return { allow: [...new Set(simple)].map((text) => `${tool}(${text})`), deny: [`${tool}(${subject})`] };
  }
  if (effect === "execute") return { allow: [tool], deny: [tool] };
  const rule = `${tool}(${subject.replace(/[*?[\]{}\\]/g, "\\$&")})`;
  return { allow: [rule], deny: [rule] };
}

function deny(reason: string): PermissionDecision {
  return { behavior: "deny", reason };
}
