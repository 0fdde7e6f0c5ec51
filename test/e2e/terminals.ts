import { afterEach } from "bun:test";
import { deadline } from "../support/deadline.ts";

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

/**
 * The compiled binary on a pseudo-terminal (160×40, no colour): `until(text, from)`
 * waits for `text` on the screen after offset `from` and returns where it ends;
 * `type` writes keys. The child goes into `terminals`, killed after the test.
 */
export function onPty(terminals: Bun.Subprocess[], command: string[], env: Record<string, string> = {}, timeoutMs = 10_000) {
  let screen = "";
  const decoder = new TextDecoder();
  const child = Bun.spawn(command, {
    // A terminal that edits lines (TERM=dumb, as some CI systems set it, turns off Tab completion in readline).
    env: { ...process.env, TERM: "xterm-256color", NO_COLOR: "1", ...env },
    terminal: { cols: 160, rows: 40, data: (_terminal, data) => (screen += decoder.decode(data, { stream: true })) },
  });
  terminals.push(child);
  const until = async (text: string, from = 0) => {
    const end = Date.now() + deadline(timeoutMs);
    for (;;) {
      const at = screen.indexOf(text, from);
      if (at >= 0) return at + text.length;
      if (Date.now() > end) throw new Error(`${JSON.stringify(text)} never showed; the screen: ${JSON.stringify(screen)}`);
      await Bun.sleep(20);
    }
  };
  const type = (keys: string) => child.terminal!.write(keys);
  return { child, until, type, screen: () => screen };
}
