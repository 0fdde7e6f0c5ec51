import type { ArgDef, ArgsDef, ParsedArgs } from "citty";
import type { AnyCommand } from "./argv.ts";

// Runs the command a line names with the args object citty's `runCommand` would
// give it, parsed here instead: citty parses through node:util's parseArgs, and
// its import alone (hoisted to the top of the one-file bundle) cost ~3 ms of CPU
// at every start, --version included, ~20% of `mailbox show`. The line has been
// checked and normalised by `resolveInvocation` already (flags as `--name` or
// `--name=value`, operands, `--`), so this reads only that form.
// test/cli/run-leaf.test.ts compares the result with citty's parseArgs.

/** The parsed args as the command's `run` sees them: values by name, `_` the operands. */
export type LeafArgs = Record<string, unknown> & { _: string[] };

/** Runs `cmd` (a leaf: no subcommands left to choose) on its normalised tokens. */
export async function runLeaf(cmd: AnyCommand, rawArgs: string[]): Promise<void> {
  const argsDef: ArgsDef = (typeof cmd.args === "function" ? await cmd.args() : await cmd.args) ?? {};
  const args = parseLeafArgs(argsDef, rawArgs);
  if (typeof cmd.run !== "function") throw new Error(`command ${JSON.stringify((cmd.meta as { name?: string })?.name)} has nothing to run`);
  await cmd.run({ rawArgs, args: args as ParsedArgs, data: undefined, cmd });
}

/**
 * citty's args for a normalised line: each option under its name, its aliases and
 * its camelCase and kebab-case spellings; `--no-X` as X false; a boolean given a
 * value as true unless "false"; defaults; operands in `_` and under the names of
 * the positional args in order; read through a proxy that tries the other spellings.
 */
export function parseLeafArgs(argsDef: ArgsDef, rawArgs: readonly string[]): LeafArgs {
  const defs = Object.entries(argsDef).filter(([, def]) => def.type !== "positional");
  // Each option's names: the first is its own, the rest what citty makes its aliases.
  const groups = new Map<string, string[]>();
  const groupOf = new Map<string, string[]>();
  for (const [name, def] of defs) {
    const names = [name];
    for (const alias of [...aliasesOf(def), camelCase(name), kebabCase(name)]) if (!names.includes(alias)) names.push(alias);
    groups.set(name, names);
    for (const alias of names) groupOf.set(alias, names);
  }
  const typeOf = (key: string): ArgDef["type"] | undefined => {
    const main = groupOf.get(key)?.[0];
    return main === undefined ? undefined : argsDef[main]?.type;
  };

  const out: LeafArgs = { _: [] };
  const negated: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const token = rawArgs[i]!;
    if (token === "--") {
      out._.push(...rawArgs.slice(i + 1));
      break;
    }
    if (token.startsWith("--no-")) {
      negated.push(token.slice(5));
      continue;
    }
    if (token.startsWith("--") && token.length > 2) {
      const eq = token.indexOf("=");
      const key = eq === -1 ? token.slice(2) : token.slice(2, eq);
      const type = typeOf(key);
      let value: string | boolean = eq === -1 ? true : token.slice(eq + 1);
      if (type === "boolean" && typeof value === "string") value = value !== "false";
      else if ((type === "string" || type === "enum") && value === true) value = "";
      out[key] = value;
      continue;
    }
    out._.push(token);
  }
  for (const [name, def] of defs) if (def.default !== undefined && out[name] === undefined) out[name] = def.default;
  for (const name of negated) {
    out[name] = false;
    for (const alias of groupOf.get(name) ?? []) out[alias] = false;
  }
  // Every spelling of an option given under one of them carries its value.
  for (const names of groups.values()) {
    const given = names.find((key) => out[key] !== undefined);
    if (given === undefined) continue;
    for (const key of names) if (out[key] === undefined) out[key] = out[given];
  }

  const args = new Proxy(out, {
    get: (target, prop) => (typeof prop !== "string" ? Reflect.get(target, prop) : (target[prop] ?? target[camelCase(prop)] ?? target[kebabCase(prop)])),
  });
  const operands = [...out._];
  for (const [name, def] of Object.entries(argsDef)) {
    if (def.type !== "positional") continue;
    const operand = operands.shift();
    if (operand !== undefined) out[name] = operand;
    else if (def.default === undefined && def.required !== false) throw cliError(`Missing required positional argument: ${name.toUpperCase()}`);
    else out[name] = def.default;
  }
  for (const [name, def] of defs) {
    const value = args[name];
    if (def.type === "enum" && value !== undefined && def.options && !def.options.includes(value as string)) {
      throw cliError(`Invalid value for argument: --${name} (${String(value)}). Expected one of: ${def.options.join(", ")}.`);
    }
    if (def.required === true && value === undefined) throw cliError(`Missing required argument: --${name}`);
  }
  return args;
}

/** An error named as citty names its own, which main.ts reports as a usage error. */
function cliError(message: string): Error {
  const error = new Error(message);
  error.name = "CLIError";
  return error;
}

function aliasesOf(def: ArgDef): string[] {
  if (!("alias" in def) || def.alias === undefined) return [];
  return Array.isArray(def.alias) ? def.alias : [def.alias];
}

/** A name's words as citty (scule) splits them: at - _ / . and where the case changes. */
function words(text: string): string[] {
  const parts: string[] = [];
  let word = "";
  let upperBefore: boolean | undefined;
  for (const char of text) {
    if ("-_/.".includes(char)) {
      parts.push(word);
      word = "";
      upperBefore = undefined;
      continue;
    }
    const upper = /\d/.test(char) ? undefined : char !== char.toLowerCase();
    if (word.length > 0 && upperBefore === false && upper === true) {
      parts.push(word);
      word = char;
    } else if (upperBefore === true && upper === false && word.length > 1) {
      // "HTMLParser": the last capital starts the next word.
      parts.push(word.slice(0, -1));
      word = word.slice(-1) + char;
    } else {
      word += char;
    }
    upperBefore = upper;
  }
  parts.push(word);
  return parts;
}

// Remembered per name: the args proxy converts every name read that was not
// given (a run reads some 60), and splitting a name into words is a loop of
// regular expressions, ~1 ms of a run's start before.
const camelCases = new Map<string, string>();
const kebabCases = new Map<string, string>();

function camelCase(text: string): string {
  let camel = camelCases.get(text);
  if (camel === undefined) {
    const pascal = words(text)
      .map((part) => (part ? part[0]!.toUpperCase() + part.slice(1) : ""))
      .join("");
    camel = pascal ? pascal[0]!.toLowerCase() + pascal.slice(1) : "";
    camelCases.set(text, camel);
  }
  return camel;
}

function kebabCase(text: string): string {
  let kebab = kebabCases.get(text);
  if (kebab === undefined) {
    kebab = words(text)
      .map((part) => part.toLowerCase())
      .join("-");
    kebabCases.set(text, kebab);
  }
  return kebab;
}
