import { readFileSync, statSync } from "node:fs";
import type { ParseError } from "jsonc-parser/lib/esm/main.js";
import type { z } from "zod";
import { ConfigError } from "../core/errors.ts";
import { ConfigFile } from "./config.ts";
import type { ConfigLevel } from "./locations.ts";
import { isSecretHeader } from "./redact.ts";
import { storeUrlHasPassword } from "../store/store-url.ts";

/**
 * jsonc-parser, loaded on the first config file found: evaluating it (its tables
 * of interned strings) took 1–2 ms of every run's start, and most runs read no
 * config file.
 */
function jsonc(): typeof import("jsonc-parser/lib/esm/main.js") {
  // Its ES module build: the package's main is a UMD bundle whose own requires the
  // compiled binary cannot follow.
  return require("jsonc-parser/lib/esm/main.js") as typeof import("jsonc-parser/lib/esm/main.js");
}

const FIX = "fix it or remove it (docs/configuration.md lists every key)";
const KEYS_ELSEWHERE = "keys belong in the environment or your user config";

export interface LoadedConfigFile {
  level: ConfigLevel;
  path: string;
  config: ConfigFile;
  /** Problems worth telling the user that do not stop the run. */
  warnings: string[];
}

/** The text without the UTF-8 byte order mark some Windows editors write first: JSON.parse and jsonc-parser refuse it. */
export function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * Reads and validates one level's config file; null when there is none. JSON with
 * comments and trailing commas is accepted (as in tsconfig.json). Anything wrong
 * with it is one ConfigError naming the file, the key and the fix: a typo in a key
 * must never be silently ignored.
 */
export function readConfigFile(path: string, level: ConfigLevel): LoadedConfigFile | null {
  let text: string;
  try {
    text = withoutBom(readFileSync(path, "utf8"));
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    // ENOTDIR: `.agent` is a file, so there is no config under it either.
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    const why = code === "EISDIR" ? "it is a directory" : code === "EACCES" ? "permission denied" : (error as Error).message;
    throw new ConfigError(`cannot read config file ${path}: ${why}; make it a readable file or remove it`);
  }
  const errors: ParseError[] = [];
  const { parse: parseJsonc, printParseErrorCode } = jsonc();
  const json: unknown = parseJsonc(text, errors, { allowTrailingComma: true, disallowComments: false });
  const [syntax] = errors;
  if (syntax) {
    throw new ConfigError(
      `config file ${path} is not valid JSON (${printParseErrorCode(syntax.error)} at ${position(text, syntax.offset)}); fix the syntax or remove the file`,
    );
  }
  const parsed = ConfigFile.safeParse(json);
  if (!parsed.success) throw new ConfigError(`config file ${path}: ${describeIssues(parsed.error.issues)}; ${FIX}`);
  const config = parsed.data;
  // The project file is committed and shared: a key there is a leaked key.
  if (level === "project") {
    if (config.apiKey !== undefined) {
      throw new ConfigError(`config file ${path} holds apiKey, but it is the project's shared file: ${KEYS_ELSEWHERE} (OPENAI_API_KEY, or apiKey in ~/.config/agent/config.json); remove it`);
    }
    if (config.store !== undefined && storeUrlHasPassword(config.store)) {
      throw new ConfigError(`config file ${path} holds a password in store, but it is the project's shared file: ${KEYS_ELSEWHERE} (AGENT_STORE, or store in .agent/config.local.json); remove it`);
    }
    const secret = Object.keys(config.headers ?? {}).find(isSecretHeader);
    if (secret !== undefined) {
      throw new ConfigError(`config file ${path} holds the header ${JSON.stringify(secret)}, but it is the project's shared file: ${KEYS_ELSEWHERE} (or .agent/config.local.json); remove it`);
    }
  }
  return { level, path, config, warnings: secretWarnings(path, config) };
}

/** `line 3, column 7`, 1-based, as editors count. */
function position(text: string, offset: number): string {
  const before = text.slice(0, offset).split("\n");
  return `line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
}

/** The first problem, in words a user can act on, and how many more there are. */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  const [first, ...rest] = issues;
  if (!first) return "invalid";
  const more = rest.length > 0 ? ` (and ${rest.length} more problem${rest.length > 1 ? "s" : ""})` : "";
  return describeIssue(first) + more;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const at = issue.path.length > 0 ? formatPath(issue.path) : "";
  if (issue.code === "unrecognized_keys") {
    const keys = issue.keys.map((k) => JSON.stringify(k)).join(", ");
    const where = at ? ` in ${at}` : ` (known keys: ${Object.keys(ConfigFile.unwrap().shape).join(", ")})`;
    return `unknown key${issue.keys.length > 1 ? "s" : ""} ${keys}${where}`;
  }
  if (issue.code === "invalid_value") {
    return `${at || "value"} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
  }
  if (issue.code === "invalid_key") {
    // A record's key (a header name) failed its own check: that check's words say why.
    const inner = issue.issues[0]?.message ?? "invalid name";
    return `${at || "a key"}: ${lowerFirst(inner)}`;
  }
  // zod's own wording is clear for the rest ("Invalid input: expected number, received string").
  return `${at || "the top level"}: ${lowerFirst(issue.message)}`;
}

/** `hooks.PreToolUse[0].command`, the way a user would point at it in the file. */
function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((part, i) => (typeof part === "number" ? `[${part}]` : `${i === 0 ? "" : "."}${String(part)}`))
    .join("");
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/** A key in a file others can read is a leaked key: say so, but do not refuse to run. */
function secretWarnings(path: string, config: ConfigFile): string[] {
  const holds = config.apiKey !== undefined ? "apiKey" : Object.keys(config.headers ?? {}).find(isSecretHeader);
  if (holds === undefined) return [];
  const mode = statSync(path).mode & 0o777;
  if ((mode & 0o077) === 0) return [];
  return [
    `config file ${path} holds ${holds} but is readable by others (mode ${mode.toString(8).padStart(4, "0")}); run \`chmod 600 ${path}\`, or set OPENAI_API_KEY instead`,
  ];
}
