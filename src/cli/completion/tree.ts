import type { ArgDef, ArgsDef } from "citty";
import { type AnyCommand, resolve } from "../argv.ts";

// What a shell needs to complete a command line, read from the same command
// definitions that parse it and print --help: a command added anywhere in the
// tree is completed without touching this folder.

/** How to complete a flag's value. */
export type ValueKind = { kind: "words"; words: string[] } | { kind: "file" } | { kind: "dir" } | { kind: "any" };

export interface CompletionFlag {
  /** `--state-dir`, or `-h` for a one-letter alias. */
  names: string[];
  description: string;
  /** Absent for a flag that takes no value. */
  value?: ValueKind;
}

export interface CompletionNode {
  /** The subcommand names from the root: [] for `agent`, ["mailbox", "send"]. */
  path: string[];
  /** The first clause of the command's description. */
  description: string;
  subcommands: string[];
  flags: CompletionFlag[];
  /** Words the command's operands can be, when the definition lists them (`bash|zsh|fish`). */
  operands: string[];
}

/** Every command of the tree, parents before children. */
export async function completionTree(root: AnyCommand): Promise<CompletionNode[]> {
  const nodes: CompletionNode[] = [];
  const visit = async (cmd: AnyCommand, path: string[]) => {
    const meta = await resolve(cmd.meta);
    const args: ArgsDef = (await resolve(cmd.args)) ?? {};
    const subs = (await resolve(cmd.subCommands)) ?? {};
    const entries = Object.entries(args);
    nodes.push({
      path,
      description: firstSentence(meta?.description ?? ""),
      subcommands: Object.keys(subs),
      flags: entries.filter(([, def]) => def.type !== "positional").map(([name, def]) => flagOf(name, def)),
      operands: entries.filter(([, def]) => def.type === "positional").flatMap(([, def]) => operandWords(def)),
    });
    for (const [name, sub] of Object.entries(subs)) await visit((await resolve(sub)) as AnyCommand, [...path, name]);
  };
  await visit(root, []);
  return nodes;
}

function flagOf(name: string, def: ArgDef): CompletionFlag {
  const aliases = "alias" in def && def.alias !== undefined ? (Array.isArray(def.alias) ? def.alias : [def.alias]) : [];
  const names = [`--${name}`, ...aliases.map((a: string) => (a.length === 1 ? `-${a}` : `--${a}`))];
  const description = firstSentence(def.description ?? "");
  if (def.type === "boolean" || def.type === undefined) return { names, description };
  if (def.type === "enum") return { names, description, value: { kind: "words", words: [...(def.options ?? [])] } };
  const hint = "valueHint" in def ? (def.valueHint ?? "") : "";
  const value: ValueKind = /^(file|path)\b/.test(hint) ? { kind: "file" } : hint === "dir" ? { kind: "dir" } : { kind: "any" };
  return { names, description, value };
}

function operandWords(def: ArgDef): string[] {
  const hint = "valueHint" in def ? (def.valueHint ?? "") : "";
  return hint.includes("|") ? hint.split("|").filter((w) => /^[a-z][\w-]*$/.test(w)) : [];
}

/** Shells show one short line per candidate. */
function firstSentence(text: string): string {
  const cut = text.split(/[;(]/)[0] ?? "";
  return cut.trim();
}
