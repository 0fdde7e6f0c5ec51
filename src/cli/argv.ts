import type { ArgDef, ArgsDef, CommandDef, Resolvable } from "citty";
import { UsageError } from "../core/errors.ts";

/** Options that may be given several times, each adding one value (permission rules, MCP config files). */
const REPEATABLE = new Set(["allow", "deny", "mcp-config", "allowedTools", "disallowedTools", "include-guarded"]);

// citty accepts any flag and treats the first bare word as the subcommand. This
// walks the raw tokens against the command tree first, so a typo is an error
// naming it instead of being silently ignored, and hands citty a normalised argv.

// `any`: one tree holds commands whose args have different types.
export type AnyCommand = CommandDef<any>;

export interface Invocation {
  /** The root, then each subcommand named on the command line. */
  path: AnyCommand[];
  /** The subcommand names, e.g. ["mailbox", "send"]. */
  names: string[];
  /** What to give citty's `runCommand(root)`: names first, then flags as `--name=value`. */
  argv: string[];
  help: boolean;
  version: boolean;
}

/**
 * The words people type first, as the flags they stand for: `agent help [CMD…]` is
 * `agent [CMD…] --help` and `agent version` is `agent --version`. Neither is a
 * command of the tree, so a command or an operand named "help" stays possible.
 */
export function expandHelpWords(rawArgs: readonly string[]): string[] {
  if (rawArgs[0] === "help") return [...rawArgs.slice(1), "--help"];
  if (rawArgs.length === 1 && rawArgs[0] === "version") return ["--version"];
  return [...rawArgs];
}

/**
 * The command lines of `claude -p` scripts, as ours: a line that starts with an
 * option and has `-p`/`--print` (or stream-json in or out, as the Claude Agent SDK
 * starts it) before any operand (`agent -p "hi" --output-format json`) is `agent run`
 * with it. `agent exec …`, codex's, is read by run/codex-exec.ts.
 */
export function expandCompatWords(rawArgs: readonly string[]): string[] {
  const end = rawArgs.indexOf("--");
  const options = end === -1 ? rawArgs : rawArgs.slice(0, end);
  if (rawArgs[0]?.startsWith("-") && options.some((token, i) => token === "-p" || token === "--print" || streamJsonFlag(options, i))) return ["run", ...rawArgs];
  return [...rawArgs];
}

/**
 * `--input-format stream-json` or `--output-format stream-json` (either form) at `i`: the
 * Claude Agent SDK starts `claude` so, with no `-p`, and means print mode.
 */
function streamJsonFlag(options: readonly string[], i: number): boolean {
  const token = options[i] as string;
  if (token === "--input-format=stream-json" || token === "--output-format=stream-json") return true;
  return (token === "--input-format" || token === "--output-format") && options[i + 1] === "stream-json";
}

/**
 * Every value of an option given several times. citty keeps only the last one,
 * so the repeatable options are read again from the argv it was given, which
 * `resolveInvocation` normalised to `--name=value`. Undefined when absent.
 */
export function repeatedValues(rawArgs: readonly string[], name: string): string[] | undefined {
  const values: string[] = [];
  for (const token of rawArgs) {
    if (token === "--") break;
    if (token.startsWith(`--${name}=`)) values.push(token.slice(name.length + 3));
  }
  return values.length > 0 ? values : undefined;
}

/** A citty `Resolvable` (value, promise or function) as its value. */
export async function resolve<T>(value: Resolvable<T> | undefined): Promise<T | undefined> {
  return typeof value === "function" ? await (value as () => T | Promise<T>)() : await value;
}

function aliasesOf(def: ArgDef): string[] {
  if (!("alias" in def) || def.alias === undefined) return [];
  return Array.isArray(def.alias) ? def.alias : [def.alias];
}

/** The arg a flag token names: `--name` by its exact name, `-x` by a one-letter alias. */
function findFlag(args: ArgsDef, token: string): [string, ArgDef] | undefined {
  for (const [name, def] of Object.entries(args)) {
    if (def.type === "positional") continue;
    if (token === `--${name}`) return [name, def];
    if (aliasesOf(def).some((alias) => token === (alias.length === 1 ? `-${alias}` : `--${alias}`))) {
      return [name, def];
    }
  }
  return undefined;
}

export interface ResolveOptions {
  /** The root alone (no command) is a valid line: `agent` on a terminal starts a session. */
  bare?: boolean;
}

