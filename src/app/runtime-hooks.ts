import { basename, join } from "node:path";
import { LEAD } from "../core/agent-name.ts";
import type { HookSession } from "../hooks/claude-protocol.ts";
import { HookNotices } from "../hooks/hook-notices.ts";
import { ShellHooks } from "../hooks/hook-runner.ts";
import { HookChain } from "../hooks/hook-chain.ts";
import type { SessionHooks } from "../hooks/types.ts";
import { TeamGates } from "../hooks/team-gates.ts";
import type { PermissionAsker } from "../permissions/policy.ts";
import type { TeamEvent } from "../team/teammate-runtime.ts";
import type { LeadContext, RuntimeBase } from "./runtime-context.ts";
import type { Settings } from "../config/load.ts";
import { hookCommandLines } from "../config/configured-commands.ts";

/** The runtime's hooks, and where they listen in: a question for the user, the team's events. */
export interface RuntimeHooks {
  /** The config's command hooks, then the driving program's (LeadContext.hostHooks). */
  hooks: SessionHooks;
  notices: HookNotices;
  /** TeammateIdle, TaskCreated and TaskCompleted: awaited where they happen, as they may refuse. */
  gates: TeamGates;
  /** The caller's asker, firing Notification first; absent when headless. */
  asker?: PermissionAsker;
  teamObserver: (event: TeamEvent) => void;
  /** Every hook's command line: the fence guards the files they name. */
  commands: string[];
  /** The Lead's user turn `key` begins: the hooks' `prompt_id` from now on. */
  promptStarted: (key: string) => void;
}

export function wireHooks({ settings, context, closers, warn }: RuntimeBase): RuntimeHooks {
  let prompt: string | undefined;
  const session: HookSession = { ...hookSession(settings, context), promptId: () => prompt };
  const shell = new ShellHooks(settings.hooks, {
    env: settings.shell.env,
    ...(context.sandbox ? { sandbox: context.sandbox } : {}),
    session,
  });
  const hooks = context.hostHooks ? new HookChain([shell, context.hostHooks(session)]) : shell;
  const notices = new HookNotices(hooks, context.workspace, warn(LEAD));
  // Waited for last of all (closers run newest first): a notice started while the team closed still ends.
  closers.push(() => notices.settle());
  // Claude Code's Notification: the agent waits for a person's answer.
  const asker: PermissionAsker | undefined = context.asker
    ? (request, signal) => {
        notices.fire("Notification", { identity: request.identity, message: `agent needs your permission to use ${request.tool}` });
        return context.asker!(request, signal);
      }
    : undefined;
  const teamObserver = (event: TeamEvent) => context.teamObserver?.(event);
  const gates = new TeamGates({ hooks, workspace: context.workspace, warn, lead: LEAD });
  const commands = hookCommandLines(settings);
  const promptStarted = (key: string) => {
    prompt = key;
  };
  return { hooks, notices, gates, ...(asker ? { asker } : {}), teamObserver, commands, promptStarted };
}

/** Who the hooks' events belong to, as Claude Code's `session_id`, `transcript_path` and `permission_mode`. */
function hookSession(settings: Settings, context: LeadContext): HookSession {
  // The file stores keep each agent's history as JSON lines; PostgreSQL's has no file, and a subagent's lives in memory.
  const files = settings.store.kind !== "postgres";
  return {
    id: context.sessionId ?? basename(context.stateDir),
    permissionMode: settings.permissionMode,
    ...(files ? { transcriptPath: (identity: string) => (identity.includes("/") ? undefined : join(context.stateDir, "agents", `${identity}.jsonl`)) } : {}),
  };
}
