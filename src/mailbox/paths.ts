import { join } from "node:path";
import type { AgentName } from "../core/agent-name.ts";
import type { MailboxState } from "../core/mailbox-state.ts";

/**
 * Where everything of the mailbox lives under a state dir:
 *
 *   mailboxes.lock                        cross-process lock for every transition
 *   mailboxes/.ids/<uuid>                 one per message id in the store, created exclusively (global
 *                                         uniqueness in O(1)); a hard link to the message's file
 *   mailboxes/<agent>/<state>/<uuid>.json one file per message; the directory is its state
 *   mailboxes/<agent>/index               a checksummed summary of the agent's messages, a cache of
 *                                         their files (see mailbox-index.ts)
 */
export class MailboxPaths {
  readonly root: string;
  readonly lock: string;
  readonly ids: string;

  constructor(readonly stateDir: string) {
    this.root = join(stateDir, "mailboxes");
    this.lock = join(stateDir, "mailboxes.lock");
    this.ids = join(this.root, ".ids");
  }

  // Plain concatenation, not join: every claim and ack builds several of these, and
  // the parts need no normalising (a normalised root, checked agent names, fixed
  // state names, canonical UUIDs).

  agentDir(agent: AgentName): string {
    return `${this.root}/${agent}`;
  }

  stateDirOf(agent: AgentName, state: MailboxState): string {
    return `${this.root}/${agent}/${state}`;
  }

  messageFile(agent: AgentName, state: MailboxState, id: string): string {
    return `${this.root}/${agent}/${state}/${fileNameOf(id)}`;
  }

  index(agent: AgentName): string {
    return `${this.root}/${agent}/index`;
  }

  idMarker(id: string): string {
    return `${this.ids}/${id}`;
  }
}

export function fileNameOf(id: string): string {
  return `${id}.json`;
}

export const REASON_SUFFIX = ".reason.json";
