import type { ArgDef } from "citty";
import { UsageError } from "../../core/errors.ts";
import { runArgs } from "../run.ts";

// `agent exec …` is `codex exec …`: its command line, as people and the Codex SDK
// (`@openai/codex-sdk`, `exec --experimental-json`) write it, becomes `agent run …`
// here, at the edge, so the rest of the CLI knows only our flags. Under `exec`
// the words mean what they mean to codex (docs/compat.md#the-codex-sdk):
// `-c`/`--config KEY=VALUE` is a config override, `resume` may follow exec's
// options, CODEX_API_KEY is the key, and a writable sandbox with no approvals
// asked (exec's default) is bypassPermissions inside that sandbox, as `--full-auto`.

export interface CodexExecLine {
  /** The `agent run` command line. */
  argv: string[];
  /** What was accepted but has no effect here, one line each, for stderr. */
  warnings: string[];
  /** Variables to set before settings are read (CODEX_API_KEY as the OpenAI key). */
  env: Record<string, string>;
}

/** codex's own options under exec, and whether each takes a value. */
const CODEX_OPTIONS: Record<string, boolean> = { config: true, image: true, "thread-source": true, "cyber-access-program": true, "experimental-json": false };
/** codex's one-letter options that differ from ours (`-c` is our --continue, codex's --config). */
const CODEX_SHORT: Record<string, string> = { "-c": "config", "-i": "image", "-s": "sandbox" };

/** codex's approval policies: exec asks nobody, so only `never` (its default) changes what runs here. */
const APPROVAL_POLICIES = ["never", "on-request", "on-failure", "untrusted"];

/** Our flags that choose the permission mode: with one, codex's sandbox implies nothing. */
const PERMISSION_FLAGS = ["permission-mode", "full-auto", "dangerously-skip-permissions", "dangerously-bypass-approvals-and-sandbox"];

/** `rest` is what follows `exec`; `env` the process's, read for CODEX_API_KEY. */
export function codexExecLine(rest: readonly string[], env: Record<string, string | undefined> = {}): CodexExecLine {
  const warnings: string[] = [];
  const options: string[] = [];
  const given = new Map<string, string | undefined>();
  const operands: string[] = [];
  const config: Array<[string, unknown]> = [];
  let resume: { last: boolean } | undefined;
  for (let i = 0; i < rest.length; i++) {
    const token = rest[i] as string;
    if (token === "--") {
      operands.push(...rest.slice(i + 1));
      break;
    }
    if (!token.startsWith("-") || token === "-") {
      // `codex exec [OPTIONS] resume [--last | ID] [PROMPT]`: the first operand may be the subcommand.
      if (token === "resume" && operands.length === 0 && resume === undefined) resume = { last: false };
      else operands.push(token);
      continue;
    }
    const eq = token.startsWith("--") ? token.indexOf("=") : -1;
    const flag = eq === -1 ? token : token.slice(0, eq);
    if (resume !== undefined && flag === "--last") {
      resume.last = true;
      continue;
    }
    const name = optionName(flag);
    if (name === undefined) {
      // Not ours nor codex's: the parser names it.
      options.push(token);
      continue;
    }
    const takesValue = CODEX_OPTIONS[name] ?? !isBoolean(runArgs[name as keyof typeof runArgs]);
    let value: string | undefined;
    if (takesValue) {
      value = eq === -1 ? rest[++i] : token.slice(eq + 1);
      if (value === undefined) throw new UsageError(`option ${flag} needs a value; run \`agent exec --help\``);
    }
    if (name === "config") config.push(configOverride(value as string));
    else if (name === "image") throw new UsageError(`--image ${value}: agent sends the model text only; describe what the image shows in the prompt instead`);
    else if (name === "thread-source" || name === "cyber-access-program") warnings.push(`--${name} ${value}: ignored (a setting of OpenAI's service that agent has no use for)`);
    // The SDK's name and ours for the same switch: one of them reaches the parser.
    else if (name === "experimental-json" || name === "json") {
      if (!given.has("json")) add(options, given, "json", undefined);
    }
    else if (eq !== -1 && !takesValue) options.push(token); // `--flag=value` of a switch: the parser refuses it.
    else add(options, given, name, value);
  }
  const approval = applyConfig(config, options, given, warnings);
  // codex exec asks for no approval unless told to: a sandbox that lets commands write is then all the bound there is.
  const sandbox = given.get("sandbox");
  if (approval === "never" && (sandbox === "workspace-write" || sandbox === "danger-full-access") && !PERMISSION_FLAGS.some((flag) => given.has(flag))) {
    add(options, given, "permission-mode", "bypassPermissions");
  }
  if (resume !== undefined) {
    if (resume.last) options.push("--continue");
    else {
      const id = operands.shift();
      if (id === undefined) throw new UsageError("exec resume needs a session: `agent exec resume --last` or `agent exec resume ID`");
      options.push(`--resume=${id}`);
    }
  }
  const key = env.CODEX_API_KEY;
  return {
    argv: ["run", ...options, ...(operands.some((word) => word.startsWith("-") && word !== "-") ? ["--"] : []), ...operands],
    warnings,
    env: key !== undefined && key !== "" ? { OPENAI_API_KEY: key } : {},
  };
}

