// Several real processes send and claim on one store at once — a state dir, or a
// PostgreSQL database: every message is claimed exactly once, none is lost, and
// everything ends done.
import { afterEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  duplicatesIn,
  errorsOf,
  idsIn,
  idsOf,
  censusOf,
  startWorker,
  type Worker,
} from "../fixtures/mailbox-worker.ts";
import { type MailboxBackend, mailboxBackends } from "./backends.ts";
import { tempDir } from "../support/temp-dir.ts";

const started: Worker[] = [];

afterEach(async () => {
  for (const worker of started.splice(0)) {
    worker.child.kill("SIGKILL");
    await worker.finished;
  }
});

interface Plan {
  senders: number;
  perSender: number;
  to: string[];
  claimers: number;
  /** The claimers ack each message with the next claim (ackAndClaim). */
  combined?: boolean;
}

/** Runs the senders and claimers of `plan` together; returns them once all exited. */
async function run(plan: Plan, backend: MailboxBackend) {
  const place = await backend.place();
  const stopFile = join(tempDir("agent-mailbox-mp-"), "senders-done");
  const claimers = Array.from({ length: plan.claimers }, () =>
    startWorker("claim", place, { agents: plan.to, stopFile, combined: plan.combined ?? false }),
  );
  const senders = Array.from({ length: plan.senders }, (_, i) => {
    // Each sender starts at another agent, so every mailbox has several writers at once.
    const first = i % plan.to.length;
    const to = [...plan.to.slice(first), ...plan.to.slice(0, first)];
    return startWorker("send", place, { tag: `p${i}`, to, count: plan.perSender });
  });
  started.push(...claimers, ...senders);
  for (const sender of senders) expect(await sender.finished).toMatchObject({ exitCode: 0 });
  writeFileSync(stopFile, "");
  for (const claimer of claimers) expect(await claimer.finished).toMatchObject({ exitCode: 0 });
  return { place, senders, claimers };
}

async function expectEachClaimedOnceAndDone(result: Awaited<ReturnType<typeof run>>, plan: Plan): Promise<void> {
  const { place, senders, claimers } = result;
  expect(errorsOf([...senders, ...claimers])).toEqual([]);

  const sent = idsOf(senders, "sent");
  expect(sent.length).toBe(plan.senders * plan.perSender);
  expect(new Set(sent).size).toBe(sent.length);
  // Contents name sender and sequence: each one arrived once, unchanged.
  const sentContents = senders.flatMap((w) => w.events.map((e) => `${e.sent} ${e.to} ${e.content}`)).sort();
  const claimedContents = claimers.flatMap((w) => w.events.filter((e) => e.claimed).map((e) => `${e.claimed} ${e.agent} ${e.content}`)).sort();
  expect(claimedContents).toEqual(sentContents);

  const claimed = idsOf(claimers, "claimed");
  const claimedTwice = claimed.filter((id, i) => claimed.indexOf(id) !== i);
  expect(claimedTwice).toEqual([]);
  expect([...claimed].sort()).toEqual([...sent].sort());
  expect([...idsOf(claimers, "acked")].sort()).toEqual([...sent].sort());
  // The work really was shared: more than one claimer got messages.
  expect(claimers.filter((w) => w.events.some((e) => e.claimed)).length).toBeGreaterThan(1);

  const census = await censusOf(place);
  expect(census.invalid).toEqual([]);
  expect(census.quarantined).toEqual([]);
  expect(duplicatesIn(census)).toEqual([]);
  expect(idsIn(census, "ready", "processing")).toEqual([]);
  expect(idsIn(census, "done").sort()).toEqual([...sent].sort());
  for (const id of sent) {
    const [place] = census.byId.get(id)!;
    expect(place!.agent).toBe(place!.message.recipient);
    if (census.markers) expect(census.markers.has(id)).toBe(true);
  }
}

for (const backend of mailboxBackends()) {
  describe(`${backend.name} store across processes`, () => {
    test(
      "4 senders × 150 messages to one agent while 4 claimers claim: each claimed once, all done",
      async () => {
        const plan = { senders: 4, perSender: 150, to: ["alice"], claimers: 4 };
        await expectEachClaimedOnceAndDone(await run(plan, backend), plan);
      },
      60_000,
    );

    test(
      "4 senders to 3 agents while 4 claimers sweep all three: each claimed once, all done",
      async () => {
        const plan = { senders: 4, perSender: 90, to: ["alice", "bob", "carol"], claimers: 4 };
        await expectEachClaimedOnceAndDone(await run(plan, backend), plan);
      },
      60_000,
    );

    test(
      "2 claimers taking one agent's messages with ackAndClaim while 2 senders send: each claimed once, all done once",
      async () => {
        const plan = { senders: 2, perSender: 150, to: ["alice"], claimers: 2, combined: true };
        await expectEachClaimedOnceAndDone(await run(plan, backend), plan);
      },
      60_000,
    );
  });
}
