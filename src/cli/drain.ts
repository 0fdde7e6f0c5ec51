import { defineCommand } from "citty";
import { runUntilQuiet } from "../runtime/until-quiet.ts";
import { globalArgs } from "./args.ts";
import { runHeadless } from "./run/headless.ts";
import { headlessArgs, headlessSetup, runtimeArgs, verboseArg } from "./run/runtime-args.ts";

export const drainCommand = defineCommand({
  meta: {
    name: "drain",
    description: "Restore the team from disk and run the Lead's event turns until nothing waits for it and no teammate works",
  },
  args: { ...runtimeArgs, ...headlessArgs, ...globalArgs, ...verboseArg },
  async run({ args, rawArgs }) {
    const setup = headlessSetup(args, rawArgs);
    // Building the runtime does what a stopped one left: the teammates are
    // restored (their interrupted work back to ready/, the ones with work
    // started) and the Lead's waiting messages fed to its inbox. An event already
    // in the Lead's history (the last process died before its ack) is acked
    // without being appended again, and answered only if it never was.
    await runHeadless(setup, {
      async body(lead, stop) {
        return { quiet: await runUntilQuiet(lead, stop.signal), teammates: lead.team.list() };
      },
      note(_done, outcome) {
        if (outcome.result.isError || outcome.eventTurns > 0) return undefined;
        return outcome.events === 0
          ? `nothing to do: no messages wait for the Lead in ${setup.stateDir} and no teammate has work`
          : `acknowledged ${outcome.events} event(s) the Lead had already answered; nothing else to do`;
      },
    });
  },
});
