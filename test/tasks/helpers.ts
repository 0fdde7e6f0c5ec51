import { join } from "node:path";
import { ManualClock } from "../../src/core/clock.ts";
import { FileTaskStore } from "../../src/tasks/task-store.ts";
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
