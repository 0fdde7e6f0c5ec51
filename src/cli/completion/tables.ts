import type { CompletionNode, ValueKind } from "./tree.ts";

// The lookup functions bash and zsh share (both read this sh syntax): a `case`
// per question — which subcommands, which flags, which operand words, what value
// a flag takes — keyed by the command path ("" for `agent`, "mailbox send").

const key = (path: readonly string[]) => JSON.stringify(path.join(" "));

function valueSpec(value: ValueKind): string {
  return value.kind === "words" ? `words ${value.words.join(" ")}` : value.kind;
}

function cases(name: string, rows: Array<[string, string]>): string {
  const body = rows.map(([pattern, result]) => `    ${pattern}) echo ${JSON.stringify(result)} ;;`).join("\n");
  return `${name}() {\n  case "$1" in\n${body}\n    *) return 1 ;;\n  esac\n}\n`;
}

/** `_agent_subcommands`, `_agent_flags`, `_agent_operands` and `_agent_flag_value` ("<path>|<flag>"). */
export function lookupFunctions(nodes: readonly CompletionNode[]): string {
  const subcommands = nodes.filter((n) => n.subcommands.length > 0).map((n): [string, string] => [key(n.path), n.subcommands.join(" ")]);
  const flags = nodes.map((n): [string, string] => [key(n.path), n.flags.flatMap((f) => f.names).join(" ")]);
  const operands = nodes.filter((n) => n.operands.length > 0).map((n): [string, string] => [key(n.path), n.operands.join(" ")]);
  const values = nodes.flatMap((n) =>
    n.flags.flatMap((f) => (f.value ? f.names.map((name): [string, string] => [JSON.stringify(`${n.path.join(" ")}|${name}`), valueSpec(f.value!)]) : [])),
  );
  return [
    cases("_agent_subcommands", subcommands),
    cases("_agent_flags", flags),
    cases("_agent_operands", operands),
    "# How to complete a flag's value (words …, file, dir or any); no answer for a flag without one.",
    cases("_agent_flag_value", values),
  ].join("\n");
}
