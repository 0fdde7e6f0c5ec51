import { describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ForeignSessionError, SessionKeyError } from "../../src/sessions/session-errors.ts";
import { SessionMarker } from "../../src/sessions/session-marker.ts";
import { planSession } from "../../src/sessions/session-plan.ts";
import { SessionStore } from "../../src/sessions/session-store.ts";
import { tempDir } from "../support/temp-dir.ts";

const keyIn = (dir: string) => join(dir, "agent", "session-key");

describe("SessionMarker", () => {
  test("the key is made on first signing only, 0600 in the config dir; owns() accepts its own marks and nothing else", () => {
    const config = tempDir("agent-marker-");
    const marker = new SessionMarker(keyIn(config));
    const id = "0190b8a6-7c1e-7d3a-9f00-000000000001";
    // Checking creates nothing: without a key no session is this user's.
    expect(marker.owns({ id, marker: "0".repeat(64) })).toBe(false);
    expect(() => statSync(keyIn(config))).toThrow();
    const mark = marker.sign(id);
    expect(mark).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(keyIn(config)).mode & 0o777).toBe(0o600);
    expect(readFileSync(keyIn(config), "utf8")).toMatch(/^[0-9a-f]{64}\n$/);
    expect(readdirSync(join(config, "agent"))).toEqual(["session-key"]);
    // Another process of the same user reads the same key.
    const again = new SessionMarker(keyIn(config));
    expect(again.owns({ id, marker: mark })).toBe(true);
    expect(again.sign(id)).toBe(mark);
    expect(again.owns({ id })).toBe(false);
    expect(again.owns({ id: "0190b8a6-7c1e-7d3a-9f00-000000000002", marker: mark })).toBe(false);
    // Another user's key marks the same id differently.
    const other = new SessionMarker(keyIn(tempDir("agent-marker-other-")));
    expect(other.owns({ id, marker: mark })).toBe(false);
    expect(other.sign(id)).not.toBe(mark);
  });

  test("a key file that holds no key is exit 5 naming it, never replaced", () => {
    const config = tempDir("agent-marker-");
    mkdirSync(join(config, "agent"));
    writeFileSync(keyIn(config), "not a key\n");
    const marker = new SessionMarker(keyIn(config));
    expect(() => marker.sign("0190b8a6-7c1e-7d3a-9f00-000000000001")).toThrow(SessionKeyError);
    expect(readFileSync(keyIn(config), "utf8")).toBe("not a key\n");
  });
});

describe("SessionStore with markers", () => {
  test("created sessions are marked; foreign ones are listed but not most recent, refused by --resume/--session until adopted", () => {
    const root = join(tempDir("agent-sessions-"), "state");
    const mine = new SessionStore(root, { marker: new SessionMarker(keyIn(tempDir("agent-me-"))) });
    const theirs = new SessionStore(root, { marker: new SessionMarker(keyIn(tempDir("agent-them-"))) });
    const own = mine.create();
    // Used after ours: --continue must still pass over it.
    const planted = theirs.touch(theirs.create(), "planted");
    expect(mine.list().map((s) => s.id)).toEqual([planted.id, own.id]);
    expect(mine.own().map((s) => s.id)).toEqual([own.id]);
    expect(mine.mostRecent()?.id).toBe(own.id);
    expect(planSession(mine, { continue: true })).toEqual({ kind: "existing", meta: mine.find(own.id) });
    expect(() => planSession(mine, { resume: planted.id })).toThrow(ForeignSessionError);
    const adopted = mine.adopt(planted);
    expect(mine.owns(adopted)).toBe(true);
    expect(mine.owns(mine.find(planted.id))).toBe(true);
    expect(theirs.owns(mine.find(planted.id))).toBe(false);
    expect(planSession(mine, { resume: planted.id })).toMatchObject({ kind: "existing", meta: { id: planted.id } });
  });

  test("a session directory that is a symlink is not adopted: the marker would be written through it", () => {
    const root = join(tempDir("agent-sessions-"), "state");
    const elsewhere = join(tempDir("agent-elsewhere-"), "state");
    const theirs = new SessionStore(elsewhere, { marker: new SessionMarker(keyIn(tempDir("agent-them-"))) });
    const planted = theirs.create();
    mkdirSync(join(root, "sessions"), { recursive: true });
    symlinkSync(theirs.dirOf(planted.id), join(root, "sessions", planted.id));
    const mine = new SessionStore(root, { marker: new SessionMarker(keyIn(tempDir("agent-me-"))) });
    expect(mine.list().map((s) => s.id)).toEqual([planted.id]);
    expect(() => mine.adopt(planted)).toThrow(/is a symlink/);
    expect(theirs.find(planted.id).marker).toBe(planted.marker);
  });
});
