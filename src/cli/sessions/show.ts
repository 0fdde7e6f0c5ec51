import { defineCommand } from "citty";
import { UsageError } from "../../core/errors.ts";
import { loadSettings } from "../../config/load.ts";
import { SessionStore } from "../../sessions/session-store.ts";
import { type TimelineEntry, formatTimeline, sessionTimeline } from "../../timeline/session-timeline.ts";
import { type AgentUsage, type UsageReport, reportJson } from "../../usage/agent-usage.ts";
import { readSessionUsage } from "../../usage/usage-ledger.ts";
import { globalArgs, jsonArg } from "../args.ts";
import { resolveStateDir } from "../context.ts";
import { openAdminStores } from "../store/session-stores.ts";
import { storeArg } from "../store/store-arg.ts";
import { formatTable, printable, writeJson, writeOut } from "../output.ts";

export const sessionsShowCommand = defineCommand({
  meta: { name: "show", description: "One session: its usage and cost per agent over every run, or its timeline" },
  args: {
    id: { type: "positional", required: true, valueHint: "id", description: "Session: short id, id, unique id prefix or name" },
    timeline: { type: "boolean", description: "The turns, messages and tool calls of every agent, in time order" },
    follow: {
      type: "boolean",
      description: "Print one agent's tool calls, results, answers and new mail as they happen, until the session's runtime is gone (read only; see docs/terminal.md#following-an-agent)",
    },
    agent: { type: "string", valueHint: "name", description: "With --follow: the teammate to follow (default: the Lead)" },
    ...storeArg,
    ...jsonArg,
    ...globalArgs,
  },
  async run({ args }) {
    const root = resolveStateDir(args);
    const store = new SessionStore(root);
    const meta = store.find(args.id);
    const dir = store.dirOf(meta.id);
    if (args.agent !== undefined && !args.follow) throw new UsageError("--agent goes with --follow: `agent sessions show ID --follow --agent NAME`");
    if (args.follow) {
      if (args.timeline) throw new UsageError("--follow and --timeline do not go together: --timeline prints every agent once, --follow one agent as it goes");
      const { followSession } = await import("./follow.ts");
      await followSession(args, { root, meta, dir });
      return;
    }
    // Prices come from the config of the directory it is run in, as for `agent run` there.
    const { pricing } = loadSettings({ workspace: process.cwd() }).settings;
    // Both read the histories, in the store the session's runs used (--store, AGENT_STORE, config):
    // they hold the usage an OS crash may have taken from usage.jsonl.
    const opened = await openAdminStores(args, { root, meta, dir });
    let usage: UsageReport;
    let timeline: TimelineEntry[] | undefined;
    try {
      usage = readSessionUsage(dir, pricing, await opened.stores.histories.carriedUsage());
      timeline = args.timeline ? await sessionTimeline(dir, opened.stores.histories) : undefined;
    } finally {
      await opened.close();
    }
    if (args.json) {
      await writeJson({
        session_id: meta.id,
        name: meta.name ?? null,
        created_at_utc: meta.createdAtUtc,
        last_used_at_utc: meta.lastUsedAtUtc,
        first_prompt: meta.firstPrompt ?? null,
        ...reportJson(usage),
        ...(timeline ? { timeline } : {}),
      });
      return;
    }
    if (timeline) {
      await writeOut(timeline.length === 0 ? `session ${meta.id} has no history yet\n` : formatTimeline(timeline));
      return;
    }
    const header = [
      `session     ${meta.id}${meta.name === undefined ? "" : ` (${meta.name})`}`,
      `created     ${meta.createdAtUtc}`,
      `last used   ${meta.lastUsedAtUtc}`,
      ...(meta.firstPrompt === undefined ? [] : [`prompt      ${printable(meta.firstPrompt)}`]),
    ];
    const row = (name: string, u: AgentUsage) => [
      name,
      String(u.inputTokens),
      u.cachedInputTokens === undefined ? "-" : String(u.cachedInputTokens),
      String(u.outputTokens),
      String(u.modelCalls),
      String(u.toolCalls),
      `${(u.busyMs / 1000).toFixed(1)}s`,
      u.costUsd === undefined ? "unknown price" : u.costUsd.toFixed(4),
    ];
    const table = formatTable([
      ["AGENT", "INPUT", "CACHED", "OUTPUT", "MODEL CALLS", "TOOL CALLS", "BUSY", "COST (USD)"],
      ...Object.entries(usage.byAgent).map(([name, u]) => row(name, u)),
      row("total", usage.total),
    ]);
    await writeOut(`${header.join("\n")}\n\n${table}`);
  },
});

