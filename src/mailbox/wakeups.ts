import type { AgentName } from "../core/agent-name.ts";

/** One agent's registration with MailWakeups; `stop()` ends it. */
export interface MailWatch {
  stop(): void;
}

/**
 * Tells a consumer in one process that mail may have arrived from another: the
 * sender's process pokes its own consumers directly, but a Lead whose teammates
 * run elsewhere (or a worker waiting for tasks) has nothing to poke it. A wake-up
 * is a hint, never a delivery — the woken consumer claims, and a claim that finds
 * nothing is harmless — so spurious ones are allowed and a missed one is made up
 * by a slow poll.
 */
export interface MailWakeups {
  /** Calls `wake` soon after a message becomes ready for `agent` in this store, whoever sent it. */
  watch(agent: AgentName, wake: () => void): Promise<MailWatch>;
  close(): Promise<void>;
}
