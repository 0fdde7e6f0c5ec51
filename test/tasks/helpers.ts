import { join } from "node:path";
import { ManualClock } from "../../src/core/clock.ts";
import { FileTaskStore, TaskStore } from "../../src/tasks/task-store.ts";
import type { StoreBackend } from "../support/store-backends.ts";
import { tempDir } from "../support/temp-dir.ts";

/** A store on a fresh state dir with a clock that moves only when told to. */
export function taskStore() {
  const stateDir = join(tempDir("agent-tasks-"), "state");
  const clock = new ManualClock("2026-03-01T09:00:00.000Z");
  return { stateDir, clock, store: new FileTaskStore({ stateDir, clock }) };
}

/** The error a store call rejects with; fails when it resolves. */
export function refusal(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    (value) => {
      throw new Error(`expected a refusal, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error as Error,
  );
}

/** A task store on a fresh session of `backend`, with a clock that moves only when told to. */
export async function taskStoreOn(backend: StoreBackend) {
  const session = await backend.session();
  const clock = new ManualClock("2026-03-01T09:00:00.000Z");
  return { session, clock, store: new TaskStore({ table: session.open().tasks, clock }) };
}
