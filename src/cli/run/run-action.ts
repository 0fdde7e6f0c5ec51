import type { CommandContext } from "citty";
import { UsageError } from "../../core/errors.ts";
import { uuidV7Source } from "../../core/ids.ts";
import type { runArgs } from "../run.ts";
import { processStdin, readPrompt } from "./prompt.ts";
import { configuredContentCap } from "../session-mailbox.ts";
import { headlessSetup } from "./runtime-args.ts";
import { userMessages } from "./stream-input.ts";
import { leftForDrain } from "./team-outcome.ts";
import type { UserTurnsDone } from "./user-turns.ts";
import { askTrustOnTerminal } from "../trust-question.ts";
import { modelClientOptions } from "../../config/load.ts";
import { preconnectModel } from "../../model/preconnect.ts";
import { sdkClient, withInitialize } from "./sdk-client.ts";

// What `agent run` does, loaded only when it runs: `agent run --help` reads the
// command's arguments (src/cli/run.ts) without loading the runtime behind them.

/** Runs the user turn(s) of `agent run` and the team's event turns after them. */
export async function runAction({ args, rawArgs }: CommandContext<typeof runArgs>): Promise<void> {
  await askTrustOnTerminal(args);
  if (args["input-format"] === "stream-json" && (args._[0] !== undefined || args.prompt !== undefined)) {
    throw new UsageError("--input-format stream-json reads the prompts from stdin; give no PROMPT or --prompt");
  }
  if (args["permission-prompt-tool"] !== undefined && (args["input-format"] !== "stream-json" || args["output-format"] !== "stream-json")) {
    throw new UsageError("--permission-prompt-tool stdio asks over stdin and stdout: give it with --input-format stream-json --output-format stream-json");
  }
  // The Claude Agent SDK's first line (initialize) carries the system prompt: read before the settings.
  const sdk = await sdkClient(args);
  const setup = headlessSetup(sdk ? withInitialize(args, sdk.control.initialize) : args, rawArgs);
  const agents = Object.keys(sdk?.control.initialize?.agents ?? {});
  if (agents.length > 0) setup.warnings.push(`the SDK's agents (${agents.join(", ")}) are not run here: the Lead's task tool and teammates take their place (docs/compat.md)`);
  // Trust is settled and the endpoint known: its handshake overlaps the session's set-up.
  preconnectModel(modelClientOptions(setup.settings), process.env);
  // The runtime's modules are evaluated after the set-up has started the
  // sandbox's probe, which then runs on another core meanwhile.
  const runtime = Promise.all([import("./headless.ts"), import("./user-turns.ts")]);
  // citty reads any `--no-X` as `X: false` and leaves "no-wait" unset.
  const wait = !(args["no-wait"] === true || (args as { wait?: boolean }).wait === false);
  const streamed = setup.inputFormat === "stream-json";
  // Read before the lock is taken: a slow pipe must not hold the state dir.
  // Streamed messages arrive while the session runs, one turn each.
  const stdin = processStdin(() => configuredContentCap(args.workspace));
  const prompt = streamed ? undefined : await readPrompt({ positional: args._[0], flag: args.prompt }, stdin, (warning) => setup.warnings.push(warning));
  const prompts = prompt !== undefined ? once(prompt) : sdk ? sdk.control.prompts() : userMessages(Bun.stdin.stream());
  const idempotencyKey = uuidV7Source.next();
  const [{ runHeadless }, { runUserTurns }] = await runtime;
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
        ...(sdk ? { client: sdk.control } : {}),
      }),
    ...(sdk ? { client: sdk.frame(setup.settings.model) } : {}),
    note(done, outcome, info) {
      // Stopped by Ctrl-C, SIGTERM or --timeout, what is left is said as for --no-wait: drain finishes it.
      const interrupted = outcome.result.subtype === "error_interrupted";
      const left = wait && !interrupted ? undefined : leftForDrain(done.teammates, done.waitingForLead, info.sessionId);
      if (left === undefined) return undefined;
      return interrupted ? `interrupted: ${left}` : `not waiting for the team (--no-wait): ${left}`;
    },
  });
}

async function* once(prompt: string): AsyncGenerator<string> {
  yield prompt;
}
