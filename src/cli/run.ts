import { defineCommand } from "citty";
import { uuidV7Source } from "../core/ids.ts";
import { runUntilQuiet } from "../app/until-quiet.ts";
import { globalArgs } from "./args.ts";
import { runHeadless } from "./run/headless.ts";
import { readPrompt } from "./run/prompt.ts";
import { headlessArgs, headlessSetup, runtimeArgs, sessionArgs, verboseArg } from "./run/runtime-args.ts";
import { leftForDrain } from "./run/team-outcome.ts";
import { askTrustOnTerminal } from "./trust-question.ts";

export const runCommand = defineCommand({
  meta: {
    name: "run",
    description: "Run one Lead user turn headless in a new session (or the one -c/--resume/--session names), then its team's event turns until the team is quiet",
  },
  args: {
    // Upper case: the flag --prompt already has the key "prompt". citty also copies
    // --prompt into PROMPT, so the operand is read from `args._` below.
    PROMPT: { type: "positional", required: false, valueHint: "prompt", description: "What to do; - reads it from stdin" },
    prompt: { type: "string", valueHint: "text", description: "The prompt, instead of PROMPT; - reads it from stdin" },
    ...sessionArgs,
    ...runtimeArgs,
    ...headlessArgs,
    "no-wait": { type: "boolean", description: "Return after the user turn; teammates' messages wait in the mailbox for `agent drain`" },
    ...globalArgs,
    ...verboseArg,
  },
  async run({ args, rawArgs }) {
    await askTrustOnTerminal(args);
    const setup = headlessSetup(args, rawArgs);
    // citty reads any `--no-X` as `X: false` and leaves "no-wait" unset.
    const wait = !(args["no-wait"] === true || (args as { wait?: boolean }).wait === false);
    // Read before the lock is taken: a slow pipe must not hold the state dir.
    const prompt = await readPrompt({ positional: args._[0], flag: args.prompt });
    const idempotencyKey = uuidV7Source.next();
    await runHeadless(setup, {
      idempotencyKey,
      prompt,
      async body(lead, stop) {
        const userTurn = await lead.runner.run(prompt, { idempotencyKey, signal: stop.signal });
        // A failed user turn ends the run; what the team still has to do stays
        // durable for `agent drain`.
        const quiet = wait && !userTurn.isError ? await runUntilQuiet(lead, stop.signal) : undefined;
        return { userTurn, quiet, teammates: lead.team.list(), waitingForLead: lead.inbox.size };
      },
      note(done, _outcome, info) {
        const left = wait ? undefined : leftForDrain(done.teammates, done.waitingForLead, info.sessionId);
        return left === undefined ? undefined : `not waiting for the team (--no-wait): ${left}`;
      },
    });
  },
});