/** Parses the raw command line against the tree rooted at `root`; throws `UsageError`. */
export async function resolveInvocation(root: AnyCommand, rawArgs: readonly string[], options: ResolveOptions = {}): Promise<Invocation> {
  const path: AnyCommand[] = [root];
  const names: string[] = [];
  // Flags met before the last subcommand: citty only parses the leaf's own tokens
  // as its args, so these move to just after the subcommand names.
  const moved: string[] = [];
  const movedNames: string[] = [];
  const leaf: string[] = [];
  const seen = new Set<string>();
  let help = false;
  let version = false;
  let positionals = 0;
  let unknownCommand = false;
  let firstError: UsageError | undefined;
  const fail = (message: string) => {
    firstError ??= new UsageError(`${message}; run \`${commandLine(names)} --help\``);
  };

  let cmd = root;
  let args: ArgsDef = (await resolve(cmd.args)) ?? {};
  let subCommands = await resolve(cmd.subCommands);
  for (let i = 0; i < rawArgs.length; i++) {
    const token = rawArgs[i] as string;
    if (token === "--") {
      // Everything after `--` is an operand, even if it starts with a dash.
      const rest = rawArgs.slice(i + 1);
      if (subCommands) fail(`unexpected argument after "--" for "${commandLine(names)}"`);
      positionals += rest.length;
      leaf.push("--", ...rest);
      break;
    }
    if (token.startsWith("-") && token !== "-") {
      const eq = token.startsWith("--") ? token.indexOf("=") : -1;
      const flag = eq === -1 ? token : token.slice(0, eq);
      const found = findFlag(args, flag);
      if (!found) {
        fail(`unknown option ${flag} for "${commandLine(names)}"`);
        continue;
      }
      const [name, def] = found;
      if (seen.has(name) && !REPEATABLE.has(name)) fail(`option --${name} is given more than once`);
      seen.add(name);
      if (name === "help") help = true;
      if (name === "version") version = true;
      let normalised: string;
      if (def.type === "boolean" || def.type === undefined) {
        if (eq !== -1) fail(`option --${name} takes no value`);
        normalised = `--${name}`;
      } else {
        // An option's value is the next token whatever it looks like (POSIX), so
        // `--content -x` sends "-x"; `--name=value` says the same unambiguously.
        const value = eq === -1 ? rawArgs[++i] : token.slice(eq + 1);
        if (value === undefined) {
          fail(`option --${name} needs a value`);
          continue;
        }
        if (def.type === "enum" && def.options && !def.options.includes(value)) {
          fail(`invalid value ${JSON.stringify(value)} for --${name}: expected one of ${def.options.join(", ")}`);
        }
        normalised = `--${name}=${value}`;
      }
      (subCommands ? moved : leaf).push(normalised);
      if (subCommands) movedNames.push(name);
      continue;
    }
    if (subCommands) {
      const sub = await resolve(subCommands[token]);
      if (!sub) {
        fail(`unknown command "${token}" for "${commandLine(names)}"`);
        unknownCommand = true;
        break;
      }
      cmd = sub;
      path.push(cmd);
      names.push(token);
      args = (await resolve(cmd.args)) ?? {};
      subCommands = await resolve(cmd.subCommands);
      continue;
    }
    positionals += 1;
    leaf.push(token);
  }

  // Help and version answer whatever else is wrong with the line: the user is
  // asking how to write it. Help for a command that does not exist is no answer.
  if ((help || version) && !unknownCommand) return { path, names, argv: [...names, ...moved, ...leaf], help, version };
  if (firstError) throw firstError;
  // `options.bare` last: reading it may be dear (main.ts), and only `agent` alone needs it.
  if (subCommands && !(names.length === 0 && options.bare)) {
    fail(`"${commandLine(names)}" needs a command: ${Object.keys(subCommands).join(", ")}`);
    throw firstError;
  }
  // A flag of the root's own session (`agent --model m`) means nothing to a command without it.
  for (const name of movedNames) {
    if (names.length > 0 && !(name in args)) fail(`option --${name} does not apply to "${commandLine(names)}"`);
  }
  const operands = Object.entries(args).filter(([, def]) => def.type === "positional");
  if (positionals > operands.length) fail(`too many arguments for "${commandLine(names)}"`);
  operands.slice(positionals).forEach(([name, def]) => {
    if (def.required !== false && def.default === undefined) fail(`missing argument ${name.toUpperCase()}`);
  });
  for (const [name, def] of Object.entries(args)) {
    if (def.type !== "positional" && def.required === true && !seen.has(name)) fail(`missing required option --${name}`);
  }
  if (firstError) throw firstError;
  return { path, names, argv: [...names, ...moved, ...leaf], help, version };
}

export function commandLine(names: readonly string[]): string {
  return ["agent", ...names].join(" ");
}
