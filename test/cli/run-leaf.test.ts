import { describe, expect, test } from "bun:test";
import { type ArgsDef, parseArgs } from "citty";
import { type AnyCommand, resolve } from "../../src/cli/argv.ts";
import { parseLeafArgs } from "../../src/cli/run-leaf.ts";
import { rootCommand } from "../../src/cli/root.ts";

// The CLI parses a command's line itself (src/cli/run-leaf.ts) so the binary does not
// load node:util at start-up; each command's code was written against citty's
// parse. For every command of the tree and lines built from all its options, the two
// must give the same args, read under every spelling.

async function commands(cmd: AnyCommand, names: string[] = []): Promise<[string, ArgsDef][]> {
  const found: [string, ArgsDef][] = [[names.join(" ") || "(root)", (await resolve(cmd.args)) ?? {}]];
  for (const [name, sub] of Object.entries((await resolve(cmd.subCommands)) ?? {})) {
    found.push(...(await commands((await resolve(sub)) as AnyCommand, [...names, name])));
  }
  return found;
}

/** Lines as resolveInvocation hands them on: flags as --name or --name=value, then operands. */
function lines(args: ArgsDef): string[][] {
  const flags = Object.entries(args).filter(([, def]) => def.type !== "positional");
  const operands = Object.values(args).filter((def) => def.type === "positional").map((_, i) => `operand-${i}`);
  const given = flags.map(([name, def], i) =>
    def.type === "boolean" ? `--${name}` : `--${name}=${def.type === "enum" && def.options ? def.options[i % def.options.length] : `v${i}`}`,
  );
  const negated = flags.filter(([, def]) => def.type === "boolean").map(([name]) => `--no-${name}`);
  return [
    [...operands],
    [...given, ...operands],
    // No operand: an optional positional takes a same-named option's value (citty's `PROMPT` from `--prompt`).
    [...given],
    [...operands, ...negated],
    [...given.filter((_, i) => i % 2 === 0), ...operands, "--", "-x", "--y=1"],
    [...given.filter((_, i) => i % 2 === 1), "--no-wait", ...operands, "-"],
  ];
}

function outcome(parse: () => Record<string, unknown>, names: string[]): unknown {
  try {
    const args = parse();
    return { values: { ...args }, read: names.map((name) => [name, args[name]]) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

describe("parseLeafArgs", () => {
  test("gives every command the args citty's parseArgs gives it", async () => {
    let compared = 0;
    for (const [name, args] of await commands(rootCommand)) {
      const spellings = Object.keys(args).flatMap((key) => [key, key.replace(/-(\w)/g, (_, c: string) => c.toUpperCase()), key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)]);
      for (const line of lines(args)) {
        const ours = outcome(() => parseLeafArgs(args, line), spellings);
        const citty = outcome(() => parseArgs(line, args) as Record<string, unknown>, spellings);
        expect({ command: name, line, ...(ours as object) }).toEqual({ command: name, line, ...(citty as object) });
        compared += 1;
      }
    }
    // Not vacuous: the whole tree was walked.
    expect(compared).toBeGreaterThan(100);
  });

  test("a missing required operand or option is refused as citty refuses it", () => {
    const args = { id: { type: "positional", required: true }, to: { type: "string", required: true } } as const satisfies ArgsDef;
    expect(() => parseLeafArgs(args, [])).toThrow("Missing required positional argument: ID");
    expect(() => parseLeafArgs(args, ["x"])).toThrow("Missing required argument: --to");
    expect(parseLeafArgs(args, ["x", "--to=lead"])).toMatchObject({ id: "x", to: "lead", _: ["x"] });
  });
});
