import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import type { AgentName } from "../../src/core/agent-name.ts";
import { CorruptStateFileError } from "../../src/core/errors.ts";
import { CorruptStateRowError } from "../../src/postgres/state-rows.ts";
import { HistoryRecord, type HistoryLog, HistoryStore, type OpenedHistory } from "../../src/runtime/history-store.ts";
import { generatedHistoryLines } from "../support/generated-history.ts";
import { seeded } from "../support/schema-agreement.ts";
import { type BackendSession, type StoreBackend, backendRows } from "../support/store-backends.ts";

// A history read back (a resume's open, a reader's read) is checked by the
// plain checks, the schema only for what they do not take, and an open parses
// only the records a HistoryStore applies. Over generated histories, on both
// backends: every record read is what the schema returns for its line, an open
// leaves out only what the last snapshot replaced and the usage records, and
// the history it opens is the one every record makes.

const LEAD = "lead" as AgentName;
const at = "2026-03-01T12:00:00.000Z";

/** `agent`'s history made of exactly `lines`, written around the store as a file or as rows. */
async function writeHistory(backend: StoreBackend, session: BackendSession, agent: AgentName, lines: string[]): Promise<void> {
  if (backend.name === "file") {
    mkdirSync(join(session.place, "agents"), { recursive: true });
    writeFileSync(join(session.place, "agents", `${agent}.jsonl`), lines.map((line) => `${line}\n`).join(""));
    return;
  }
  const [url = "", id = ""] = session.place.split("#");
  const sql = new SQL(url, { max: 1 });
  try {
    await sql`INSERT INTO agent_history ${sql(lines.map((record, i) => ({ session: id, agent, seq: i + 1, record })))}`;
  } finally {
    await sql.close();
  }
}

/** A seeded shuffle of a record's keys, and of its message's or usage record's: a line the writer never makes, the schema takes. */
function shuffledKeys(value: Record<string, unknown>, next: () => number): Record<string, unknown> {
  const entries = Object.entries(value).map(([key, item]): [string, unknown] => [
    key,
    (key === "message" || key === "record") && typeof item === "object" && item !== null ? shuffledKeys(item as Record<string, unknown>, next) : item,
  ]);
  for (let i = entries.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [entries[i], entries[j]] = [entries[j]!, entries[i]!];
  }
  return Object.fromEntries(entries);
}

const log: HistoryLog = { location: "(compared)", append: async () => {}, close: () => {} };

/** What a HistoryStore holds after applying `records`: its messages, size and every turn's state. */
function storeState(records: HistoryRecord[], keys: string[]) {
  const store = new HistoryStore({ records, log } satisfies OpenedHistory);
  return {
    messages: JSON.stringify(store.messages),
    size: store.size,
    abandoned: store.abandonedTurns(),
    turns: keys.map((key) => [key, store.turnStatus(key), store.finishedTurn(key), store.turnOf(key), store.joinedTo(key)]),
  };
}

