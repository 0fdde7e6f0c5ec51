// The MailboxStore contract, one suite run against every backend (files, PostgreSQL):
// what the runtime relies on, observed only through the interface. What only one
// backend has (files on disk, leases) is tested beside it: file-store.test.ts,
// test/postgres/mailbox-leases.test.ts.
import { describe, expect, test } from "bun:test";
import {
  AckConflictError,
  DuplicateMessageIdError,
  InvalidAgentNameError,
  InvalidMessageError,
  MailboxStorageError,
  MessageTooLargeError,
} from "../../src/core/errors.ts";
import { DEFAULT_MAX_CONTENT_BYTES, type MailboxMessage } from "../../src/core/message.ts";
import { contractFixture, mailboxBackends } from "./backends.ts";

for (const backend of mailboxBackends()) {
  const fixture = (options?: Parameters<typeof contractFixture>[1]) => contractFixture(backend, options);

  describe(`MailboxStore contract: ${backend.name}`, () => {
    describe("send, claim, ack", () => {
      test("a message goes ready → processing → done and comes back byte-for-byte", async () => {
        const f = await fixture();
        const content = "  leading and trailing spaces, tabs\t, newlines\n\nünïcödé ✓ 🚀\r\n  \u0000 nul and \u001b escape ";
        const sent = f.message("alice", content);
        await f.store.send(sent);
        expect((await f.states("alice")).ready).toEqual([sent.id]);

        const claimed = await f.store.claim("alice");
        expect(claimed).toEqual(sent);
        expect(claimed!.content).toBe(content);
        expect(await f.states("alice")).toMatchObject({ ready: [], processing: [sent.id] });

        await f.store.ack(claimed!);
        expect(await f.states("alice")).toEqual({ ready: [], processing: [], done: [sent.id], quarantine: [] });
        expect((await f.newStore().find(sent.id))!.message!.content).toBe(content);
      });

      test("a filtered claim takes the oldest message that matches, leaving the others ready in their order", async () => {
        const f = await fixture();
        const task = f.message("alice", "a task", { sender: "lead", kind: "task" });
        const peer = f.message("alice", "a peer's word", { sender: "bob", kind: "message" });
        const result = f.message("alice", "a result", { sender: "lead", kind: "result" });
        const word = f.message("alice", "the operator's word", { sender: "user", kind: "message" });
        const lead = f.message("alice", "the Lead's word", { sender: "lead", kind: "message" });
        for (const message of [task, peer, result, word, lead]) await f.store.send(message);
        const only = { kind: "message", senders: ["lead", "user"] } as const;
        expect(await f.store.claim("alice", only)).toEqual(word);
        expect(await f.store.claim("alice", only)).toEqual(lead);
        expect(await f.store.claim("alice", only)).toBeNull();
        expect(await f.states("alice")).toMatchObject({ ready: [task.id, peer.id, result.id], processing: [word.id, lead.id] });
        // Released, it is the next a filtered claim takes; a plain claim still goes in order.
        await f.store.release(word);
        expect(await f.newStore().claim("alice", only)).toEqual(word);
        expect(await f.store.claim("alice")).toEqual(task);
      });

      test("claim on an empty or absent mailbox returns null", async () => {
        const f = await fixture();
        expect(await f.store.claim("nobody")).toBeNull();
        await f.store.send(f.message("alice"));
        await f.store.claim("alice");
        expect(await f.store.claim("alice")).toBeNull();
      });

      test("a bad name or a bad message is refused before anything is written", async () => {
        const f = await fixture();
        await expect(f.store.claim("Bob")).rejects.toBeInstanceOf(InvalidAgentNameError);
        await expect(f.store.recover("../etc")).rejects.toBeInstanceOf(InvalidAgentNameError);
        const good = f.message("alice");
        const extra = { ...good, extra: 1 } as unknown as MailboxMessage;
        await expect(f.store.send(extra)).rejects.toBeInstanceOf(InvalidMessageError);
        await expect(f.store.send({ ...good, content: "" })).rejects.toBeInstanceOf(InvalidMessageError);
        await expect(f.store.send({ ...good, recipient: "con" })).rejects.toBeInstanceOf(InvalidMessageError);
        await expect(f.store.send({ ...good, idempotencyKey: f.ids.next() })).rejects.toBeInstanceOf(InvalidMessageError);
        expect(await f.store.agents()).toEqual([]);
      });

      test("a send over the content cap is refused naming the cap; nothing is written", async () => {
        const f = await fixture();
        const big = f.message("alice", "x".repeat(DEFAULT_MAX_CONTENT_BYTES + 1));
        const error = await f.store.send(big).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(MessageTooLargeError);
        expect(await f.store.find(big.id)).toBeNull();
        const small = f.newStore({ maxContentBytes: 10 });
        await small.send(f.message("alice", "é".repeat(5)));
        await expect(small.send(f.message("alice", "é".repeat(6)))).rejects.toThrow(MessageTooLargeError);
      });
    });

    describe("FIFO by (createdAtUtc, id)", () => {
      test("equal timestamps are ordered by id, whatever order they were sent in", async () => {
        const f = await fixture();
        const at = "2026-03-01T12:00:00.000Z";
        const ids = ["00000000-0000-4000-8000-00000000000c", "00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000b"];
        for (const id of ids) {
          await f.store.send({ id, idempotencyKey: id, sender: "lead", recipient: "alice", kind: "task", content: id, createdAtUtc: at });
        }
        const order: string[] = [];
        for (let m = await f.store.claim("alice"); m; m = await f.store.claim("alice")) order.push(m.id);
        expect(order).toEqual([...ids].sort());
      });

      test("the time decides, not the id", async () => {
        const f = await fixture();
        const sent = ["ffffffff-0000-4000-8000-000000000000", "88888888-0000-4000-8000-000000000000", "11111111-0000-4000-8000-000000000000"].map(
          (id, i) => ({ id, idempotencyKey: id, sender: "lead", recipient: "alice", kind: "task" as const, content: `#${i}`, createdAtUtc: `2026-03-01T12:00:0${i}.000Z` }),
        );
        for (const m of sent) await f.store.send(m);
        const order: string[] = [];
        for (let m = await f.store.claim("alice"); m; m = await f.store.claim("alice")) order.push(m.content);
        expect(order).toEqual(["#0", "#1", "#2"]);
      });

      test("a released message goes back to its place in the queue", async () => {
        const f = await fixture();
        const [a, b, c] = [f.message("alice", "a"), f.message("alice", "b"), f.message("alice", "c")];
        for (const m of [a, b, c]) await f.store.send(m!);
        const first = await f.store.claim("alice");
        expect(first!.content).toBe("a");
        await f.store.release(first!);
        expect((await f.store.claim("alice"))!.content).toBe("a");
        expect((await f.store.claim("alice"))!.content).toBe("b");
      });

      test("messages sent by another store instance are seen, in order", async () => {
        const f = await fixture();
        const other = f.newStore();
        await f.store.send(f.message("alice", "1"));
        expect((await f.store.claim("alice"))!.content).toBe("1");
        for (const c of ["2", "3"]) await other.send(f.message("alice", c));
        await f.store.send(f.message("alice", "4"));
        const seen: string[] = [];
        for (let m = await f.store.claim("alice"); m; m = await f.store.claim("alice")) seen.push(m.content);
        expect(seen).toEqual(["2", "3", "4"]);
      });
    });

    describe("global id uniqueness", () => {
      test("a duplicate id fails loudly and never overwrites, in any agent and state", async () => {
        const f = await fixture();
        const original = f.message("alice", "original");
        await f.store.send(original);
        const sameId = (recipient: string) => ({ ...original, recipient, content: "impostor" });

        await expect(f.store.send(sameId("alice"))).rejects.toBeInstanceOf(DuplicateMessageIdError);
        await expect(f.store.send(sameId("bob"))).rejects.toBeInstanceOf(DuplicateMessageIdError);
        const claimed = await f.store.claim("alice");
        await expect(f.store.send(sameId("bob"))).rejects.toBeInstanceOf(DuplicateMessageIdError);
        await f.store.ack(claimed!);
        await expect(f.newStore().send(sameId("carol"))).rejects.toBeInstanceOf(DuplicateMessageIdError);

        expect((await f.states("bob")).ready).toEqual([]);
        expect((await f.states("carol")).ready).toEqual([]);
        expect(await f.store.find(original.id)).toMatchObject({ agent: "alice", state: "done", message: { content: "original" } });
      });

      test("a quarantined id stays taken", async () => {
        const f = await fixture();
        const m = f.message("alice");
        await f.store.send(m);
        await f.store.quarantine((await f.store.claim("alice"))!, "it failed");
        await expect(f.store.send({ ...m, recipient: "bob" })).rejects.toBeInstanceOf(DuplicateMessageIdError);
      });
    });

    describe("ack", () => {
      test("is idempotent for the same message, from any instance", async () => {
        const f = await fixture();
        await f.store.send(f.message("alice"));
        const m = (await f.store.claim("alice"))!;
        await f.store.ack(m);
        await f.store.ack(m);
        await f.newStore().ack(m);
        expect(await f.states("alice")).toEqual({ ready: [], processing: [], done: [m.id], quarantine: [] });
      });

      test("conflicts when done holds different content under the id", async () => {
        const f = await fixture();
        await f.store.send(f.message("alice"));
        const m = (await f.store.claim("alice"))!;
        await f.store.ack(m);
        const error = await f.store.ack({ ...m, content: "something else" }).catch((e) => e);
        expect(error).toBeInstanceOf(AckConflictError);
        expect(error).toBeInstanceOf(MailboxStorageError);
      });

      test("a late ack after another runtime recovered, re-claimed and finished it does not re-queue it", async () => {
        const f = await fixture();
        await f.store.send(f.message("alice"));
        const first = (await f.store.claim("alice"))!;
        const other = f.newStore();
        expect((await other.recover("alice")).recovered).toEqual([{ agent: "alice", id: first.id }]);
        const again = (await other.claim("alice"))!;
        await other.ack(again);
        await f.store.ack(first);
        expect(await f.states("alice")).toEqual({ ready: [], processing: [], done: [first.id], quarantine: [] });
      });

      test("of a message that is not in processing fails clearly and moves nothing", async () => {
        const f = await fixture();
        const m = f.message("alice");
        await f.store.send(m);
        const error = await f.store.ack(m).catch((e) => e);
        expect(error).toBeInstanceOf(MailboxStorageError);
        expect(error.message).toContain("not in processing");
        expect((await f.states("alice")).ready).toEqual([m.id]);
      });
    });

    describe("ackAndClaim: ack then claim in one step", () => {
      test("a run of them takes the messages in FIFO order, one in processing at a time, all done", async () => {
        const f = await fixture();
        const sent = ["a", "b", "c", "d", "e"].map((c) => f.message("alice", c));
        for (const m of sent) await f.store.send(m);
        const taken: string[] = [];
        let m = await f.store.claim("alice");
        while (m) {
          taken.push(m.content);
          expect((await f.states("alice")).processing).toEqual([m.id]);
          m = await f.store.ackAndClaim(m, "alice");
        }
        expect(taken).toEqual(["a", "b", "c", "d", "e"]);
        expect(await f.states("alice")).toEqual({ ready: [], processing: [], done: sent.map((s) => s.id), quarantine: [] });
      });

      test("on an empty mailbox it acks and returns null", async () => {
        const f = await fixture();
        const m = f.message("alice");
        await f.store.send(m);
        expect(await f.store.ackAndClaim((await f.store.claim("alice"))!, "alice")).toBeNull();
        expect(await f.states("alice")).toEqual({ ready: [], processing: [], done: [m.id], quarantine: [] });
        // Another agent's mailbox: the ack is of the message's own, the claim of the one named.
        const [x, y] = [f.message("alice", "x"), f.message("bob", "y")];
        await f.store.send(x);
        await f.store.send(y);
        expect((await f.store.ackAndClaim((await f.store.claim("alice"))!, "bob"))!.id).toBe(y.id);
        expect((await f.states("alice")).done).toEqual([m.id, x.id]);
        expect((await f.states("bob")).processing).toEqual([y.id]);
      });

      test("an ack that is refused fails as ack fails, and claims nothing", async () => {
        const f = await fixture();
        const [one, two, three] = [f.message("alice", "1"), f.message("alice", "2"), f.message("alice", "3")];
        for (const m of [one, two, three]) await f.store.send(m);
        const heldOne = (await f.store.claim("alice"))!;
        const heldTwo = (await f.store.claim("alice"))!;
        // Taken back by another runtime: this store's claims of both are void.
        expect((await f.newStore().recover("alice")).recovered.map((r) => r.id)).toEqual([one.id, two.id]);
        const byAck = await f.store.ack(heldOne).catch((e: unknown) => e);
        const byPair = await f.store.ackAndClaim(heldTwo, "alice").catch((e: unknown) => e);
        expect(byAck).toBeInstanceOf(MailboxStorageError);
        expect(byPair).toBeInstanceOf((byAck as Error).constructor as new () => Error);
        expect((byPair as MailboxStorageError).code).toBe((byAck as MailboxStorageError).code);
        expect(await f.states("alice")).toEqual({ ready: [one.id, two.id, three.id], processing: [], done: [], quarantine: [] });
        // Different content under a done id: the conflict, and nothing claimed either.
        const mine = (await f.store.claim("alice"))!;
        await f.store.ack(mine);
        const conflict = await f.store.ackAndClaim({ ...mine, content: "something else" }, "alice").catch((e: unknown) => e);
        expect(conflict).toBeInstanceOf(AckConflictError);
        expect(await f.states("alice")).toMatchObject({ ready: [two.id, three.id], processing: [] });
      });

      test("of a message already done (the same one) it claims the next, from any instance", async () => {
        const f = await fixture();
        const [a, b, c] = [f.message("alice", "a"), f.message("alice", "b"), f.message("alice", "c")];
        for (const m of [a, b, c]) await f.store.send(m);
        const held = (await f.store.claim("alice"))!;
        await f.store.ack(held);
        expect((await f.store.ackAndClaim(held, "alice"))!.id).toBe(b.id);
        expect((await f.newStore().ackAndClaim(held, "alice"))!.id).toBe(c.id);
        expect(await f.states("alice")).toEqual({ ready: [], processing: [b.id, c.id], done: [a.id], quarantine: [] });
      });

      test("a next message that fails the claim's check is quarantined and the one after it returned", async () => {
        const f = await fixture();
        const capped = f.newStore({ maxContentBytes: 10 });
        const [first, big, after] = [f.message("alice", "first"), f.message("alice", "x".repeat(11)), f.message("alice", "after")];
        for (const m of [first, big, after]) await f.store.send(m);
        const held = (await capped.claim("alice"))!;
        expect(held.id).toBe(first.id);
        expect((await capped.ackAndClaim(held, "alice"))!.id).toBe(after.id);
        expect(await f.states("alice")).toEqual({ ready: [], processing: [after.id], done: [first.id], quarantine: [big.id] });
        const [listing] = await f.store.list({ agent: "alice", state: "quarantine" });
        expect(listing!.messages[0]!.reason).toContain("over the cap of 10");
        expect(await capped.ackAndClaim((await f.store.find(after.id))!.message!, "alice")).toBeNull();
      });
    });

    describe("release, quarantine, recover", () => {
      test("quarantine records why; list shows the reason", async () => {
        const f = await fixture();
        const m = f.message("alice");
        await f.store.send(m);
        await f.store.send(f.message("alice", "next"));
        await f.store.quarantine((await f.store.claim("alice"))!, "first failure");
        const listing = await f.store.list({ agent: "alice", state: "quarantine" });
        expect(listing[0]!.counts).toEqual({ ready: 1, processing: 0, done: 0, quarantine: 1 });
        expect(listing[0]!.messages.map((e) => e.reason)).toEqual(["first failure"]);
        expect(await f.store.find(m.id)).toMatchObject({ agent: "alice", state: "quarantine", message: m });
        expect((await f.store.claim("alice"))!.content).toBe("next");
      });

      test("recover moves processing back to ready, oldest first; they are claimed again in order", async () => {
        const f = await fixture();
        const [a, b] = [f.message("alice", "a"), f.message("alice", "b")];
        await f.store.send(a);
        await f.store.send(b);
        await f.store.claim("alice");
        await f.store.claim("alice");
        const result = await f.newStore().recover("alice");
        expect(result.recovered.map((r) => r.id)).toEqual([a.id, b.id]);
        expect(result.skipped).toEqual([]);
        expect((await f.states("alice")).processing).toEqual([]);
        expect((await f.store.claim("alice"))!.id).toBe(a.id);
        expect(await f.store.recover("nobody")).toEqual({ recovered: [], skipped: [] });
      });

      test("release of a message not in processing fails and changes nothing", async () => {
        const f = await fixture();
        const m = f.message("alice");
        await f.store.send(m);
        await expect(f.store.release(m)).rejects.toBeInstanceOf(MailboxStorageError);
        expect((await f.states("alice")).ready).toEqual([m.id]);
      });
    });

    describe("list, find, prune", () => {
      test("list counts every state and find locates a message", async () => {
        const f = await fixture();
        const [a, b, c] = [f.message("alice"), f.message("alice"), f.message("bob", "for bob", { kind: "message" })];
        for (const m of [a, b, c]) await f.store.send(m!);
        await f.store.ack((await f.store.claim("alice"))!);
        await f.store.claim("alice");
        const listing = await f.store.list();
        expect(listing.map((l) => [l.name, l.counts])).toEqual([
          ["alice", { ready: 0, processing: 1, done: 1, quarantine: 0 }],
          ["bob", { ready: 1, processing: 0, done: 0, quarantine: 0 }],
        ]);
        expect(listing[1]!.messages[0]).toMatchObject({ id: c.id, sender: "lead", kind: "message", state: "ready" });
        expect(await f.store.find(b.id)).toMatchObject({ agent: "alice", state: "processing", message: b });
        expect(await f.store.find(f.ids.next())).toBeNull();
        expect(await f.store.agents()).toEqual(["alice", "bob"]);
      });

      test("prune deletes done messages older than the cutoff, and nothing else", async () => {
        const f = await fixture();
        const old = f.message("alice", "old");
        await f.store.send(old);
        await f.store.ack((await f.store.claim("alice"))!);
        const oldReady = f.message("alice", "old but still ready");
        await f.store.send(oldReady);
        f.clock.advance(3_600_000);
        const recent = f.message("bob", "recent");
        await f.store.send(recent);
        await f.store.ack((await f.store.claim("bob"))!);
        const result = await f.store.prune(new Date(f.clock.now().getTime() - 60_000));
        expect(result.pruned).toEqual([{ agent: "alice", id: old.id }]);
        expect(await f.store.find(old.id)).toBeNull();
        expect((await f.states("alice")).ready).toEqual([oldReady.id]);
        expect((await f.states("bob")).done).toEqual([recent.id]);
        // A pruned id is free again, as if it had never been sent.
        await f.store.send(old);
      });
    });
  });
}
