import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CorruptStateFileError } from "../../src/core/errors.ts";
import { FileTeamRegistry, type TeammateRecord } from "../../src/team/team-registry.ts";
import { backendRows } from "../support/store-backends.ts";
import { tempDir } from "../support/temp-dir.ts";

const teammate = (name: string, second: number, overrides: Partial<TeammateRecord> = {}): TeammateRecord => ({
  name,
  role: `${name}'s role`,
  state: "idle",
  createdAtUtc: `2026-01-01T00:00:${String(second).padStart(2, "0")}.000Z`,
  updatedAtUtc: `2026-01-01T00:00:${String(second).padStart(2, "0")}.000Z`,
  ...overrides,
});

describe.each(backendRows())("TeamRegistry (%s store)", (_name, backend) => {

  test("put adds or replaces by name, remove drops one; every process reads them oldest first", async () => {
    const session = await backend.session();
    const registry = session.open().team;
    expect(await registry.read()).toEqual([]);
    await registry.put(teammate("carol", 3));
    await registry.put(teammate("alice", 1, { agent: "reviewer", model: "small", pendingTaskId: "0190b8a6-7c1e-7d3a-9f00-000000000001" }));
    await registry.put(teammate("bob", 2));
    await registry.put(teammate("alice", 1, { state: "failed", failure: "model refused", agent: "reviewer", model: "small" }));
    const other = session.open().team;
    expect(await other.read()).toEqual([
      teammate("alice", 1, { state: "failed", failure: "model refused", agent: "reviewer", model: "small" }),
      teammate("bob", 2),
      teammate("carol", 3),
    ]);
    await other.remove("bob");
    await other.remove("nobody");
    expect((await registry.read()).map((t) => t.name)).toEqual(["alice", "carol"]);
  });

  test("change stores several records and removals in one write; a bad record stores none of them", async () => {
    const session = await backend.session();
    const registry = session.open().team;
    await registry.put(teammate("alice", 1));
    await registry.put(teammate("bob", 2));
    await registry.change([teammate("carol", 3), teammate("alice", 1, { state: "running" })], ["bob", "nobody"]);
    expect(await session.open().team.read()).toEqual([teammate("alice", 1, { state: "running" }), teammate("carol", 3)]);
    await expect(registry.change([teammate("dave", 4), { ...teammate("erin", 5), state: "dancing" as never }], ["carol"])).rejects.toThrow();
    expect((await registry.read()).map((t) => t.name)).toEqual(["alice", "carol"]);
  });

  test("a record that is not valid is refused before anything is stored", async () => {
    const session = await backend.session();
    const registry = session.open().team;
    await registry.put(teammate("alice", 1));
    await expect(registry.put({ ...teammate("bob", 2), state: "dancing" as never })).rejects.toThrow();
    await expect(registry.put({ ...teammate("bob", 2), name: "Not A Name" })).rejects.toThrow();
    expect((await registry.read()).map((t) => t.name)).toEqual(["alice"]);
  });

  test("changes made at once through two registries are all kept", async () => {
    const session = await backend.session();
    const [a, b] = [session.open().team, session.open().team];
    await Promise.all([a.put(teammate("alice", 1)), b.put(teammate("bob", 2)), a.put(teammate("carol", 3)), b.put(teammate("dave", 4))]);
    expect((await a.read()).map((t) => t.name)).toEqual(["alice", "bob", "carol", "dave"]);
  });
});

describe("FileTeamRegistry", () => {
  test("team.json, as before: version 1, teammates oldest first; a corrupt file is an error, never empty", async () => {
    const stateDir = join(tempDir("agent-team-"), "state");
    const registry = new FileTeamRegistry(stateDir);
    await registry.put(teammate("bob", 2));
    await registry.put(teammate("alice", 1));
    expect(JSON.parse(readFileSync(registry.path, "utf8"))).toEqual({ version: 1, teammates: [teammate("alice", 1), teammate("bob", 2)] });
    writeFileSync(registry.path, "{");
    await expect(registry.read()).rejects.toBeInstanceOf(CorruptStateFileError);
    await expect(registry.put(teammate("carol", 3))).rejects.toBeInstanceOf(CorruptStateFileError);
    expect(readFileSync(registry.path, "utf8")).toBe("{");
  });

  test("a registry keeps what it last read or wrote only while the file says the same: another's write and a hand edit of the same length are read", async () => {
    const stateDir = join(tempDir("agent-team-"), "state");
    const [mine, other] = [new FileTeamRegistry(stateDir), new FileTeamRegistry(stateDir)];
    await mine.put(teammate("alice", 1));
    await mine.put(teammate("bob", 2));
    // What a read returns is the caller's: changing it changes nothing kept.
    (await mine.read()).pop();
    expect((await mine.read()).map((t) => t.name)).toEqual(["alice", "bob"]);
    await other.put(teammate("alice", 1, { state: "running" }));
    expect((await mine.read()).map((t) => t.state)).toEqual(["running", "idle"]);
    // Same length, other content: no size or time of the file may stand for its text.
    writeFileSync(mine.path, readFileSync(mine.path, "utf8").replace("bob's role", "bob's task"));
    expect((await mine.read()).map((t) => t.role)).toEqual(["alice's role", "bob's task"]);
    await mine.put(teammate("carol", 3));
    expect((await other.read()).map((t) => [t.name, t.role, t.state])).toEqual([
      ["alice", "alice's role", "running"],
      ["bob", "bob's task", "idle"],
      ["carol", "carol's role", "idle"],
    ]);
  });
});
