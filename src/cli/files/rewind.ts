import { defineCommand } from "citty";
import { LEAD } from "../../core/agent-name.ts";
import { systemClock } from "../../core/clock.ts";
import { FileLedger } from "../../file-journal/file-ledger.ts";
import { RewindRefusedError, applyRewind, planRewind } from "../../file-journal/rewind.ts";
import { HistoryStore } from "../../runtime/history-store.ts";
import { globalArgs, jsonArg, sessionArg } from "../args.ts";
import { writeJson, writeOut } from "../output.ts";
import { resolveWorkspace } from "../run/workspace.ts";
import { storeArg } from "../store/store-arg.ts";
import { withStoppedSession } from "../team/stopped-session.ts";
import { checkpoints, findCheckpoint } from "./checkpoints.ts";

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
    ...storeArg,
    ...jsonArg,
    ...globalArgs,
  },
  async run({ args }) {
    const workspace = resolveWorkspace(args.workspace);
    const { session, value } = await withStoppedSession(args, async (_session, stores) => {
      const checkpoint = findCheckpoint(await checkpoints(stores.stores.histories), args.to);
      const ledger = new FileLedger({ backend: stores.stores.files, clock: systemClock });
      const steps = await planRewind(ledger, workspace, checkpoint.at, args.agent);
      const fatal = steps.filter((step) => step.fatal);
      if (fatal.length > 0) throw new RewindRefusedError(fatal, false);
      const refused = steps.filter((step) => step.refused !== undefined);
      if (refused.length > 0 && !args.force && !args["dry-run"]) throw new RewindRefusedError(refused, true);
      const label = checkpoint.number !== undefined ? `turn ${checkpoint.number}` : `${checkpoint.agent}'s turn ${checkpoint.id}`;
      if (args["dry-run"] || steps.length === 0) {
        return { checkpoint, label, done: steps.map((step) => `${step.target ? "would restore" : "would remove"} ${step.path}${step.refused ? ` (${step.refused}: needs --force)` : ""}`) };
      }
      const done = await applyRewind(ledger, workspace, steps, `rewind-${checkpoint.id}`);
      // Told to the Lead, so its next turn knows the files are not what it last saw.
      const history = await HistoryStore.open(stores.stores.histories, LEAD);
      try {
        await history.appendMessages(
          [{ role: "user", content: `[agent rewind] The user put the workspace's files back as they were before ${label}: ${done.join("; ")}. Read a file again before changing it.` }],
          systemClock.now(),
        );
      } finally {
        history.close();
      }
      return { checkpoint, label, done };
    });
    if (args.json) {
      await writeJson({ session_id: session.meta.id, checkpoint: value.checkpoint, dry_run: Boolean(args["dry-run"]), files: value.done });
      return;
    }
    if (value.done.length === 0) {
      await writeOut(`nothing to rewind: no file the agents changed since ${value.label} differs from how it was (session ${session.meta.id})\n`);
      return;
    }
    await writeOut(`${args["dry-run"] ? "would rewind" : "rewound"} to before ${value.label} in session ${session.meta.id}:\n${value.done.map((line) => `  ${line}\n`).join("")}`);
  },
});
