// runProcessGroup: a command runs only once its group is listed with the
// reaper, so no kill of the agent falls between its start and its listing; its
// stdin (given or empty) reaches it after the gate.
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { runProcessGroup } from "../../src/process/process-group.ts";
import { GroupReaper } from "../../src/process/reaper.ts";
import { deadline } from "../support/deadline.ts";
import { tempDir } from "../support/temp-dir.ts";

/**
 * A reaper whose `track` holds the event loop (as a loaded machine may hold the
 * agent between starting a command and listing it) until the command's first act
 * shows on disk or the hold runs out, and records whether it showed.
 */
class HoldingReaper extends GroupReaper {
  startedWhileListing: boolean | undefined;
  constructor(private readonly marker: string) {
    super();
  }
  override track(pgid: number): void {
    const waits = Math.ceil(deadline(2_000) / 20);
    const poll = Bun.spawnSync(["sh", "-c", `i=0; while [ $i -lt ${waits} ]; do [ -e "$1" ] && exit 0; sleep 0.02; i=$((i+1)); done; exit 1`, "sh", this.marker]);
    this.startedWhileListing = poll.exitCode === 0;
    super.track(pgid);
  }
}

describe.skipIf(process.platform === "win32")("runProcessGroup", () => {
  test("the command starts only after its group is listed with the reaper, then runs as before", async () => {
    const dir = tempDir("agent-group-gate-");
    const marker = join(dir, "started");
    const reaper = new HoldingReaper(marker);
    const result = await runProcessGroup({ cmd: ["sh", "-c", `touch "${marker}"; echo ran`], cwd: dir, capture: "combined", maxChars: 1_000, timeoutMs: 60_000, reaper });
    expect(reaper.startedWhileListing).toBe(false);
    expect(existsSync(marker)).toBe(true);
    expect(result.exitCode).toBe(0);
    expect(result.output.text).toBe("ran\n");
  }, 60_000);

  test("stdin: what is given reaches the command whole, after the gate; none given is an empty stdin", async () => {
    const dir = tempDir("agent-group-stdin-");
    const input = new TextEncoder().encode(`${"first line\n"}${"x".repeat(4_000_000)}\nlast line`);
    const given = await runProcessGroup({ cmd: ["sh", "-c", "wc -c"], cwd: dir, stdin: input, capture: "split", maxChars: 1_000, timeoutMs: 60_000 });
    expect(given.exitCode).toBe(0);
    expect(given.stdout!.text.trim()).toBe(String(input.length));
    const none = await runProcessGroup({ cmd: ["sh", "-c", "wc -c"], cwd: dir, capture: "combined", maxChars: 1_000, timeoutMs: 60_000 });
    expect(none.output.text.trim()).toBe("0");
    // A command that reads nothing of a large input still ends normally.
    const unread = await runProcessGroup({ cmd: ["true"], cwd: dir, stdin: input, capture: "combined", maxChars: 1_000, timeoutMs: 60_000 });
    expect(unread.exitCode).toBe(0);
  }, 60_000);
});
