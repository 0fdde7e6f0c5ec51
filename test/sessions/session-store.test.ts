import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "../../src/core/clock.ts";
import { AmbiguousSessionError, CorruptStateFileError, SessionNotFoundError, StateDirBusyError, UsageError } from "../../src/core/errors.ts";
import { type IdSource, SequentialIds } from "../../src/core/ids.ts";
import { ensureAgentGitignore } from "../../src/sessions/gitignore.ts";
import { planSession } from "../../src/sessions/session-plan.ts";
import { pendingWork, sessionState } from "../../src/sessions/session-status.ts";
import { SessionStore } from "../../src/sessions/session-store.ts";
import { RuntimeLock } from "../../src/storage/runtime-lock.ts";
import { FileTeamRegistry } from "../../src/team/team-registry.ts";
import { tempDir } from "../support/temp-dir.ts";

function store(ids: IdSource = new SequentialIds("0190b8a6-7c1e-7d3a-9f00")) {
  const clock = new ManualClock("2026-01-01T00:00:00.000Z");
  const root = join(tempDir("agent-sessions-"), "state");
  return { root, clock, sessions: new SessionStore(root, { clock, ids }) };
}

describe("SessionStore", () => {
  test("sessions are listed most recently used first; touch records the first prompt once, clipped", () => {
    const { sessions, clock } = store();
    const a = sessions.create();
    clock.advance(1_000);
    const b = sessions.create();
    expect(sessions.list().map((s) => s.id)).toEqual([b.id, a.id]);
    clock.advance(1_000);
    const touched = sessions.touch(a, `fix ${"x".repeat(500)}`);
    expect(touched.firstPrompt).toHaveLength(200);
    expect(touched.firstPrompt?.endsWith("…")).toBe(true);
    expect(sessions.touch(touched, "second prompt").firstPrompt).toBe(touched.firstPrompt);
    expect(sessions.mostRecent()?.id).toBe(a.id);
    // Nothing but whole sessions in the directory: no temp names left.
    expect(readdirSync(sessions.dir).sort()).toEqual([a.id, b.id].sort());
  });

  test("find: a name, an id, a unique prefix; unknown is not found, a shared prefix lists the candidates", async () => {
    const ids = ["0190b8a6-7c1e-7d3a-9f00-aaaaaaaaaaaa", "0190b8a6-7c1e-7d3a-9f00-bbbbbbbbbbbb", "0190b8a6-7c1e-7d3a-9f00-cccccccccccc"];
    const { sessions } = store({ next: () => ids.shift() as string });
    const a = sessions.create();
    const b = sessions.create();
    const named = await sessions.createNamed("ci-42");
    expect(sessions.find("ci-42").id).toBe(named.id);
    expect(sessions.find(a.id).id).toBe(a.id);
    expect(sessions.find("0190b8a6-7c1e-7d3a-9f00-b").id).toBe(b.id);
    expect(() => sessions.find("ffff")).toThrow(SessionNotFoundError);
    const ambiguous = (() => {
      try {
        sessions.find("0190b8a6");
      } catch (error) {
        return error;
      }
    })();
    expect(ambiguous).toBeInstanceOf(AmbiguousSessionError);
    expect((ambiguous as Error).message).toContain(a.id);
    expect((ambiguous as Error).message).toContain(b.id);
    // The short id `agent sessions list` shows: the last digits, random where the first are time.
    expect(sessions.find("bbbbbbbb").id).toBe(b.id);
    expect(sessions.find("BBBBBBBBBBBB").id).toBe(b.id);
  });

  test("createNamed twice gives the same session, also when both start at once", async () => {
    const { sessions } = store({ next: () => Bun.randomUUIDv7() });
    const [x, y] = await Promise.all([sessions.createNamed("nightly"), sessions.createNamed("nightly")]);
    expect(x.id).toBe(y.id);
    expect(sessions.list()).toHaveLength(1);
  });

  test("a corrupt session.json is reported, never replaced, and hides no other session", () => {
    const { sessions } = store();
    const a = sessions.create();
    const b = sessions.create();
    const path = join(sessions.dirOf(a.id), "session.json");
    writeFileSync(path, "{ nope");
    expect(sessions.list().map((meta) => meta.id)).toEqual([b.id]);
    const { unreadable } = sessions.survey();
    expect(unreadable.map((error) => [error.constructor, error.path])).toEqual([[CorruptStateFileError, path]]);
    expect(() => sessions.find(a.id)).toThrow(CorruptStateFileError);
    expect(sessions.find(b.id).id).toBe(b.id);
    expect(readFileSync(path, "utf8")).toBe("{ nope");
  });

  test("remove deletes the session, and is refused while a runtime owns it", async () => {
    const { sessions } = store();
    const a = sessions.create();
    const lock = await RuntimeLock.acquire(sessions.dirOf(a.id));
    await expect(sessions.remove(a)).rejects.toBeInstanceOf(StateDirBusyError);
    expect(existsSync(join(sessions.dirOf(a.id), "session.json"))).toBe(true);
    await lock.release();
    await sessions.remove(a);
    expect(existsSync(sessions.dirOf(a.id))).toBe(false);
    expect(sessions.list()).toEqual([]);
  });
});

