import type { ConfigFile } from "./config.ts";
import { PERMISSION_MODES_STRICTEST_FIRST } from "./modes.ts";
import { SANDBOX_MODES } from "../security/sandbox/modes.ts";

// What a project's own files (`.agent/config.json`, and `.agent/config.local.json`,
// which a repository can ship too) may set before the user trusts the project
// (docs/security.md#6-trusting-a-project). One table, one rule per key: config
// loading narrows the files by it, and `agent trust` shows and hashes what it gates.

/** How an untrusted project may set one key. */
export type ProjectRule =
  /** Freely: it narrows what the user allows or concerns only this project (model, prompts, limits, deny rules). */
  | { kind: "free" }
  /** Only once trusted: it runs code, contacts a server, sends credentials or widens permissions. */
  | { kind: "trust"; effect: string }
  /** A value on a scale, strictest first: untrusted, only values no looser than the user's own (or the default). */
  | { kind: "stricter"; order: readonly unknown[]; fallback: unknown; effect: string }
  /** An object whose keys have rules of their own. */
  | { kind: "each"; keys: Record<string, ProjectRule> };

const FREE: ProjectRule = { kind: "free" };
const trust = (effect: string): ProjectRule => ({ kind: "trust", effect });
const stricter = (order: readonly unknown[], fallback: unknown, effect: string): ProjectRule => ({ kind: "stricter", order, fallback, effect });
/** Typed per key, so a key added to one of these objects does not compile until someone decides its rule. */
const each = <K extends keyof ConfigFile>(keys: { [S in keyof NonNullable<ConfigFile[K]>]-?: ProjectRule }): ProjectRule => ({ kind: "each", keys });

/** Every key of a config file; a new key does not compile until it has a rule here. */
export const PROJECT_RULES: { [K in keyof ConfigFile]-?: ProjectRule } = {
  model: FREE,
  baseUrl: trust("model requests, with your API key, go to this endpoint"),
  apiKey: trust("model requests are made with this key"),
  provider: trust("model requests go out in this provider's protocol, with its key"),
  profile: trust("model requests are shaped for this provider"),
  apiVersion: FREE,
  headers: trust("sent with every model request"),
  appendSystemPrompt: FREE,
  requestTimeoutMs: FREE,
  maxTurns: FREE,
  permissionMode: stricter(PERMISSION_MODES_STRICTEST_FIRST, "default", "tools run under this permission mode"),
  permissions: each<"permissions">({ allow: trust("calls matching these rules run without asking"), deny: FREE }),
  hooks: trust("these commands run as you on agent events"),
  // shell.env: a project level may only narrow it, trusted or not (src/config/env-policy-levels.ts).
  shell: each<"shell">({ timeoutMs: FREE, deny: FREE, env: FREE }),
  sandbox: each<"sandbox">({
    mode: stricter(SANDBOX_MODES, "workspace-write", "shell commands run in this sandbox mode"),
    network: stricter([false, true], false, "sandboxed commands may use the network"),
    // Read from the user's file only, trusted or not (src/config/load.ts names a project's as ignored).
    unixSockets: FREE,
    // Hiding a path only narrows what commands see: every level adds to the list.
    hiddenPaths: FREE,
  }),
  compaction: FREE,
  files: FREE,
  mailbox: FREE,
  team: FREE,
  // "delegate" only takes tools away: an untrusted project may ask for it, not lift it.
  lead: each<"lead">({ mode: stricter(["delegate", "default"], "default", "the Lead edits files and runs commands itself") }),
  mcpServers: trust("these MCP servers are started or contacted"),
  mcp: FREE,
  pricing: FREE,
  maxBudgetUsd: FREE,
  store: trust("the team's state is kept in this database"),
  remoteTeammates: FREE,
  // Panes run this same binary, following the session: nothing the project could point elsewhere.
  terminal: FREE,
  // Read from the user's file only, trusted or not (src/config/load.ts names a project's as ignored).
  stateRoot: FREE,
};

/** One project setting that needs the user's trust: where it is, its value, what it would do. */
export interface GatedSetting {
  /** `hooks`, `permissions.allow`, `sandbox.mode`. */
  key: string;
  value: unknown;
  effect: string;
}

/**
 * The file's config without what an untrusted project may not set, and what was
 * left out. `user` is the user's own file: a `stricter` key is kept when it is
 * no looser than the user's value there (or the default when the user sets none).
 */
export function narrowProjectConfig(config: ConfigFile, user: ConfigFile | undefined): { config: ConfigFile; ignored: GatedSetting[] } {
  const ignored: GatedSetting[] = [];
  const kept = narrow(config as Record<string, unknown>, user as Record<string, unknown> | undefined, PROJECT_RULES, "", ignored);
  return { config: kept as ConfigFile, ignored };
}

function narrow(
  values: Record<string, unknown>,
  user: Record<string, unknown> | undefined,
  rules: Record<string, ProjectRule>,
  prefix: string,
  ignored: GatedSetting[],
): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) continue;
    const rule = rules[name] ?? trust("unknown");
    const key = `${prefix}${name}`;
    if (rule.kind === "free" || isEmpty(value)) kept[name] = value;
    else if (rule.kind === "trust") ignored.push({ key, value, effect: rule.effect });
    else if (rule.kind === "stricter") {
      const baseline = user?.[name] ?? rule.fallback;
      if (rule.order.indexOf(value) <= rule.order.indexOf(baseline)) kept[name] = value;
      else ignored.push({ key, value, effect: rule.effect });
    } else {
      const inner = narrow(value as Record<string, unknown>, user?.[name] as Record<string, unknown> | undefined, rule.keys, `${key}.`, ignored);
      if (Object.keys(inner).length > 0) kept[name] = inner;
    }
  }
  return kept;
}

/**
 * What trusting the file would enable: every key that needs trust, and every
 * `stricter` key set looser than the default. Independent of the user's
 * own settings, so what `agent trust` records stays valid when they change.
 */
export function gatedSettings(config: ConfigFile): GatedSetting[] {
  const found: GatedSetting[] = [];
  const visit = (values: Record<string, unknown>, rules: Record<string, ProjectRule>, prefix: string) => {
    for (const [name, value] of Object.entries(values)) {
      // `"allow": []` (as `agent init` writes it) enables nothing.
      if (value === undefined || isEmpty(value)) continue;
      const rule = rules[name] ?? trust("unknown");
      const key = `${prefix}${name}`;
      if (rule.kind === "trust") found.push({ key, value, effect: rule.effect });
      else if (rule.kind === "stricter" && rule.order.indexOf(value) > rule.order.indexOf(rule.fallback)) found.push({ key, value, effect: rule.effect });
      else if (rule.kind === "each") visit(value as Record<string, unknown>, rule.keys, `${key}.`);
    }
  };
  visit(config as Record<string, unknown>, PROJECT_RULES, "");
  return found;
}

function isEmpty(value: unknown): boolean {
  return Array.isArray(value) ? value.length === 0 : typeof value === "object" && value !== null && Object.keys(value).length === 0;
}
