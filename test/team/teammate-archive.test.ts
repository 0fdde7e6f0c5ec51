import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { archiveHistory, wasRemoved } from "../../src/runtime/file-history.ts";
import { tempDir } from "../support/temp-dir.ts";

describe("teammate archive", () => {
  test("a history moves aside under a time stamp; a second one in the same instant gets a suffix", () => {
    const dir = tempDir("agent-archive-");
    mkdirSync(join(dir, "agents"));
    const at = new Date("2026-03-01T12:00:00.123Z");
    writeFileSync(join(dir, "agents", "alice.jsonl"), "first\n");
    expect(archiveHistory(dir, "alice", at)).toBe("agents/removed/alice-2026-03-01T120000Z.jsonl");
    writeFileSync(join(dir, "agents", "alice.jsonl"), "second\n");
    expect(archiveHistory(dir, "alice", at)).toBe("agents/removed/alice-2026-03-01T120000Z.1.jsonl");
    expect(readFileSync(join(dir, "agents/removed/alice-2026-03-01T120000Z.jsonl"), "utf8")).toBe("first\n");
    expect(archiveHistory(dir, "alice", at)).toBeUndefined();
  });

  test("wasRemoved tells alice from alice-2", () => {
    const dir = tempDir("agent-archive-");
    expect(wasRemoved(dir, "alice")).toBe(false);
    mkdirSync(join(dir, "agents"));
    writeFileSync(join(dir, "agents", "alice-2.jsonl"), "x\n");
    archiveHistory(dir, "alice-2", new Date("2026-03-01T12:00:00.000Z"));
    expect(wasRemoved(dir, "alice-2")).toBe(true);
    expect(wasRemoved(dir, "alice")).toBe(false);
  });
});
