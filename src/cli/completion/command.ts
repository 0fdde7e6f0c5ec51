import { defineCommand } from "citty";
import { UsageError } from "../../core/errors.ts";
import { globalArgs } from "../args.ts";
import type { AnyCommand } from "../argv.ts";
import { writeOut } from "../output.ts";
import { bashScript } from "./bash.ts";
import { fishScript } from "./fish.ts";
import { completionTree } from "./tree.ts";
import { zshScript } from "./zsh.ts";

const SHELLS = { bash: bashScript, zsh: zshScript, fish: fishScript } as const;

/**
 * `agent completion bash|zsh|fish`. Given the root lazily: the root lists this
 * command, and the script must describe the whole tree, this command included.
 */
export function completionCommand(root: () => AnyCommand) {
  return defineCommand({
    meta: { name: "completion", description: "Print the shell completion script for bash, zsh or fish" },
    args: {
      shell: { type: "positional", required: true, valueHint: "bash|zsh|fish", description: "The shell: bash, zsh or fish" },
      ...globalArgs,
    },
    async run({ args }) {
      const shell = args.shell as string;
      if (!(shell in SHELLS)) throw new UsageError(`unknown shell ${JSON.stringify(shell)}; give bash, zsh or fish`);
      await writeOut(SHELLS[shell as keyof typeof SHELLS](await completionTree(root())));
    },
  });
}
