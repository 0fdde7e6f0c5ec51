import { beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { rootCommand } from "../../../src/cli/root.ts";
import { type CompletionNode, completionTree } from "../../../src/cli/completion/tree.ts";
import { ensureBinary, runAgent } from "../../e2e/agent-binary.ts";
import { tempDir } from "../../support/temp-dir.ts";

// The bash script is sourced in a real bash and asked for completions the way
// bash's programmable completion asks: COMP_WORDS and COMP_CWORD set, then the
// function, then COMPREPLY read back.

let bashScript = "";
let nodes: CompletionNode[] = [];

beforeAll(async () => {
  ensureBinary();
  const result = await runAgent(["completion", "bash"]);
  expect(result.code).toBe(0);
  bashScript = result.stdout;
  nodes = await completionTree(rootCommand);
}, 120_000);

/** What bash offers for the line `words` (the last word is the one being completed). */
function complete(words: string[], cwd?: string): string[] {
  const dir = tempDir();
  const script = join(dir, "agent.bash");
  writeFileSync(script, bashScript);
  const driver = `source ${JSON.stringify(script)}
COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1))
_agent
printf '%s\\n' "\${COMPREPLY[@]}"`;
  const child = Bun.spawnSync(["bash", "--norc", "--noprofile", "-c", driver, "bash", ...words], { cwd: cwd ?? dir, stdout: "pipe", stderr: "pipe" });
  if (child.exitCode !== 0) throw new Error(`bash failed (${child.exitCode}): ${child.stderr}`);
  return child.stdout.toString().split("\n").filter(Boolean);
}

describe("agent completion bash", () => {
  test("completes the subcommands at each level", () => {
    expect(complete(["agent", ""])).toEqual(expect.arrayContaining(["run", "drain", "team", "mailbox", "cron", "completion"]));
    expect(complete(["agent", "mailbox", ""])).toEqual(["send", "list", "show", "recover", "prune"]);
    expect(complete(["agent", "mailbox", "re"])).toEqual(["recover"]);
    expect(complete(["agent", "completion", ""])).toEqual(["bash", "zsh", "fish"]);
  });

  test("completes a command's flags, its own and the global ones", () => {
    expect(complete(["agent", "mailbox", "list", "--st"])).toEqual(["--state", "--store", "--state-dir"]);
    expect(complete(["agent", "run", "--no"])).toEqual(["--no-wait"]);
    expect(complete(["agent", "team", "list", "--"])).toEqual(expect.arrayContaining(["--json", "--state-dir", "--verbose", "--help"]));
  });

  test("completes flag values: enum words, after a space or an =", () => {
    expect(complete(["agent", "run", "--output", ""])).toEqual(["text", "json", "stream-json"]);
    expect(complete(["agent", "mailbox", "list", "--state", "p"])).toEqual(["processing"]);
    // bash splits `--permission-mode=ac` at the "=".
    expect(complete(["agent", "run", "--permission-mode", "=", "ac"])).toEqual(["acceptEdits"]);
  });

  test("a flag's value is not taken for a subcommand, and directories complete for --workspace", () => {
    const dir = tempDir();
    mkdirSync(join(dir, "mailbox"));
    mkdirSync(join(dir, "project"));
    writeFileSync(join(dir, "notes.txt"), "");
    // `mailbox` here is --state-dir's value, so `l` is completed at the root: no `list`.
    expect(complete(["agent", "--state-dir", "mailbox", "l"], dir)).toEqual([]);
    expect(complete(["agent", "--state-dir", "/tmp", "mailbox", "l"], dir)).toEqual(["list"]);
    expect(complete(["agent", "run", "--workspace", "pr"], dir)).toEqual(["project"]);
    expect(complete(["agent", "run", "--record", "no"], dir)).toEqual(["notes.txt"]);
  });

  test("every command and every flag in the command definitions is completed (one source of truth)", () => {
    for (const node of nodes) {
      const line = ["agent", ...node.path];
      if (node.subcommands.length > 0) expect(complete([...line, ""])).toEqual(expect.arrayContaining(node.subcommands));
      const flags = complete([...line, "-"]);
      for (const flag of node.flags) expect(flags).toEqual(expect.arrayContaining(flag.names));
    }
    expect(nodes.length).toBeGreaterThan(10);
  });
});

describe("agent completion zsh and fish", () => {
  test("name every subcommand and flag of the tree", async () => {
    const zsh = (await runAgent(["completion", "zsh"])).stdout;
    const fish = (await runAgent(["completion", "fish"])).stdout;
    expect(zsh).toStartWith("#compdef agent\n");
    expect(zsh).toContain("compdef _agent agent");
    for (const node of nodes) {
      for (const sub of node.subcommands) {
        expect(zsh).toContain(sub);
        expect(fish).toContain(`complete -c agent -n "__agent_at '${node.path.join(" ")}'" -a ${sub}`);
      }
      for (const flag of node.flags) {
        expect(zsh).toContain(flag.names[0]!);
        expect(fish).toContain(`-l ${flag.names[0]!.slice(2)}`);
      }
    }
  });

  test("an unknown shell is a usage error", async () => {
    const result = await runAgent(["completion", "tcsh"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('agent: unknown shell "tcsh"; give bash, zsh or fish\n');
  });
});
