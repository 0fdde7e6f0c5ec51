import { defineCommand } from "citty";
import { LEAD } from "../../core/agent-name.ts";
import { systemClock } from "../../core/clock.ts";
import { FileLedger } from "../../file-journal/file-ledger.ts";
import { HistoryStore } from "../../runtime/history-store.ts";
import { readRunFlags } from "../../sessions/run-flags.ts";
import { SessionStore } from "../../sessions/session-store.ts";
import { globalArgs, jsonArg, sessionArg } from "../args.ts";
import { writeJson, writeOut } from "../output.ts";
import { resolveWorkspace } from "../run/workspace.ts";
import { storeArg } from "../store/store-arg.ts";
import { repeatedValues } from "../argv.ts";
import { withStoppedSession } from "../team/stopped-session.ts";
import { rewindFiles, rewindText } from "./rewind-files.ts";
import { rewindWriter } from "./rewind-writer.ts";

export const rewindCommand = defineCommand({
  meta: {
    name: "rewind",
    description: "Put the files the agents changed since a checkpoint back as they were just before it, in a stopped session (docs/files.md)",
  },
  args: {
    ...sessionArg,
    to: { type: "string", required: true, valueHint: "N|id", description: "The checkpoint: a Lead turn's number (agent changes lists them) or a turn's id" },
    agent: { type: "string", valueHint: "name", description: "Only the files this agent changed" },
    "dry-run": { type: "boolean", description: "Say what would be restored; change nothing" },
    force: { type: "boolean", description: "Also restore files changed since from outside the agents (or by another agent), losing those changes" },
    "include-guarded": {
      type: "string",
      valueHint: "path",
      description: "Also put back this guarded file (git's files, the agent's config, a hook's script), named by its path in the workspace; may be repeated",
    },
    ...storeArg,
    ...jsonArg,
    ...globalArgs,
  },
  async run({ args, rawArgs }) {
    const workspace = resolveWorkspace(args.workspace);
    const dryRun = Boolean(args["dry-run"]);
    // Only what this user's own sessions journaled is replayed: a foreign one (committed to the repository) is refused, as drain refuses it.
    const { session, value } = await withStoppedSession(args, { own: true }, async (session, { stores }) =>
      rewindFiles({
        ledger: new FileLedger({ backend: stores.files, clock: systemClock }),
        histories: stores.histories,
        writer: rewindWriter({
          workspace,
          stateRoot: session.root,
          // Files of the run's --add-dir directories come back too, while it still adds them.
          addDirs: readRunFlags(session.dir, session.meta.id, new SessionStore(session.root).marker)?.addDirs ?? [],
          named: repeatedValues(rawArgs, "include-guarded") ?? [],
        }),
        to: args.to,
        ...(args.agent !== undefined ? { agent: args.agent } : {}),
        dryRun,
        force: Boolean(args.force),
        note: async (text, at) => {
          const history = await HistoryStore.open(stores.histories, LEAD);
          try {
            await history.appendMessages([{ role: "user", content: text }], at);
          } finally {
            history.close();
          }
        },
      }),
    );
    if (args.json) {
      await writeJson({ session_id: session.meta.id, checkpoint: value.checkpoint, dry_run: dryRun, files: value.done });
      return;
    }
    await writeOut(rewindText(value, dryRun, session.meta.id));
  },
});
