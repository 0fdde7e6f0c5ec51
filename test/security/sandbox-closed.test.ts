import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { attackSuite } from "./attack-fixture.ts";
import { tempDir } from "../support/temp-dir.ts";

// The sandbox fails closed: when the one the settings ask for cannot start,
// every command it would wrap is refused; nothing runs unsandboxed unless the
// user chose danger-full-access.

const setup = attackSuite();

/** A PATH with `sh` and nothing else: no bwrap on it. */
function pathWithoutBwrap(): string {
  const bin = tempDir("agent-no-bwrap-");
  mkdirSync(bin, { recursive: true });
  symlinkSync(Bun.which("sh")!, join(bin, "sh"));
  return bin;
}

describe("no bubblewrap on PATH", () => {
  test("the default sandbox refuses shell and background jobs with one line; the run goes on; danger-full-access runs them", async () => {
    const { root, workspace, attack } = setup();
    const env = { PATH: pathWithoutBwrap() };
    const marker = join(root, "RAN");
    const calls = [
      { name: "shell", arguments: { command: `echo ran > ${marker}` } },
      { name: "shell", arguments: { command: `echo ran > ${marker}`, run_in_background: true } },
      { name: "write_file", arguments: { path: "still-works.txt", content: "yes" } },
    ];
    const refused = await attack(calls, ["--permission-mode", "bypassPermissions"], env);
    expect(refused.code).toBe(0);
    for (const result of refused.results.slice(0, 2)) {
      expect(result.trim().split("\n")).toHaveLength(1);
      expect(result).toMatch(/^refused: commands run only inside the workspace-write sandbox, which cannot start here \(bubblewrap \(bwrap\) is not installed\); install bubblewrap .*--sandbox danger-full-access/);
    }
    expect(refused.stderr).toMatch(/warning: shell commands will be refused: the workspace-write sandbox cannot start here/);
    expect(existsSync(join(workspace, "still-works.txt"))).toBe(true);
    expect(existsSync(marker)).toBe(false);

    const explicit = await attack([calls[0]!], ["--permission-mode", "bypassPermissions", "--sandbox", "read-only"], env);
    expect(explicit.code).toBe(2);
    expect(explicit.stderr).toMatch(/--sandbox read-only cannot be enforced here \(bubblewrap \(bwrap\) is not installed\)/);
    expect(existsSync(marker)).toBe(false);

    const chosen = await attack([calls[0]!], ["--permission-mode", "bypassPermissions", "--sandbox", "danger-full-access"], env);
    expect(chosen.code).toBe(0);
    expect(chosen.results[0]).toMatch(/\[exit code 0\]/);
    expect(existsSync(marker)).toBe(true);
  });
});
