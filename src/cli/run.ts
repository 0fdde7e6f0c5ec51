import { type ArgsDef, defineCommand } from "citty";
import { globalArgs } from "./args.ts";
import { compatArgs } from "./run/compat-flags.ts";
import { headlessArgs, runtimeArgs, sessionArgs, verboseArg } from "./run/runtime-flags.ts";

// Only the command's meta and arguments: `agent run --help` is answered from
// these, and the runtime (src/cli/run/run-action.ts) is loaded when it runs.

export const runArgs = {
  // Upper case: the flag --prompt already has the key "prompt". citty also copies
  // --prompt into PROMPT, so the operand is read from `args._` (run/run-action.ts).
  PROMPT: { type: "positional", required: false, valueHint: "prompt", description: "What to do; - reads it from stdin, as does leaving it out with data piped in" },
  prompt: { type: "string", valueHint: "text", description: "The prompt, instead of PROMPT; - reads it from stdin" },
  ...sessionArgs,
  ...runtimeArgs,
  ...headlessArgs,
  "no-wait": { type: "boolean", description: "Return after the user turn; teammates' messages wait in the mailbox for `agent drain`" },
  ...compatArgs,
  ...globalArgs,
  // codex exec's -C/--cd DIR, its working root, is our --workspace (docs/compat.md).
  workspace: { ...globalArgs.workspace, alias: ["C", "cd"] },
  ...verboseArg,
} as const satisfies ArgsDef;

export const runCommand = defineCommand({
  meta: {
    name: "run",
    description:
      "Run one Lead user turn headless in a new session (or the one -c/--resume/--session names), then its team's event turns until the team is quiet; `agent exec` and `agent -p` are the same command",
  },
  args: runArgs,
  run: (context) => import("./run/run-action.ts").then((m) => m.runAction(context)),
});
