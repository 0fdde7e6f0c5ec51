import { defineCommand } from "citty";
import { systemClock } from "../../core/clock.ts";
import { archiveHistory } from "../../team/teammate-archive.ts";
import { TeammateUnavailableError } from "../../team/teammate-runtime.ts";
import { globalArgs, jsonArg, sessionArg } from "../args.ts";
import { openMailboxStoreAsConfigured } from "../context.ts";
import { writeJson, writeOut } from "../output.ts";
import { editStoppedTeammate } from "./stopped-session.ts";

export const teamRmCommand = defineCommand({
  meta: {
    name: "rm",
    description: "Remove a shut-down or failed teammate from a stopped session, freeing its name (its history is kept aside)",
  },
  args: {
    name: { type: "positional", required: true, valueHint: "name", description: "The teammate to remove" },
    force: { type: "boolean", description: "Remove it even with unfinished work (moved to its quarantine/)" },
    ...sessionArg,
    ...jsonArg,
    ...globalArgs,
  },
  async run({ args }) {
    const name = args.name;
    const { session, value: outcome } = await editStoppedTeammate(args, async (teammate, { session, registry, teammates }) => {
      const store = await openMailboxStoreAsConfigured(session.dir);
      const listing = (await store.list()).find((l) => l.name === name);
      const unfinished = (listing?.counts.ready ?? 0) + (listing?.counts.processing ?? 0);
      // "running" on disk in a stopped session: its runtime stopped mid-task and
      // `agent drain` would carry the work on.
      if ((teammate.state === "running" || unfinished > 0) && !args.force) {
        throw new TeammateUnavailableError(
          `teammate ${name} has unfinished work (state ${teammate.state}, ${unfinished} message(s) in ready/ or processing/); ` +
            "run `agent drain` to finish it, or pass --force to remove it anyway (its messages go to its quarantine/)",
        );
      }
      // Its unfinished messages stay as evidence in quarantine/, never deleted.
      const quarantined: string[] = [];
      if (unfinished > 0) {
        await store.recover(name);
        for (let message = await store.claim(name); message; message = await store.claim(name)) {
          await store.quarantine(message, `teammate ${name} removed with \`agent team rm --force\``);
          quarantined.push(message.id);
        }
      }
      const history = archiveHistory(session.dir, name, systemClock.now());
      // team.json last: a removal cut short is finished by running it again.
      registry.write(teammates.filter((t) => t.name !== name));
      return { state: teammate.state, history, quarantined };
    });
    if (args.json) {
      await writeJson({ session_id: session.meta.id, removed: name, ...outcome, history: outcome.history ?? null });
      return;
    }
    const notes = [
      outcome.history ? `history kept at ${outcome.history}` : "it had no history",
      ...(outcome.quarantined.length > 0 ? [`${outcome.quarantined.length} unfinished message(s) moved to its quarantine/`] : []),
    ];
    await writeOut(`removed ${name} (${outcome.state}) from session ${session.meta.id}; ${notes.join("; ")}\n`);
  },
});