describe("planSession", () => {
  test("new by default; -c the most recent; --resume a prefix; --session creates or continues by name", async () => {
    const { sessions } = store();
    expect(planSession(sessions, {})).toEqual({ kind: "new" });
    expect(() => planSession(sessions, { continue: true })).toThrow(SessionNotFoundError);
    const a = sessions.create();
    expect(planSession(sessions, { continue: true })).toEqual({ kind: "existing", meta: a });
    expect(planSession(sessions, { resume: a.id.slice(0, 30) })).toEqual({ kind: "existing", meta: a });
    expect(planSession(sessions, { session: "ci-42" })).toEqual({ kind: "new", name: "ci-42" });
    const named = await sessions.createNamed("ci-42");
    expect(planSession(sessions, { session: "ci-42" })).toEqual({ kind: "existing", meta: named });
    expect(() => planSession(sessions, { session: "../x" })).toThrow(UsageError);
    expect(() => planSession(sessions, { continue: true, resume: a.id })).toThrow(/--continue and --resume/);
  });
});

describe("session state", () => {
  test("idle, pending work (a teammate left running), running (a live lock)", async () => {
    const { sessions } = store();
    const dir = sessions.dirOf(sessions.create().id);
    expect(await sessionState(dir)).toEqual({ state: "idle" });
    const at = "2026-01-01T00:00:00.000Z";
    await new FileTeamRegistry(dir).put({ name: "alice", role: "backend", state: "running", createdAtUtc: at, updatedAtUtc: at });
    expect(await pendingWork(dir)).toBe("alice working");
    const lock = await RuntimeLock.acquire(dir);
    expect(await sessionState(dir)).toMatchObject({ state: "running", pid: process.pid });
    await lock.release();
  });
});

describe(".agent/.gitignore", () => {
  test("written once with state/ and config.local.json; an existing one is never replaced", () => {
    const workspace = tempDir("agent-gitignore-");
    ensureAgentGitignore(workspace);
    const path = join(workspace, ".agent", ".gitignore");
    expect(readFileSync(path, "utf8")).toMatch(/^state\/$/m);
    expect(readFileSync(path, "utf8")).toMatch(/^config\.local\.json$/m);
    const other = tempDir("agent-gitignore-");
    mkdirSync(join(other, ".agent"));
    writeFileSync(join(other, ".agent", ".gitignore"), "mine\n");
    ensureAgentGitignore(other);
    expect(readFileSync(join(other, ".agent", ".gitignore"), "utf8")).toBe("mine\n");
  });
});
