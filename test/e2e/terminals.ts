import { afterEach } from "bun:test";

/**
 * A list the calling test file pushes its pseudo-terminal children into; each
 * is killed and reaped after every test, so a failed assertion never leaves a
 * binary running on a PTY. Call it at the top level of the test file: the hook
 * belongs to that file.
 */
export function terminalsKilledAfterEach(): Bun.Subprocess[] {
  const terminals: Bun.Subprocess[] = [];
  afterEach(async () => {
    for (const child of terminals.splice(0)) {
      child.kill("SIGKILL");
      await child.exited;
    }
  });
  return terminals;
}
