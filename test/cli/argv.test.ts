import { describe, expect, test } from "bun:test";
import { defineCommand } from "citty";
import { expandHelpWords, resolveInvocation } from "../../src/cli/argv.ts";
import { rootCommand } from "../../src/cli/root.ts";
import { UsageError } from "../../src/core/errors.ts";

async function usageError(argv: string[]): Promise<string> {
  try {
    await resolveInvocation(rootCommand, argv);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(argv)} to be refused`);
}

describe("resolveInvocation", () => {
  test("names the subcommands and normalises flags to --name=value", async () => {
    const inv = await resolveInvocation(rootCommand, ["mailbox", "send", "--to", "lead", "--from", "a", "--content", "hi", "--json"]);
    expect(inv.names).toEqual(["mailbox", "send"]);
    expect(inv.path).toHaveLength(3);
    expect(inv.argv).toEqual(["mailbox", "send", "--to=lead", "--from=a", "--content=hi", "--json"]);
    expect({ help: inv.help, version: inv.version }).toEqual({ help: false, version: false });
  });

  test("the root alone is a line when it may be (a session on a terminal), its flags kept", async () => {
    const inv = await resolveInvocation(rootCommand, ["--model", "m", "--state-dir", "/s"], { bare: true });
    expect(inv.names).toEqual([]);
    expect(inv.argv).toEqual(["--model=m", "--state-dir=/s"]);
    expect(await usageError(["--model", "m"])).toContain('"agent" needs a command');
  });

  test("a root flag moved to a command that does not take it is refused, not ignored", async () => {
    expect(await usageError(["--model", "m", "mailbox", "list"])).toContain('option --model does not apply to "agent mailbox list"');
    const inv = await resolveInvocation(rootCommand, ["--workspace", "/w", "run", "hi"]);
    expect(inv.argv).toEqual(["run", "--workspace=/w", "hi"]);
  });

  test("moves global flags given before the subcommand to after it", async () => {
    const inv = await resolveInvocation(rootCommand, ["--state-dir", "/s", "mailbox", "--verbose", "list", "--json"]);
    expect(inv.argv).toEqual(["mailbox", "list", "--state-dir=/s", "--verbose", "--json"]);
  });

  test("an option's value is the next token even when it looks like a flag", async () => {
    const inv = await resolveInvocation(rootCommand, ["mailbox", "send", "--to", "lead", "--from", "a", "--content", "--json"]);
    expect(inv.argv).toContain("--content=--json");
    expect(inv.argv).not.toContain("--json");
  });

  test("an inline value keeps everything after the first =, including nothing", async () => {
    const inv = await resolveInvocation(rootCommand, ["mailbox", "send", "--to=lead", "--from=a", "--content=a=b", "--content-file="]);
    expect(inv.argv).toContain("--content=a=b");
    expect(inv.argv).toContain("--content-file=");
  });

  test("a lone - is a value, and operands after -- may start with a dash", async () => {
    const send = await resolveInvocation(rootCommand, ["mailbox", "send", "--to", "lead", "--from", "a", "--content-file", "-"]);
    expect(send.argv).toContain("--content-file=-");
    const show = await resolveInvocation(rootCommand, ["mailbox", "show", "--", "-x"]);
    expect(show.argv).toEqual(["mailbox", "show", "--", "-x"]);
  });

  test("unknown options, commands and arguments are refused with a pointer to --help", async () => {
    expect(await usageError(["mailbox", "list", "--bogus"])).toBe(
      'unknown option --bogus for "agent mailbox list"; run `agent mailbox list --help`',
    );
    expect(await usageError(["mailbox", "list", "--stateDir", "x"])).toContain("unknown option --stateDir");
    expect(await usageError(["mailbox", "list", "-x"])).toContain("unknown option -x");
    expect(await usageError(["nope"])).toBe('unknown command "nope" for "agent"; run `agent --help`');
    expect(await usageError(["mailbox", "list", "x"])).toContain('too many arguments for "agent mailbox list"');
    expect(await usageError(["mailbox", "show", "a", "b"])).toContain("too many arguments");
    expect(await usageError(["mailbox", "--", "list"])).toContain('unexpected argument after "--"');
  });

  test("missing commands, values and required options are refused", async () => {
    expect(await usageError([])).toContain('"agent" needs a command: run, drain, team, mailbox');
    expect(await usageError(["mailbox"])).toContain('"agent mailbox" needs a command: send, list, show, recover, prune');
    expect(await usageError(["mailbox", "send", "--from", "a", "--to"])).toContain("option --to needs a value");
    expect(await usageError(["mailbox", "send", "--from", "a"])).toContain("missing required option --to");
    expect(await usageError(["mailbox", "show"])).toContain("missing argument ID");
    expect(await usageError(["mailbox", "prune"])).toContain("missing required option --older-than");
  });

  test("enum values, repeated options and values given to switches are checked", async () => {
    expect(await usageError(["mailbox", "list", "--state", "new"])).toContain(
      'invalid value "new" for --state: expected one of ready, processing, done, quarantine',
    );
    expect(await usageError(["mailbox", "list", "--agent", "a", "--agent", "b"])).toContain("option --agent is given more than once");
    expect(await usageError(["--state-dir", "a", "mailbox", "list", "--state-dir", "b"])).toContain("given more than once");
    expect(await usageError(["mailbox", "list", "--json=true"])).toContain("option --json takes no value");
  });

  test("--help and -h answer at any depth, even on an otherwise bad line", async () => {
    const inv = await resolveInvocation(rootCommand, ["mailbox", "send", "--bogus", "-h"]);
    expect(inv.help).toBe(true);
    expect(inv.names).toEqual(["mailbox", "send"]);
    expect((await resolveInvocation(rootCommand, ["--help", "mailbox"])).names).toEqual(["mailbox"]);
    expect((await resolveInvocation(rootCommand, ["mailbox", "--help"])).help).toBe(true);
    // Except the command itself: help for one that does not exist is the error.
    expect(await usageError(["nope", "--help"])).toBe('unknown command "nope" for "agent"; run `agent --help`');
  });

  test("`agent help [CMD…]` and `agent version` are the flags they stand for", () => {
    expect(expandHelpWords(["help"])).toEqual(["--help"]);
    expect(expandHelpWords(["help", "mailbox", "show"])).toEqual(["mailbox", "show", "--help"]);
    expect(expandHelpWords(["version"])).toEqual(["--version"]);
    // Only as the first word: a prompt or a name "help" stays what it is.
    expect(expandHelpWords(["run", "help"])).toEqual(["run", "help"]);
    expect(expandHelpWords(["version", "x"])).toEqual(["version", "x"]);
  });

  test("--version is a root option", async () => {
    expect((await resolveInvocation(rootCommand, ["--version"])).version).toBe(true);
    expect(await usageError(["mailbox", "list", "--version"])).toContain("unknown option --version");
  });

  test("one-letter aliases are single-dash, longer ones double-dash", async () => {
    const tree = defineCommand({
      args: {
        force: { type: "boolean", alias: ["f", "yes"] },
        name: { type: "string", alias: "n" },
      },
    });
    const inv = await resolveInvocation(tree, ["-f", "-n", "x"]);
    expect(inv.argv).toEqual(["--force", "--name=x"]);
    expect((await resolveInvocation(tree, ["--yes"])).argv).toEqual(["--force"]);
    await expect(resolveInvocation(tree, ["--f"])).rejects.toThrow("unknown option --f");
  });
});
