import type { ArgDef, ArgsDef, CommandMeta } from "citty";
import { globalArgs } from "./args.ts";
import { type AnyCommand, type Invocation, commandLine, resolve } from "./argv.ts";
import { formatTable } from "./output.ts";

// Our own renderer rather than citty's: citty decides colour once at import time
// from its own env rules and pads coloured text by its escape codes; this one is
// plain text (fine on a terminal, in a pipe and with NO_COLOR alike).

function flagLabel(name: string, def: ArgDef): string {
  const short = "alias" in def && typeof def.alias === "string" && def.alias.length === 1 ? `-${def.alias}, ` : "";
  if (def.type === "boolean" || def.type === undefined) return `${short}--${name}`;
  const hint = def.type === "enum" && def.options ? def.options.join("|") : (def.valueHint ?? "value");
  return `${short}--${name} <${hint}>`;
}

function describeArg(def: ArgDef): string {
  const notes = [def.required === true ? "required" : "", def.default !== undefined ? `default: ${def.default}` : ""];
  const extra = notes.filter(Boolean).join(", ");
  return `${def.description ?? ""}${extra ? ` (${extra})` : ""}`;
}

function section(title: string, rows: string[][]): string {
  return rows.length === 0 ? "" : `\n${title}:\n${formatTable(rows).replace(/^(?=.)/gm, "  ")}`;
}

/** The `--help` text for the deepest command on the line, e.g. `agent mailbox send`. */
export async function renderHelp(invocation: Invocation): Promise<string> {
  const cmd = invocation.path[invocation.path.length - 1] as AnyCommand;
  const name = commandLine(invocation.names);
  const meta: CommandMeta = (await resolve(cmd.meta)) ?? {};
  const args: ArgsDef = (await resolve(cmd.args)) ?? {};
  const subCommands = await resolve(cmd.subCommands);

  const operands = Object.entries(args).filter(([, def]) => def.type === "positional");
  const flags = Object.entries(args).filter(([, def]) => def.type !== "positional");
  const isGlobal = ([key]: [string, ArgDef]) => key in globalArgs;
  const required = flags.filter(([, def]) => def.required === true).map(([key, def]) => flagLabel(key, def));
  const usage = [
    name,
    ...(subCommands ? ["<command>"] : []),
    // An operand that may be left out is in brackets, as a command line's usage says.
    ...operands.map(([key, def]) => (def.required === false ? `[${key.toUpperCase()}]` : `<${key.toUpperCase()}>`)),
    ...required,
    "[options]",
  ].join(" ");

  const subRows: string[][] = [];
  for (const [subName, sub] of Object.entries(subCommands ?? {})) {
    const subMeta = await resolve((await resolve(sub))?.meta);
    subRows.push([subName, subMeta?.description ?? ""]);
  }
  return [
    `${name}${meta.description ? ` - ${meta.description}` : ""}\n`,
    `\nUsage: ${usage}\n`,
    section("Arguments", operands.map(([key, def]) => [key.toUpperCase(), describeArg(def)])),
    section("Options", flags.filter((f) => !isGlobal(f)).map(([key, def]) => [flagLabel(key, def), describeArg(def)])),
    section("Global options", flags.filter(isGlobal).map(([key, def]) => [flagLabel(key, def), describeArg(def)])),
    section("Commands", subRows),
    subCommands ? `\nRun \`${name} <command> --help\` for a command's options.\n` : "",
  ].join("");
}
