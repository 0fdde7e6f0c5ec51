import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { z } from "zod";
import { ConfigError } from "../core/errors.ts";
import { ConfigFile } from "./config.ts";

const FIX = "fix it or remove it (docs/configuration.md lists every key)";

export interface LoadedConfigFile {
  path: string;
  config: ConfigFile;
  /** Problems worth telling the user that do not stop the run. */
  warnings: string[];
}

export function configPath(stateDir: string): string {
  return join(stateDir, "config.json");
}

/**
 * Reads and validates `<state-dir>/config.json`; null when there is none. Anything
 * wrong with it is one ConfigError naming the file, the key and the fix: a typo in
 * a key must never be silently ignored.
 */
export function readConfigFile(stateDir: string): LoadedConfigFile | null {
  const path = configPath(stateDir);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ENOENT") return null;
    const why = code === "EISDIR" ? "it is a directory" : code === "EACCES" ? "permission denied" : (error as Error).message;
    throw new ConfigError(`cannot read config file ${path}: ${why}; make it a readable file or remove it`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`config file ${path} is not valid JSON (${(error as Error).message}); fix the syntax or remove the file`);
  }
  const parsed = ConfigFile.safeParse(json);
  if (!parsed.success) throw new ConfigError(`config file ${path}: ${describeIssues(parsed.error.issues)}; ${FIX}`);
  return { path, config: parsed.data, warnings: secretWarnings(path, parsed.data) };
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
    const where = at ? ` in ${at}` : ` (known keys: ${Object.keys(ConfigFile.shape).join(", ")})`;
    return `unknown key${issue.keys.length > 1 ? "s" : ""} ${keys}${where}`;
  }
  if (issue.code === "invalid_value") {
    return `${at || "value"} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
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
  if (config.apiKey === undefined) return [];
  const mode = statSync(path).mode & 0o777;
  if ((mode & 0o077) === 0) return [];
  return [
    `config file ${path} holds apiKey but is readable by others (mode ${mode.toString(8).padStart(4, "0")}); run \`chmod 600 ${path}\`, or set OPENAI_API_KEY instead`,
  ];
}
