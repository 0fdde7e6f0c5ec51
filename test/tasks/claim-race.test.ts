// Two real processes claim the same task at the same wall-clock instant, round
// after round: each time exactly one wins, the other is told who holds it, and
// the file names the winner.
import { expect, test } from "bun:test";
import { runClaimer } from "../fixtures/task-claimer.ts";
import { taskStore } from "./helpers.ts";

const ROUNDS = 10;

test(
  "two processes racing to claim_task on one task: exactly one wins, every round",
  async () => {
    const { store, stateDir } = taskStore();
    const ids: string[] = [];
    for (let n = 0; n < ROUNDS; n++) ids.push((await store.create({ subject: `contested ${n}` })).id);
    // Far enough ahead for both children to start (bun, zod, the store) before round 0.
    const config = { ids, startAt: Date.now() + 2_000, stepMs: 200 };
    const [alpha, beta] = await Promise.all([runClaimer(stateDir, "alpha", config), runClaimer(stateDir, "beta", config)]);

    for (let round = 0; round < ROUNDS; round++) {
      const a = alpha![round]!;
      const b = beta![round]!;
      expect([a.early, b.early]).toEqual([true, true]);
      expect([a.won, b.won].filter(Boolean).length).toBe(1);
      const [winner, loser] = a.won ? [{ name: "alpha", ...a }, b] : [{ name: "beta", ...b }, a];
      expect(winner.content).toStartWith(`claimed ${winner.id} [in_progress, owner ${winner.name}]`);
      expect(loser.content).toBe(`task ${loser.id} is already claimed by ${winner.name}`);
      expect(await store.get(winner.id)).toMatchObject({ status: "in_progress", owner: winner.name });
    }
  },
  30_000,
);
