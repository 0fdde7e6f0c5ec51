import { defineCommand } from "citty";
import { UsageError } from "../core/errors.ts";
import { uuidV7Source } from "../core/ids.ts";
import { globalArgs } from "./args.ts";
import { compatArgs } from "./run/compat-flags.ts";
import { runHeadless } from "./run/headless.ts";
import { processStdin, readPrompt } from "./run/prompt.ts";
import { configuredContentCap } from "./session-mailbox.ts";
import { headlessArgs, headlessSetup, runtimeArgs, sessionArgs, verboseArg } from "./run/runtime-args.ts";
import { userMessages } from "./run/stream-input.ts";
import { leftForDrain } from "./run/team-outcome.ts";
import { type UserTurnsDone, runUserTurns } from "./run/user-turns.ts";
import { askTrustOnTerminal } from "./trust-question.ts";

export const runCommand = defineCommand({
  meta: {
    name: "run",
    description:
      "Run one Lead user turn headless in a new session (or the one -c/--resume/--session names), then its team's event turns until the team is quiet; `agent exec` and `agent -p` are the same command",
  },
  args: {
    // Upper case: the flag --prompt already has the key "prompt". citty also copies
    // --prompt into PROMPT, so the operand is read from `args._` below.
    PROMPT: { type: "positional", required: false, valueHint: "prompt", description: "What to do; - reads it from stdin, as does leaving it out with data piped in" },
    prompt: { type: "string", valueHint: "text", description: "The prompt, instead of PROMPT; - reads it from stdin" },
    ...sessionArgs,
    ...runtimeArgs,
    ...headlessArgs,
    "no-wait": { type: "boolean", description: "Return after the user turn; teammates' messages wait in the mailbox for `agent drain`" },
    ...compatArgs,
    ...globalArgs,
    ...verboseArg,
  },
  async run({ args, rawArgs }) {
    await askTrustOnTerminal(args);
    const setup = headlessSetup(args, rawArgs);
    // citty reads any `--no-X` as `X: false` and leaves "no-wait" unset.
    const wait = !(args["no-wait"] === true || (args as { wait?: boolean }).wait === false);
    const streamed = setup.inputFormat === "stream-json";
    if (streamed && (args._[0] !== undefined || args.prompt !== undefined)) {
      throw new UsageError("--input-format stream-json reads the prompts from stdin; give no PROMPT or --prompt");
    }
    // Read before the lock is taken: a slow pipe must not hold the state dir.
    // Streamed messages arrive while the session runs, one turn each.
    const prompt = streamed ? undefined : await readPrompt({ positional: args._[0], flag: args.prompt }, processStdin(() => configuredContentCap(args.workspace)));
    const prompts = prompt !== undefined ? once(prompt) : userMessages(Bun.stdin.stream());
    const idempotencyKey = uuidV7Source.next();
    await runHeadless<UserTurnsDone>(setup, {
      idempotencyKey,
      body: (lead, stop, turnEnded, session) =>
        runUserTurns(lead, prompts, {
          firstKey: idempotencyKey,
          wait,
          signal: stop.signal,
          onAccepted: (accepted) => session.accepted(accepted),
          ...(setup.answerSchema ? { schema: setup.answerSchema } : {}),
          ...(streamed ? { turnEnded } : {}),
        }),
      note(done, _outcome, info) {
        const left = wait ? undefined : leftForDrain(done.teammates, done.waitingForLead, info.sessionId);
        return left === undefined ? undefined : `not waiting for the team (--no-wait): ${left}`;
      },
    });
  },
});

async function* once(prompt: string): AsyncGenerator<string> {
  yield prompt;
}
