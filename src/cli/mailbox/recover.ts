import { defineCommand } from "citty";
import { type AgentName, LEAD, assertAgentName } from "../../core/agent-name.ts";
import { StateDirBusyError, UnknownAgentError } from "../../core/errors.ts";
import type { RecoverResult } from "../../mailbox/store.ts";
import { UNKNOWN_OWNER, readRuntimeOwner } from "../../storage/runtime-lock.ts";
import { agentFilterArg, globalArgs, jsonArg, sessionArg } from "../args.ts";
import { findAdminSession } from "../context.ts";
import { openSessionMailbox } from "../session-mailbox.ts";
import { storeArg } from "../store/store-arg.ts";
import { writeJson, writeOut } from "../output.ts";

export const recoverCommand = defineCommand({
  meta: {
    name: "recover",
    description: "Move processing messages back to ready (refused while a live runtime owns the state dir)",
  },
  args: {
    ...agentFilterArg,
    force: { type: "boolean", description: "Recover even while a live runtime owns the state dir" },
    ...sessionArg,
    ...storeArg,
    ...jsonArg,
    ...globalArgs,
  },
  async run({ args }) {
    const agent = args.agent === undefined ? undefined : assertAgentName(args.agent);
    const session = findAdminSession(args);
    const stateDir = session?.dir;
    const mailbox = session === undefined ? undefined : await openSessionMailbox(session, args, { configured: true });
    const store = mailbox?.store;
    try {
      const known = store ? await store.agents() : [];
      if (agent !== undefined && agent !== LEAD && !known.includes(agent)) throw new UnknownAgentError(agent);
      // A live runtime's processing/ holds work in progress: moving it back to ready
      // would have it done twice.
      if (!args.force && stateDir !== undefined) {
        // This machine's runtime, or with a PostgreSQL store a Lead on any machine.
        const owner = (await readRuntimeOwner(stateDir)) ?? (await mailbox?.sharedOwner?.()) ?? null;
        if (owner) {
          throw new StateDirBusyError(
            stateDir,
            owner.pid === UNKNOWN_OWNER.pid ? undefined : owner,
            "its processing messages are in progress; stop it first, or pass --force if you are sure it is not working on them",
          );
        }
      }
      const result: RecoverResult = { recovered: [], skipped: [] };
      const targets: AgentName[] = agent === undefined ? known : known.filter((name) => name === agent);
      for (const name of store ? targets : []) {
        const one = await (store as NonNullable<typeof store>).recover(name);
        result.recovered.push(...one.recovered);
        result.skipped.push(...one.skipped);
      }
      if (args.json) await writeJson(result);
      else await writeOut(recoverText(result));
    } finally {
      await mailbox?.close();
    }
  },
});

function recoverText({ recovered, skipped }: RecoverResult): string {
  const lines = [`recovered ${recovered.length} message(s) to ready/`];
  for (const r of recovered) lines.push(`  ${r.agent}  ${r.id}`);
  if (skipped.length > 0) lines.push(`skipped ${skipped.length}:`);
  for (const s of skipped) lines.push(`  ${s.agent}  ${s.file}  ${s.reason}`);
  return `${lines.join("\n")}\n`;
}
