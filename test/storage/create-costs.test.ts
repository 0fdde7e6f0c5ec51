import { describe, expect, test } from "bun:test";
import { closeSync, constants, readFileSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { CreateCosts, ensureDirWhereCheap, FILE_MODE, openWhereCheap } from "../../src/storage/atomic-file.ts";
import { tempDir } from "../support/temp-dir.ts";

// Where a create runs: on the event loop while creates are cheap, on the thread
// pool once they are slow, with one in 16 still on the loop to notice the change.

const placements = (costs: CreateCosts, n: number) => Array.from({ length: n }, () => (costs.offLoop() ? "pool" : "loop"));

describe("CreateCosts", () => {
  test("cheap creates stay on the event loop", () => {
    const costs = new CreateCosts();
    expect(placements(costs, 3)).toEqual(["loop", "loop", "loop"]);
    for (let i = 0; i < 50; i++) costs.measured(0.02);
    expect(placements(costs, 20).every((where) => where === "loop")).toBe(true);
  });

  test("slow creates go to the pool, one in 16 still measured on the loop; cheap again, they come back", () => {
    const costs = new CreateCosts();
    costs.measured(1);
    const slow = placements(costs, 32);
    expect(slow.filter((where) => where === "loop").length).toBe(2);
    expect(slow[15]).toBe("loop");
    expect(slow[31]).toBe("loop");
    // The probes find creates cheap again: a few of them bring the average under the line.
    for (let i = 0; i < 4; i++) costs.measured(0.01);
    expect(placements(costs, 3)).toEqual(["loop", "loop", "loop"]);
  });

  test("one slow create among cheap ones moves the average only for a while", () => {
    const costs = new CreateCosts();
    for (let i = 0; i < 10; i++) costs.measured(0.01);
    costs.measured(0.5);
    expect(costs.offLoop()).toBe(true);
    for (let i = 0; i < 6; i++) costs.measured(0.01);
    expect(costs.offLoop()).toBe(false);
  });
});

describe("openWhereCheap and ensureDirWhereCheap, both placements, real files", () => {
  for (const slow of [false, true]) {
    test(slow ? "on the pool (creates slow)" : "on the loop (creates cheap)", async () => {
      const root = tempDir("create-costs-");
      const costs = new CreateCosts();
      if (slow) costs.measured(5);
      const dir = join(root, "a", "b");
      await ensureDirWhereCheap(dir, undefined, costs);
      expect(statSync(dir).isDirectory()).toBe(true);
      // Made again: nothing to do, no error.
      await ensureDirWhereCheap(dir, undefined, costs);
      const file = join(dir, "f");
      const fd = await openWhereCheap(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, FILE_MODE, undefined, costs);
      writeSync(fd, "made");
      closeSync(fd);
      expect(readFileSync(file, "utf8")).toBe("made");
      expect(statSync(file).mode & 0o777).toBe(FILE_MODE);
      // An exclusive create of a file that is there fails the same way in both places.
      const again = openWhereCheap(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, FILE_MODE, undefined, costs);
      await expect(again).rejects.toMatchObject({ code: "EEXIST" });
    });
  }
});