function add(options: string[], given: Map<string, string | undefined>, name: string, value: string | undefined): void {
  given.set(name, value);
  options.push(value === undefined ? `--${name}` : `--${name}=${value}`);
}

/** The canonical name of an option of codex or of `agent run`: `-m` is model, `--yolo` dangerously-bypass-approvals-and-sandbox. */
function optionName(flag: string): string | undefined {
  const short = CODEX_SHORT[flag];
  if (short !== undefined) return short;
  if (flag.startsWith("--") && flag.slice(2) in CODEX_OPTIONS) return flag.slice(2);
  for (const [name, def] of Object.entries(runArgs) as [string, ArgDef][]) {
    if (def.type === "positional") continue;
    if (flag === `--${name}`) return name;
    const aliases = "alias" in def && def.alias !== undefined ? (Array.isArray(def.alias) ? def.alias : [def.alias]) : [];
    if (aliases.some((alias) => flag === (alias.length === 1 ? `-${alias}` : `--${alias}`))) return name;
  }
  return undefined;
}

function isBoolean(def: ArgDef | undefined): boolean {
  return def === undefined || def.type === "boolean" || def.type === undefined;
}

/**
 * `KEY=VALUE` as codex reads `--config`: the value TOML (the SDK writes JSON-quoted
 * strings, numbers, booleans and arrays), else the text itself.
 */
export function configOverride(text: string): [string, unknown] {
  const eq = text.indexOf("=");
  const key = eq === -1 ? "" : text.slice(0, eq).trim();
  if (key === "") throw new UsageError(`--config ${JSON.stringify(text)} is not KEY=VALUE, e.g. --config model="gpt-4o"`);
  const raw = text.slice(eq + 1).trim();
  if (/^'[^']*'$/.test(raw)) return [key, raw.slice(1, -1)];
  try {
    return [key, JSON.parse(raw)];
  } catch {
    return [key, raw];
  }
}

/**
 * The overrides as our flags (a flag given on the line wins over a key), the
 * others as warnings; the approval policy, exec's `never` when none is given.
 */
function applyConfig(config: Array<[string, unknown]>, options: string[], given: Map<string, string | undefined>, warnings: string[]): string {
  let approval = "never";
  const asFlag = (key: string, value: unknown, name: string) => {
    if (typeof value !== "string") warnings.push(`--config ${key}: expected a string; ignored`);
    else if (!given.has(name)) add(options, given, name, value);
  };
  for (const [key, value] of config) {
    if (key === "openai_base_url") asFlag(key, value, "base-url");
    else if (key === "model") asFlag(key, value, "model");
    else if (key === "sandbox_mode") asFlag(key, value, "sandbox");
    else if (key === "approval_policy") {
      if (typeof value === "string" && APPROVAL_POLICIES.includes(value)) approval = value;
      else warnings.push(`--config approval_policy=${JSON.stringify(value)}: expected one of ${APPROVAL_POLICIES.join(", ")}; ignored`);
    } else if (key === "sandbox_workspace_write.writable_roots") {
      if (Array.isArray(value) && value.every((root) => typeof root === "string")) for (const root of value) add(options, given, "add-dir", root);
      else warnings.push(`--config ${key}: expected a list of directories; ignored`);
    } else if (key === "sandbox_workspace_write.network_access") {
      if (value === true) warnings.push(`--config ${key}=true: not applied from the command line; set "sandbox": {"network": true} in config (docs/security.md)`);
    } else {
      warnings.push(`--config ${key}: not a setting agent reads; ignored (docs/compat.md#the-codex-sdk)`);
    }
  }
  return approval;
}
