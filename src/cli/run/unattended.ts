import { LEAD } from "../../core/agent-name.ts";
import type { RunEvent } from "../../runtime/run-types.ts";
import { type StoreSelection, displayStoreUrl } from "../../store/store-url.ts";
import type { TeamEvent } from "../../team/teammate-runtime.ts";

type Unattended = Extract<TeamEvent, { type: "unattended" }>;

/**
 * What a Lead with --remote-teammates says once a teammate's work has waited
 * with no worker to run it: the command that starts one for this session and
 * store (the URL with its password masked), as a warning of the Lead's.
 */
export function unattendedWarning(event: Unattended, sessionId: string, store: StoreSelection): RunEvent {
  const storeFlag = store.kind === "postgres" ? ` --store ${displayStoreUrl(store.url)}` : "";
  const waited = Math.round(event.waitingMs / 1000);
  return {
    type: "warning",
    agent: LEAD,
    message:
      `teammate ${event.name} has had work for ${waited} s but no worker holds it (this run has --remote-teammates); ` +
      `start one: \`agent worker --session ${sessionId}${storeFlag}\``,
  };
}

/** The team's events for a command's observers, an unattended teammate turned into that warning. */
export function teamEventsFor(
  observers: { observer?: (event: RunEvent) => void; teamObserver?: (event: TeamEvent) => void },
  sessionId: string,
  store: StoreSelection,
): ((event: TeamEvent) => void) | undefined {
  const { observer, teamObserver } = observers;
  if (!observer && !teamObserver) return undefined;
  return (event) => {
    if (event.type === "unattended") observer?.(unattendedWarning(event, sessionId, store));
    else teamObserver?.(event);
  };
}
