import { statSync } from "node:fs";
import type { AgentName } from "../core/agent-name.ts";
import { MailboxPaths } from "./paths.ts";
import type { MailWakeups, MailWatch } from "./wakeups.ts";

/** How often the file store's `ready/` directories are looked at. */
const FILE_POLL_MS = 50;

/**
 * MailWakeups for the file store: every send, release and recover links or renames
 * into `ready/`, which changes that directory's modification time — one `stat`
 * per watched agent per poll sees it.
 */
export class FileMailWakeups implements MailWakeups {
  readonly #paths: MailboxPaths;
  readonly #pollMs: number;
  readonly #watchers = new Set<{ dir: string; seen: number; wake: () => void }>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(options: { stateDir: string; pollMs?: number }) {
    this.#paths = new MailboxPaths(options.stateDir);
    this.#pollMs = options.pollMs ?? FILE_POLL_MS;
  }

  async watch(agent: AgentName, wake: () => void): Promise<MailWatch> {
    const dir = this.#paths.stateDirOf(agent, "ready");
    const watcher = { dir, seen: mtimeOf(dir), wake };
    this.#watchers.add(watcher);
    this.#timer ??= setInterval(() => this.#poll(), this.#pollMs);
    this.#timer.unref?.();
    return { stop: () => this.#watchers.delete(watcher) };
  }

  async close(): Promise<void> {
    this.#watchers.clear();
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #poll(): void {
    for (const watcher of this.#watchers) {
      const now = mtimeOf(watcher.dir);
      if (now === watcher.seen) continue;
      watcher.seen = now;
      watcher.wake();
    }
  }
}

function mtimeOf(dir: string): number {
  try {
    return statSync(dir).mtimeMs;
  } catch {
    return 0;
  }
}