describe.each(backendRows())("%s backend: a history read back", (_name, backend) => {
  test("generated histories: each record read is what the schema returns; an open applies what they all make, and parses less", async () => {
    const kinds = new Map<string, number>();
    let reordered = 0;
    let leftOut = 0;
    // One session, a history per seed: a PostgreSQL session's stores are a pool of connections.
    const session = await backend.session();
    const { histories } = session.open();
    for (let seed = 1; seed <= 40; seed++) {
      const agent = `agent-${seed}` as AgentName;
      const next = seeded(seed);
      // A tenth of the records with their keys in another order: the plain checks leave those to the schema.
      const lines = generatedHistoryLines(next, 150).map((line) => (next() < 0.1 ? (reordered++, JSON.stringify(shuffledKeys(JSON.parse(line), next))) : line));
      const expected = lines.map((line) => HistoryRecord.parse(JSON.parse(line)));
      for (const record of expected) kinds.set(record.type, (kinds.get(record.type) ?? 0) + 1);
      await writeHistory(backend, session, agent, lines);

      const read = await histories.read(agent);
      // Equal, keys in the same order, at every depth.
      expect(JSON.stringify(read)).toBe(JSON.stringify(expected));
      expect(read).toEqual(expected);

      const opened = await histories.open(agent);
      opened.log.close();
      // What the open parsed is, in order, the schema's records of some of the lines …
      let from = 0;
      for (const record of opened.records) {
        const found = expected.findIndex((each, i) => i >= from && JSON.stringify(each) === JSON.stringify(record));
        if (found < 0) throw new Error(`seed ${seed}: the open returned a record the schema does not make of its line: ${JSON.stringify(record)}`);
        from = found + 1;
      }
      // … every turn mark and everything from the last snapshot on but the usage records among them …
      const lastSnapshot = expected.findLastIndex((record) => record.type === "snapshot");
      const needed = expected.filter((record, i) => record.type === "turn" || (i >= lastSnapshot && record.type !== "usage"));
      const parsed = new Set(opened.records.map((record) => JSON.stringify(record)));
      for (const record of needed) expect(parsed.has(JSON.stringify(record))).toBe(true);
      leftOut += expected.length - opened.records.length;
      // … and the history it opens is the one all the records make.
      const keys = [...new Set(expected.flatMap((record) => (record.type === "turn" ? [record.key] : [])))];
      expect(storeState(opened.records, keys)).toEqual(storeState(expected, keys));
    }
    // Every kind was read many times, through both checks, and the open left lines unparsed.
    for (const kind of ["message", "turn", "usage", "snapshot"]) expect(kinds.get(kind) ?? 0).toBeGreaterThan(200);
    expect(reordered).toBeGreaterThan(300);
    expect(leftOut).toBeGreaterThan(1_000);
  }, 120_000);

  test("a record the plain checks do not take goes to the schema, of every kind: its keys come back in the schema's order, a last snapshot so written is still the one applied", async () => {
    const lines = [
      `{"type":"turn","v":1,"at":"${at}","key":"k1","status":"started"}`,
      `{"v":1,"type":"message","at":"${at}","message":{"role":"user","content":"before"}}`,
      `{"v":1,"type":"snapshot","at":"${at}","messages":[{"role":"user","content":"first summary"}]}`,
      `{"message":{"content":"reordered","role":"user"},"v":1,"type":"message","at":"${at}"}`,
      `{"v":1,"type":"usage","at":"${at}","record":{"type":"turn","v":1,"at":"${at}","agent":"lead","key":"k1","subtype":"success","duration_ms":5}}`,
      `{"at":"${at}","v":1,"type":"snapshot","messages":[{"role":"user","content":"second summary"}]}`,
      `{"v":1,"type":"message","at":"${at}","message":{"role":"assistant","content":"after"}}`,
      `{"v":1,"type":"turn","at":"${at}","key":"k1","status":"finished","result":"done","subtype":"success"}`,
    ];
    const session = await backend.session();
    await writeHistory(backend, session, LEAD, lines);
    const { histories } = session.open();
    const read = await histories.read(LEAD);
    expect(JSON.stringify(read)).toBe(JSON.stringify(lines.map((line) => HistoryRecord.parse(JSON.parse(line)))));
    expect(Object.keys(read[0]!)).toEqual(["v", "type", "at", "key", "status"]);
    expect(Object.keys(read[3]!)).toEqual(["v", "type", "at", "message"]);
    expect(Object.keys((read[4] as { record: object }).record)).toEqual(["v", "type", "at", "agent", "key", "subtype", "duration_ms"]);
    expect(Object.keys(read[5]!)).toEqual(["v", "type", "at", "messages"]);
    expect(Object.keys(read[7]!)).toEqual(["v", "type", "at", "key", "status", "subtype", "result"]);
    expect((await histories.carriedUsage()).map((record) => Object.keys(record))).toEqual([["v", "type", "at", "agent", "key", "subtype", "duration_ms"]]);

    const history = await HistoryStore.open(histories, LEAD);
    history.close();
    expect(history.messages).toEqual([
      { role: "user", content: "second summary" },
      { role: "assistant", content: "after" },
    ]);
    expect(history.finishedTurn("k1")).toEqual({ subtype: "success", result: "done" });
  });

  test("a line that begins as a snapshot but is none (a repeated key): the open reads every line, as a read does", async () => {
    const lines = [
      `{"v":1,"type":"message","at":"${at}","message":{"role":"user","content":"kept"}}`,
      `{"v":1,"type":"snapshot","type":"message","at":"${at}","message":{"role":"assistant","content":"no snapshot"}}`,
      `{"v":1,"type":"message","at":"${at}","message":{"role":"user","content":"after"}}`,
    ];
    const session = await backend.session();
    await writeHistory(backend, session, LEAD, lines);
    const history = await HistoryStore.open(session.open().histories, LEAD);
    history.close();
    expect(history.messages).toEqual([
      { role: "user", content: "kept" },
      { role: "assistant", content: "no snapshot" },
      { role: "user", content: "after" },
    ]);
  });

  test("carriedUsage leaves out, unparsed, the records whose id usage.jsonl already has; parses and checks the rest", async () => {
    const usage = (id: string | undefined, duration: number) =>
      `{"v":1,"type":"usage","at":"${at}","record":{"v":1,"type":"turn",${id === undefined ? "" : `"id":"${id}",`}"at":"${at}","agent":"lead","key":"k","subtype":"success","duration_ms":${duration}}}`;
    const session = await backend.session();
    // A known record damaged after its id: its copy in usage.jsonl is the one read.
    await writeHistory(backend, session, LEAD, [usage("known", -1), usage("new", 5), usage(undefined, 6)]);
    const { histories } = session.open();
    expect((await histories.carriedUsage(new Set(["known"]))).map((record) => [record.id, record.duration_ms])).toEqual([
      ["new", 5],
      [undefined, 6],
    ]);
    // Not known: parsed and refused, as without the ids.
    expect(await histories.carriedUsage(new Set(["new"])).catch((error: unknown) => error)).toBeInstanceOf(backend.name === "file" ? CorruptStateFileError : CorruptStateRowError);
    expect(await histories.carriedUsage().catch((error: unknown) => error)).toBeInstanceOf(backend.name === "file" ? CorruptStateFileError : CorruptStateRowError);
  });

  test("a record the schema refuses is refused as before, naming where it is; what an open passes over is refused by the reader that reads it", async () => {
    const good = [
      `{"v":1,"type":"turn","at":"${at}","key":"k1","status":"started"}`,
      `{"v":1,"type":"message","at":"${at}","message":{"role":"user","content":"hello"}}`,
      `{"v":1,"type":"snapshot","at":"${at}","messages":[{"role":"user","content":"summary"}]}`,
      `{"v":1,"type":"message","at":"${at}","message":{"role":"assistant","content":"after"}}`,
    ];
    const bad = {
      message: `{"v":1,"type":"message","at":"${at}","message":{"role":"robot","content":"x"}}`,
      turn: `{"v":1,"type":"turn","at":"${at}","key":"k2","status":"paused"}`,
      snapshot: `{"v":1,"type":"snapshot","at":"${at}","messages":[{"role":"user","content":7}]}`,
      usage: `{"v":1,"type":"usage","at":"${at}","record":{"v":1,"type":"turn","at":"${at}","agent":"lead","key":"k1","subtype":"success","duration_ms":-1}}`,
      time: `{"v":1,"type":"message","at":"2026-03-01T12:00:00Z","message":{"role":"user","content":"x"}}`,
      // Cut short: it begins as a message record does.
      json: `{"v":1,"type":"message","at":"${at}","message":{"role":"user"`,
      garbage: "not a record",
    };
    const refusal = async (lines: string[], line: number, agent: AgentName, what: () => Promise<unknown>, fileReason?: string) => {
      const error = await what().then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      const text = lines[line - 1]!;
      let reason = "not valid JSON";
      try {
        const parsed = HistoryRecord.safeParse(JSON.parse(text));
        reason = parsed.success ? "(taken)" : parsed.error.issues[0]!.message;
      } catch {}
      if (backend.name === "file") {
        expect(error).toBeInstanceOf(CorruptStateFileError);
        expect((error as CorruptStateFileError).path).toEndWith(`${agent}.jsonl:${line}`);
      } else {
        expect(error).toBeInstanceOf(CorruptStateRowError);
        expect((error as CorruptStateRowError).where).toEndWith(`/${agent}#${line}`);
      }
      expect((error as Error).message).toContain(backend.name === "file" ? (fileReason ?? reason) : reason);
    };
    // One session for every case but the bad usage record's: carriedUsage reads every history of a session.
    const shared = await backend.session();
    const { histories } = shared.open();
    for (const [kind, line] of Object.entries(bad)) {
      // After the last snapshot: the open refuses it as a read does, but a bad usage record, which carriedUsage refuses at every start.
      const after = [...good, line];
      const afterAgent = `after-${kind}` as AgentName;
      if (kind === "usage") {
        const session = await backend.session();
        await writeHistory(backend, session, afterAgent, after);
        const own = session.open().histories;
        await refusal(after, after.length, afterAgent, () => own.read(afterAgent));
        (await own.open(afterAgent)).log.close();
        await refusal(after, after.length, afterAgent, () => own.carriedUsage(), "not a valid usage record");
      } else {
        await writeHistory(backend, shared, afterAgent, after);
        await refusal(after, after.length, afterAgent, () => histories.read(afterAgent));
        await refusal(after, after.length, afterAgent, () => histories.open(afterAgent));
      }
      // Before it: a turn mark (or a line that is no record) is still parsed by the
      // open; a line that begins as a message or a snapshot record, which
      // the snapshot replaced, is left to the readers.
      if (kind === "usage") continue;
      const before = [good[0]!, line, ...good.slice(1)];
      const beforeAgent = `before-${kind}` as AgentName;
      await writeHistory(backend, shared, beforeAgent, before);
      await refusal(before, 2, beforeAgent, () => histories.read(beforeAgent));
      if (kind === "turn" || kind === "garbage") await refusal(before, 2, beforeAgent, () => histories.open(beforeAgent));
      else {
        const history = await HistoryStore.open(histories, beforeAgent);
        history.close();
        expect(history.messages).toEqual([
          { role: "user", content: "summary" },
          { role: "assistant", content: "after" },
        ]);
      }
    }
  }, 60_000);
});
