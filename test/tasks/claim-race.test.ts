// Two real processes, both waiting at a barrier, claim the same task at once,
// round after round: each time exactly one wins, the other is told who holds it,
// and the store names the winner. On both backends.
import { describe, expect, test } from "bun:test";
import { TaskStore } from "../../src/tasks/task-store.ts";
import { raceClaimers } from "../fixtures/task-claimer.ts";
import { backendRows } from "../support/store-backends.ts";

const ROUNDS = 10;

describe.each(backendRows())("claim race (%s store)", (_name, backend) => {
  test(
    "two processes racing to claim_task on one task: exactly one wins, every round",
    async () => {
      const session = await backend.session();
      const store = new TaskStore({ table: session.open().tasks });
      const ids: string[] = [];
      for (let n = 0; n < ROUNDS; n++) ids.push((await store.create({ subject: `contested ${n}` })).id);
      const [alpha, beta] = await raceClaimers(session.place, ["alpha", "beta"], ids);

      for (let round = 0; round < ROUNDS; round++) {
        const a = alpha![round]!;
        const b = beta![round]!;
        expect([a.won, b.won].filter(Boolean).length).toBe(1);
        const [winner, loser] = a.won ? [{ name: "alpha", ...a }, b] : [{ name: "beta", ...b }, a];
        expect(winner.content).toStartWith(`claimed ${winner.id} [in_progress, owner ${winner.name}]`);
        expect(loser.content).toBe(`task ${loser.id} is already claimed by ${winner.name}`);
        expect(await store.get(winner.id)).toMatchObject({ status: "in_progress", owner: winner.name });
      }
    },
    90_000,
  );
});
