import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { relative, resolve } from "node:path";

// Tests wait for events, not for time (docs/development.md): a fixed sleep
// followed by an expectation proves only that nothing happened *yet*, and on a
// loaded machine that a slow thing had not happened yet.

const TEST = resolve(import.meta.dir, "..");

/** A statement that is only a fixed sleep (a sleep inside a poll loop is a wait for a condition, not this). */
const BARE_SLEEP = /^\s*await Bun\.sleep\([^)]*\);\s*(\/\/.*)?$/;
const EXPECT = /^\s*expect\(/;

/** `file:line` of each bare sleep whose next statement (past comments and blank lines) is an expectation. */
export function sleepsThenExpects(files: Iterable<[string, string]>): string[] {
  const found: string[] = [];
  for (const [path, text] of files) {
    const lines = text.split("\n");
    lines.forEach((line, index) => {
      if (!BARE_SLEEP.test(line)) return;
      let next = index + 1;
      while (next < lines.length && /^\s*(\/\/.*)?$/.test(lines[next]!)) next += 1;
      if (EXPECT.test(lines[next] ?? "")) found.push(`${path}:${index + 1}`);
    });
  }
  return found;
}

function testFiles(): [string, string][] {
  return [...new Bun.Glob("**/*.ts").scanSync(TEST)].map((path) => [relative(TEST, resolve(TEST, path)), readFileSync(resolve(TEST, path), "utf8")]);
}

describe("waits in tests", () => {
  test("no fixed sleep is followed directly by an expectation", () => {
    const found = sleepsThenExpects(testFiles());
    expect(found, `wait for the event instead (test/support/deadline.ts: waitUntil, within; a barrier; the server's record of a closed connection):\n${found.join("\n")}`).toEqual([]);
  });

  test("the check finds what it is for, and leaves poll loops and waits alone", () => {
    const sample = [
      "await Bun.sleep(100);\nexpect(server.requests).toHaveLength(0);",
      "await Bun.sleep(20); // let it settle\n\n  // nothing yet\n  expect(sent).toBe(false);",
      "for (let i = 0; i < 9 && !done; i++) await Bun.sleep(5);\nexpect(done).toBe(true);",
      "await waitUntil(() => done, 'done');\nexpect(done).toBe(true);",
      "await Bun.sleep(10);\nio.input.write('y');",
    ];
    expect(sleepsThenExpects(sample.map((text, i) => [`sample${i}.ts`, text]))).toEqual(["sample0.ts:1", "sample1.ts:1"]);
  });
});
