import type { HookEvent } from "../config/config.ts";
import type { Hooks } from "./types.ts";

/**
 * Hooks for events nothing waits on (Notification, SessionEnd): started
 * without holding up the agent, their
 * warnings reported, and awaited by `settle()` when the runtime closes so
 * none is cut off half run. What they answer cannot block anything.
 */
export class HookNotices {
  readonly #hooks: Hooks & { has(event: HookEvent): boolean };
  readonly #workspace: string;
  readonly #warn: (message: string) => void;
  readonly #pending = new Set<Promise<void>>();

  constructor(hooks: Hooks & { has(event: HookEvent): boolean }, workspace: string, warn: (message: string) => void) {
    this.#hooks = hooks;
    this.#workspace = workspace;
    this.#warn = warn;
  }

  fire(event: HookEvent, payload: Record<string, unknown>): void {
    if (!this.#hooks.has(event)) return;
    const run = this.#hooks
      .run(event, payload, { workspace: this.#workspace })
      .then((outcome) => outcome.warnings.forEach(this.#warn))
      .catch((error: unknown) => this.#warn(`${event} hooks failed: ${(error as Error).message}`))
      .finally(() => this.#pending.delete(run));
    this.#pending.add(run);
  }

  /** Runs `event`'s hooks and waits for them (SessionEnd, at close). */
  async run(event: HookEvent, payload: Record<string, unknown>): Promise<void> {
    this.fire(event, payload);
    await this.settle();
  }

  async settle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }
}
