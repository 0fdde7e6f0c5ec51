import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { FileTeammateLeases } from "../../src/leases/file-leases.ts";
import { tempDir } from "../support/temp-dir.ts";
import { leaseContract } from "./lease-contract.ts";

describe("FileTeammateLeases", () => {
  leaseContract(async (clock) => new FileTeammateLeases(tempDir("agent-leases-"), { clock }));
});

describe("FileTeammateLeases across processes", () => {
  test("of eight processes taking one free lease at once, exactly one wins", async () => {
    const session = tempDir("agent-leases-mp-");
    const script = join(import.meta.dir, "..", "fixtures", "take-lease.ts");
    const children = Array.from({ length: 8 }, (_, i) =>
      Bun.spawn([process.execPath, script, session, "alice", `taker-${i}`], { stdout: "pipe", stderr: "pipe" }),
    );
    const outputs = await Promise.all(children.map(async (child) => ({ code: await child.exited, out: (await new Response(child.stdout).text()).trim(), err: await new Response(child.stderr).text() })));
    expect(outputs.filter((output) => output.code !== 0)).toEqual([]);
    const winners = outputs.filter((output) => output.out === "won");
    expect(winners).toHaveLength(1);
    expect(outputs.filter((output) => output.out === "refused")).toHaveLength(7);
  }, 60_000);
});
