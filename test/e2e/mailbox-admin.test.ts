import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "../../src/core/clock.ts";
import { RuntimeLock } from "../../src/storage/runtime-lock.ts";
import { ensureBinary } from "./agent-binary.ts";
import { expectError, expectOk, message, setup, showJson } from "./fixture.ts";

// The operator's repair tools on the compiled binary: corrupt files, recover, prune.

beforeAll(() => {
  ensureBinary();
}, 120_000);

describe("a corrupt message file", () => {
  test("list still works and flags it; show names the file and the problem", async () => {
    const { agent, store, stateDir } = setup();
    const good = message("alice", "fine");
    await store.send(good);
    const badId = "0190b8a6-7c1e-7d3a-9f00-3b2a1c4d5e6f";
    const badPath = join(stateDir, "mailboxes", "alice", "ready", `${badId}.json`);
    writeFileSync(badPath, "{ this is not json");

    const listed = await agent("mailbox", "list", "--json");
    expectOk(listed);
    const alice = JSON.parse(listed.stdout).agents[0];
    expect(alice.counts.ready).toBe(2);
    expect(alice.messages).toContainEqual(expect.objectContaining({ id: good.id, state: "ready" }));
    expect(alice.messages).toContainEqual(
      expect.objectContaining({ id: null, state: "ready", file: `${badId}.json`, reason: expect.stringContaining("not valid JSON") }),
    );
    expectOk(await agent("mailbox", "list"));

    const shown = await agent("mailbox", "show", badId);
    expectError(shown, 5, /corrupt state file .*alice\/ready\/0190b8a6-7c1e-7d3a-9f00-3b2a1c4d5e6f\.json: content is not valid JSON/);
    expect(existsSync(badPath)).toBe(true);
  });

  test("once quarantined by a claim, show prints the evidence and the reason", async () => {
    const { agent, store, stateDir } = setup();
    await store.send(message("alice", "fine"));
    const badId = "0190b8a6-7c1e-7d3a-9f00-3b2a1c4d5e6f";
    writeFileSync(join(stateDir, "mailboxes", "alice", "ready", `${badId}.json`), "garbage");
    await store.claim("alice");
    const json = await showJson(agent, badId);
    expect(json).toMatchObject({ agent: "alice", state: "quarantine", message: null, raw: "garbage" });
    expect(json.reason).toContain("not valid JSON");
  });
});

describe("agent mailbox recover", () => {
  test("moves processing back to ready for all agents or one", async () => {
    const { agent, store } = setup();
    const forAlice = message("alice", "a");
    const forBob = message("bob", "b");
    await store.send(forAlice);
    await store.send(forBob);
    await store.claim("alice");
    await store.claim("bob");

    const one = await agent("mailbox", "recover", "--agent", "alice", "--json");
    expectOk(one);
    expect(JSON.parse(one.stdout)).toEqual({ recovered: [{ agent: "alice", id: forAlice.id }], skipped: [] });
    expect((await showJson(agent, forBob.id)).state).toBe("processing");

    const all = await agent("mailbox", "recover");
    expectOk(all);
    expect(all.stdout).toContain("recovered 1 message(s)");
    expect(all.stdout).toContain(forBob.id);
    expect((await showJson(agent, forBob.id)).state).toBe("ready");
    expectError(await agent("mailbox", "recover", "--agent", "zed"), 6, /unknown agent "zed"/);
  });

  test("refuses while a live runtime owns the state dir, unless --force", async () => {
    const { agent, store, stateDir } = setup();
    const sent = message("alice", "in progress");
    await store.send(sent);
    await store.claim("alice");
    const lock = await RuntimeLock.acquire(stateDir);
    try {
      const refused = await agent("mailbox", "recover", "--json");
      expectError(refused, 4, new RegExp(`busy, owned by pid ${process.pid} on host .*--force`));
      expect((await showJson(agent, sent.id)).state).toBe("processing");

      const forced = await agent("mailbox", "recover", "--force", "--json");
      expectOk(forced);
      expect(JSON.parse(forced.stdout).recovered).toEqual([{ agent: "alice", id: sent.id }]);
    } finally {
      await lock.release();
    }
    expectOk(await agent("mailbox", "recover"));
  });
});

describe("agent mailbox prune", () => {
  test("deletes done messages older than the duration and nothing else", async () => {
    const { agent, store } = setup();
    const old = message("alice", "old", new ManualClock("2020-01-01T00:00:00.000Z"));
    const fresh = message("alice", "fresh");
    const waiting = message("alice", "waiting", new ManualClock("2020-01-02T00:00:00.000Z"));
    for (const m of [old, fresh]) {
      await store.send(m);
      const claimed = await store.claim("alice");
      if (claimed) await store.ack(claimed);
    }
    await store.send(waiting);

    const pruned = await agent("mailbox", "prune", "--older-than", "7d", "--json");
    expectOk(pruned);
    expect(JSON.parse(pruned.stdout)).toEqual({ pruned: [{ agent: "alice", id: old.id }], orphanMarkers: 0 });
    expectError(await agent("mailbox", "show", old.id), 6, /not found/);
    expect((await showJson(agent, fresh.id)).state).toBe("done");
    expect((await showJson(agent, waiting.id)).state).toBe("ready");

    const again = await agent("mailbox", "prune", "--older-than", "1h30m");
    expectOk(again);
    expect(again.stdout).toBe("pruned 0 done message(s) older than 1h30m\n");
  });

  test("a bad or missing duration is exit 2", async () => {
    const { agent } = setup();
    expectError(await agent("mailbox", "prune", "--older-than", "7 days"), 2, /invalid duration "7 days"/);
    expectError(await agent("mailbox", "prune"), 2, /missing required option --older-than/);
  });
});
