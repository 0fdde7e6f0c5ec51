// A run's recorded flags: the plain check that writes them before the first
// model request answers as the schema does, and what it writes reads back sealed.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { LEAD_MODES, PERMISSION_MODES } from "../../src/config/modes.ts";
import { SANDBOX_MODES } from "../../src/security/sandbox/modes.ts";
import { RunFlags, plainRunFlags, readRunFlags, writeRunFlags, writeRunFlagsOffLoop } from "../../src/sessions/run-flags.ts";
import { SessionMarker } from "../../src/sessions/session-marker.ts";
import { tempDir } from "../support/temp-dir.ts";

const SESSION = "0190b8a6-7c1e-7d3a-9f00-000000000001";

/** What the schema answers: the value it returns, or that it refuses. */
function bySchema(flags: unknown): string {
  const parsed = RunFlags.safeParse(flags);
  return parsed.success ? JSON.stringify(parsed.data) : "refused";
}

/** What the plain check answers; where it passes, the schema decides (as runFlagsText does). */
function byPlain(flags: unknown): string {
  const plain = plainRunFlags(flags as Record<string, unknown>);
  return plain === undefined ? bySchema(flags) : JSON.stringify(plain);
}

const FULL = {
  permissionMode: "acceptEdits",
  allow: ["shell(npm test*)", "read_file"],
  deny: ["shell(rm *)"],
  sandbox: "workspace-write",
  trustProject: true,
  addDirs: ["/tmp/extra"],
  leadMode: "delegate",
};

/** A seeded generator, so a failure names a case that can be run again. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

const ODD_VALUES: unknown[] = [undefined, null, true, false, 0, 1, "", "x", [], [1], ["a", 2], {}, { a: 1 }, "plan", "default", "delegate", "off", ["a"]];

describe("run flags", () => {
  test("the plain check answers exactly as the schema: every mode, each key alone, in any order, and none", () => {
    const cases: Record<string, unknown>[] = [{}, FULL, Object.fromEntries(Object.entries(FULL).reverse())];
    for (const mode of PERMISSION_MODES) cases.push({ permissionMode: mode });
    for (const mode of SANDBOX_MODES) cases.push({ sandbox: mode });
    for (const mode of LEAD_MODES) cases.push({ leadMode: mode });
    for (const [key, value] of Object.entries(FULL)) cases.push({ [key]: value }, { ...FULL, [key]: undefined });
    for (const flags of cases) {
      expect(plainRunFlags(flags)).toBeDefined();
      expect(byPlain(flags)).toBe(bySchema(flags));
    }
    // The keys come out in the schema's order whatever order they came in.
    expect(Object.keys(plainRunFlags(Object.fromEntries(Object.entries(FULL).reverse()))!)).toEqual(Object.keys(FULL));
  });

  test("over 5 000 seeded mutations (a key's value replaced, a key added or removed) the two never disagree", () => {
    const next = random(47);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
    let refused = 0;
    for (let i = 0; i < 5_000; i++) {
      const flags: Record<string, unknown> = { ...FULL };
      for (let change = 0; change < 1 + Math.floor(next() * 3); change++) {
        const what = next();
        if (what < 0.5) flags[pick(Object.keys(FULL))] = pick(ODD_VALUES);
        else if (what < 0.7) delete flags[pick(Object.keys(FULL))];
        else flags[pick(["extra", "permission_mode", "addDir", "__proto__x"])] = pick(ODD_VALUES);
      }
      const schema = bySchema(flags);
      if (schema === "refused") refused += 1;
      expect({ case: i, flags, answer: byPlain(flags) }).toEqual({ case: i, flags, answer: schema });
    }
    // The mutations reach both answers.
    expect(refused).toBeGreaterThan(500);
    expect(refused).toBeLessThan(4_500);
  });

  test("flags written through the plain check read back under the user's seal, and not under another's", async () => {
    const config = tempDir("agent-run-flags-");
    const marker = new SessionMarker(join(config, "agent", "session-key"));
    const dir = tempDir("agent-run-flags-session-");
    const given = Object.fromEntries(Object.entries(FULL).reverse()) as RunFlags;
    await writeRunFlagsOffLoop(dir, SESSION, given, marker);
    expect(readRunFlags(dir, SESSION, marker)).toEqual(FULL as RunFlags);
    writeRunFlags(dir, SESSION, { allow: ["read_file"] }, marker);
    expect(readRunFlags(dir, SESSION, marker)).toEqual({ allow: ["read_file"] });
    expect(readRunFlags(dir, SESSION, new SessionMarker(join(tempDir("agent-run-flags-other-"), "session-key")))).toBeUndefined();
  });
});
