import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { z } from "zod";
import { lazySchema } from "../../src/core/lazy-schema.ts";

describe("lazySchema", () => {
  test("builds its schema on the first use only, once, and parses, composes and describes itself as the schema would", () => {
    let builds = 0;
    const Point = lazySchema(() => {
      builds++;
      return z.strictObject({ x: z.number().describe("across"), y: z.number() });
    });
    const Line = lazySchema(() => z.strictObject({ from: Point, to: Point.optional() }));
    expect(builds).toBe(0);
    expect(Line.parse({ from: { x: 1, y: 2 } })).toEqual({ from: { x: 1, y: 2 } });
    expect(builds).toBe(1);
    expect(Point.safeParse({ x: 1, y: 2, z: 3 }).success).toBe(false);
    expect(builds).toBe(1);
    const eager = z.strictObject({ from: z.strictObject({ x: z.number().describe("across"), y: z.number() }) });
    const described: unknown = z.toJSONSchema(z.strictObject({ from: Point }));
    expect(described).toEqual(z.toJSONSchema(eager));
    expect(Object.keys(Point.unwrap().shape)).toEqual(["x", "y"]);
  });
});

/** Every `.ts` file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
  );
}

test("no module builds a zod schema when it is evaluated: a top-level schema is a lazySchema", () => {
  // Building them all was ~20 ms of every run's start (test/cli/startup-modules.test.ts
  // checks the run's path; this checks the modules no run of the test loads).
  const src = join(import.meta.dir, "..", "..", "src");
  const eager = sources(src).flatMap((file) =>
    [...readFileSync(file, "utf8").matchAll(/^(?:export )?const (\w+)(?:: [^=\n]+)? = z(?:\.|\n)/gm)].map((match) => `${relative(src, file)}: ${match[1]}`),
  );
  expect(eager).toEqual([]);
});
