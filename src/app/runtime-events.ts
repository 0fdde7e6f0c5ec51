import { type AgentName, LEAD } from "../core/agent-name.ts";
import { CronRuntime } from "../cron/cron-runtime.ts";
import { CronStore } from "../cron/cron-store.ts";
import { EventInbox } from "../runtime/event-inbox.ts";
import { HistoryStore } from "../runtime/history-store.ts";
import { JobSupervisor } from "../runtime/job-supervisor.ts";
import { BackgroundJobs } from "../tools/background-jobs.ts";
import type { RuntimeBase } from "./runtime-context.ts";
import type { StateStores } from "./state-stores.ts";

/** The one event queue and owner of background work every component shares, what feeds them, and the agents' histories. */
export interface RuntimeEvents {
  inbox: EventInbox;
  supervisor: JobSupervisor;
  cron: CronRuntime;
  background: BackgroundJobs;
  /** Opens an agent's history (closed with the runtime), warning of what opening repaired. */
  openHistory: (agent: AgentName) => Promise<HistoryStore>;
}

export function wireEvents({ settings, context, clock, ids, closers, warn }: RuntimeBase, stores: StateStores): RuntimeEvents {
  // The histories open now: a teammate's is closed when it goes idle (and opened
  // again, read back whole, by its next message), so one closed leaves the set —
  // kept, every rebuild's copy of the conversation stayed until the runtime closed.
  const histories = new Set<HistoryStore>();
  closers.push(() => {
    for (const history of [...histories]) history.close();
  });
  const inbox = new EventInbox();
  // Runs after the teammates and the supervisor are closed (they are newer), so
  // nothing publishes any more: what the Lead never processed goes back to ready/.
  closers.push(() => inbox.releaseAll());
  const supervisor = new JobSupervisor((name, error) => warn(LEAD)(`${name} stopped: ${(error as Error).message}`));
  closers.push(() => supervisor.close());
  const openHistory = async (agent: AgentName) => {
    const history: HistoryStore = await HistoryStore.open(stores.histories, agent, () => histories.delete(history));
    histories.add(history);
    if (history.repaired) warn(agent)(history.repaired);
    return history;
  };
  const cron = new CronRuntime({
    inbox,
    supervisor,
    store: new CronStore(stores.cron),
    clock,
    ids,
    onError: (error) => warn(LEAD)(`cron: ${(error as Error).message}`),
  });
  closers.push(() => cron.close());
  const background = new BackgroundJobs({ inbox, supervisor, clock, ids, env: settings.shell.env, ...(context.sandbox ? { sandbox: context.sandbox } : {}) });
  closers.push(() => background.close());
  return { inbox, supervisor, cron, background, openHistory };
}
