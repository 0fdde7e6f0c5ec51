import { z } from "zod";
import { registeredSecrets } from "./redact.ts";
import { lazySchema } from "../core/lazy-schema.ts";

/**
 * The environment every process the agent starts gets: shell commands,
 * background jobs, hooks, stdio MCP servers and the runtime's own git. One
 * policy, like Codex's `shell_environment_policy`: the agent's environment
 * minus secrets, by name and by value, unless config `shell.env` says more.
 */

export const ENV_INHERIT = ["all", "core", "none"] as const;
export type EnvInherit = (typeof ENV_INHERIT)[number];

/** What `inherit: "core"` keeps: enough for a shell and common tools to work, nothing that authenticates. */
export const CORE_ENV = ["HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ"];

/** Names that hold credentials by convention; always left out (case-insensitive globs). */
export const SECRET_NAME_PATTERNS = ["*KEY*", "*SECRET*", "*TOKEN*", "*PASSWORD*", "*CREDENTIAL*", "PGPASSWORD", "AGENT_STORE"];

const EnvName = lazySchema(() => z.string().min(1).regex(/^[^=\0]+$/, "must be a variable name, without = or NUL"));

/** Config `shell.env`, as written in a file (docs/configuration.md). */
export const EnvPolicyConfig = lazySchema(() =>
  z.strictObject({
    /** Which of the agent's variables a command starts from: all of them (default), the core list, or none. */
    inherit: z.enum(ENV_INHERIT).optional(),
    /** Names (globs with `*` and `?`, case-insensitive) left out, on top of the secret names. */
    exclude: z.array(EnvName).optional(),
    /** When present, only names matching one of these globs are kept. */
    include_only: z.array(EnvName).optional(),
    /** Variables set as given, after everything else (user config only). */
    set: z.record(EnvName, z.string()).optional(),
  }),
);
export type EnvPolicyConfig = z.infer<typeof EnvPolicyConfig>;

/** The policy after the config levels are merged. */
export interface EnvPolicy {
  inherit: EnvInherit;
  exclude: string[];
  /** Each list narrows on its own: a name is kept only when it matches every list (one per level that set one). */
  includeOnly: string[][];
  set: Record<string, string>;
}

export const DEFAULT_ENV_POLICY: EnvPolicy = { inherit: "all", exclude: [], includeOnly: [], set: {} };

/** The stricter of two `inherit` values: none < core < all. */
export function stricterInherit(a: EnvInherit, b: EnvInherit): EnvInherit {
  return ENV_INHERIT.indexOf(a) >= ENV_INHERIT.indexOf(b) ? a : b;
}

/** Whether `inherit` as `next` would give commands more than `current` does. */
export function loosens(current: EnvInherit, next: EnvInherit): boolean {
  return ENV_INHERIT.indexOf(next) < ENV_INHERIT.indexOf(current);
}

function globRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replaceAll("*", ".*").replaceAll("?", ".");
  return new RegExp(`^${body}$`, "i");
}

const SECRET_NAMES = SECRET_NAME_PATTERNS.map(globRegExp);
/** Characters around a short secret that make it a value of its own (`user:pw@host`, `a=pw;`) rather than part of a word. */
const TOKEN_SEPARATOR = /[\s:@/=;,&?'"]/;

/**
 * Whether `value` carries `secret`. A long secret counts anywhere; a short one
 * (a 4-letter store password) only as a whole token, so `PATH` is not dropped
 * because a password is `bin`-like. Either way, a value that is the secret counts.
 */
function carries(value: string, secret: string): boolean {
  if (value === secret) return true;
  if (secret.length >= 8) return value.includes(secret);
  for (let at = value.indexOf(secret); at !== -1; at = value.indexOf(secret, at + 1)) {
    const before = at === 0 ? "" : value[at - 1]!;
    const after = value[at + secret.length] ?? "";
    if ((before === "" || TOKEN_SEPARATOR.test(before)) && (after === "" || TOKEN_SEPARATOR.test(after))) return true;
  }
  return false;
}

export interface CommandEnvOptions {
  /** A cap on `inherit` for this kind of process: stdio MCP servers start from the core list at most. */
  inherit?: EnvInherit;
}

/**
 * The environment for one command, built from `base` (the agent's own) by
 * `policy`: inherit, leave out secret names, `exclude`, `include_only`, leave
 * out every value carrying a registered secret, then add `set`. Read at each
 * start, so a secret registered late (a store URL's password) is still removed.
 */
export function commandEnv(
  policy: EnvPolicy = DEFAULT_ENV_POLICY,
  base: Record<string, string | undefined> = process.env,
  options: CommandEnvOptions = {},
): Record<string, string> {
  const inherit = options.inherit ? stricterInherit(policy.inherit, options.inherit) : policy.inherit;
  const exclude = policy.exclude.map(globRegExp);
  const includeOnly = policy.includeOnly.map((list) => list.map(globRegExp));
  const secrets = registeredSecrets();
  const out: Record<string, string> = {};
  if (inherit !== "none") {
    for (const [name, value] of Object.entries(base)) {
      if (value === undefined) continue;
      if (inherit === "core" && !CORE_ENV.includes(name)) continue;
      if (SECRET_NAMES.some((pattern) => pattern.test(name)) || exclude.some((pattern) => pattern.test(name))) continue;
      if (!includeOnly.every((list) => list.some((pattern) => pattern.test(name)))) continue;
      if (secrets.some((secret) => carries(value, secret))) continue;
      out[name] = value;
    }
  }
  // The user's own config asked for these by name: given even when they look like secrets.
  return { ...out, ...policy.set };
}
