import { describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "../../src/core/clock.ts";
import { InvalidMessageError } from "../../src/core/errors.ts";
import { SequentialIds, isTimeKeyedId, timeKeyedId, timeOfId, uuidV7Source } from "../../src/core/ids.ts";
import { compareFifo, createMessage, type MailboxMessage, serializeMessage } from "../../src/core/message.ts";
import { FileMailboxStore } from "../../src/mailbox/file-store.ts";
import { ReadyIndex, entryFromName } from "../../src/mailbox/ready-index.ts";
import { derivedId } from "../../src/team/teammate-runtime.ts";
import { tempDir } from "../support/temp-dir.ts";
import { countingReads } from "./helpers.ts";

describe("time-keyed ids", () => {
  test("name the instant they were made for, to the millisecond, and sort by it", () => {
    const instants = ["1970-01-01T00:00:00.000Z", "2026-03-01T12:00:00.001Z", "2026-03-01T12:00:00.010Z", "9999-12-31T23:59:59.999Z"];
    const ids = instants.map((at) => timeKeyedId(new Date(at))!);
    expect(ids.map(timeOfId)).toEqual(instants);
    expect([...ids].reverse().sort()).toEqual(ids);
    expect(ids.every(isTimeKeyedId)).toBe(true);
    expect(timeKeyedId(new Date("1969-12-31T23:59:59.999Z"))).toBeUndefined();
    // v7 and v4 ids are foreign: their time, if any, is not trusted.
    expect(timeOfId(Bun.randomUUIDv7())).toBeUndefined();
    expect(timeOfId(crypto.randomUUID())).toBeUndefined();
  });

  test("derived ids (a teammate's result) never look time-keyed", () => {
    for (let i = 0; i < 20_000; i++) expect(isTimeKeyedId(derivedId(`00000000-0000-4000-8000-${String(i).padStart(12, "0")}`, "result"))).toBe(false);
  });

  test("a message whose createdAtUtc is not the instant its id names is refused", () => {
    const clock = new ManualClock("2026-03-01T12:00:00.000Z");
    const message = createMessage({ sender: "lead", recipient: "alice", kind: "task", content: "x" }, { clock, ids: uuidV7Source });
    expect(timeOfId(message.id)).toBe(message.createdAtUtc);
    expect(() => createMessage({ sender: "lead", recipient: "alice", kind: "task", content: "x" }, { clock, ids: { next: () => message.id } })).not.toThrow();
    clock.advance(1);
    expect(() => createMessage({ sender: "lead", recipient: "alice", kind: "task", content: "x" }, { clock, ids: { next: () => message.id } })).toThrow(InvalidMessageError);
  });
});

describe("ReadyIndex.insertMany", () => {
  test("merges time-keyed names (sorted as names), foreign entries and what the index held into exact FIFO order", () => {
    const at = (ms: number) => new Date(Date.UTC(2026, 2, 1, 12, 0, 0, ms)).toISOString();
    // As ready/ lists them once sorted by name, which for time-keyed names is FIFO order.
    const keyed = [5, 1, 3, 3, 9]
      .map((ms) => `${timeKeyedId(new Date(at(ms)))}.json`)
      .sort()
      .map((name) => entryFromName(name)!);
    const foreign = [
      { name: "f1.json", id: "00000000-0000-4000-8000-000000000001", createdAtUtc: at(3) },
      { name: "f0.json", id: "00000000-0000-4000-8000-000000000000", createdAtUtc: at(0) },
      { name: "f9.json", id: "ffffffff-0000-4000-8000-000000000000", createdAtUtc: at(9) },
    ];
    const index = new ReadyIndex();
    index.insert({ name: "old.json", id: "00000000-0000-4000-8000-0000000000aa", createdAtUtc: at(4) });
    index.insertMany(keyed, foreign);
    const order: { id: string; createdAtUtc: string }[] = [];
    for (let head = index.head(); head; head = index.head()) {
      order.push({ id: head.id, createdAtUtc: head.createdAtUtc });
      index.remove(head.name);
    }
    expect(order).toHaveLength(9);
    expect(order).toEqual([...order].sort(compareFifo));
  });

  test("names that are not time-keyed canonical ids give no entry", () => {
    const id = timeKeyedId(new Date())!;
    expect(entryFromName(`${id}.json`)?.id).toBe(id);
    for (const name of [`${id.toUpperCase()}.json`, `${id}.tmp`, `${id}.json.x`, `${crypto.randomUUID()}.json`, `${Bun.randomUUIDv7()}.json`]) {
      expect(entryFromName(name)).toBeUndefined();
    }
  });
});

describe("a fresh process's first claim", () => {
  async function seed(count: number) {
    const stateDir = tempDir("agent-first-claim-");
    const clock = new ManualClock("2026-03-01T12:00:00.000Z");
    const store = new FileMailboxStore({ stateDir, clock });
    const sent: MailboxMessage[] = [];
    for (let i = 0; i < count; i++) {
      // Several per millisecond, sent out of order: FIFO is by the messages' time, then id.
      if (i % 3 === 0) clock.advance(1);
      sent.push(createMessage({ sender: "lead", recipient: "alice", kind: "task", content: `m${i}` }, { clock, ids: uuidV7Source }));
    }
    for (const message of [...sent].reverse()) await store.send(message);
    return { stateDir, clock, sent: [...sent].sort(compareFifo) };
  }

  test("reads only the file it claims when every name is time-keyed, and claims in exact FIFO order", async () => {
    const { stateDir, sent } = await seed(60);
    const { ops, read } = countingReads();
    const fresh = new FileMailboxStore({ stateDir, fs: ops });
    const first = await fresh.claim("alice");
    expect(first?.id).toBe(sent[0]!.id);
    expect(read.filter((path) => path.includes("/mailboxes/alice/"))).toEqual([join(stateDir, "mailboxes", "alice", "ready", `${sent[0]!.id}.json`)]);
    const rest: string[] = [];
    for (let m = await fresh.claim("alice"); m; m = await fresh.claim("alice")) rest.push(m.id);
    expect([first!.id, ...rest]).toEqual(sent.map((m) => m.id));
  });

  test("foreign ids are read and ordered by their content, among the time-keyed ones", async () => {
    const { stateDir, clock, sent } = await seed(6);
    const ids = new SequentialIds("ffffffff-0000-4000-8000");
    // Foreign ids whose names sort last, but whose times put them first and in the middle.
    const early = createMessage({ sender: "lead", recipient: "alice", kind: "task", content: "early" }, { clock: new ManualClock("2026-03-01T11:00:00.000Z"), ids });
    const middle = createMessage({ sender: "lead", recipient: "alice", kind: "task", content: "middle" }, { clock: new ManualClock(sent[3]!.createdAtUtc), ids });
    const store = new FileMailboxStore({ stateDir, clock });
    await store.send(early);
    await store.send(middle);
    const claimed: string[] = [];
    const fresh = new FileMailboxStore({ stateDir });
    for (let m = await fresh.claim("alice"); m; m = await fresh.claim("alice")) claimed.push(m.id);
    expect(claimed).toEqual([early, ...sent, middle].sort(compareFifo).map((m) => m.id));
    expect(claimed[0]).toBe(early.id);
  });

  test("a file whose content disagrees with the time its name gives is quarantined at claim, and the next is delivered", async () => {
    const { stateDir, sent } = await seed(3);
    const liar = sent[2]!;
    // Claims to be older than everything, under a name that says it is the newest.
    const path = join(stateDir, "mailboxes", "alice", "ready", `${liar.id}.json`);
    fs.unlinkSync(path);
    writeFileSync(path, serializeMessage({ ...liar, createdAtUtc: "2020-01-01T00:00:00.000Z" }));
    const fresh = new FileMailboxStore({ stateDir });
    expect((await fresh.claim("alice"))?.id).toBe(sent[0]!.id);
    expect((await fresh.claim("alice"))?.id).toBe(sent[1]!.id);
    expect(await fresh.claim("alice")).toBeNull();
    const quarantined = fs.readdirSync(join(stateDir, "mailboxes", "alice", "quarantine"));
    expect(quarantined.some((name) => name.startsWith(liar.id))).toBe(true);
  });
});
