import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../support/temp-dir.ts";

const terminalModule = join(import.meta.dir, "../../src/process/terminal.ts");
// Prints isTerminal and the stream's own isTTY for stdin, stdout and stderr.
const script = `
  const { isTerminal } = await import(${JSON.stringify(terminalModule)});
  const seen = [0, 1, 2].map((fd) => [isTerminal(fd), [process.stdin, process.stdout, process.stderr][fd].isTTY === true]);
  require("node:fs").writeFileSync(process.env.SEEN_OUT, JSON.stringify(seen));`;

function seenWith(cmd: (bun: string[]) => string[], stdio: "ignore" | "pipe"): [boolean, boolean][] {
  const out = join(tempDir("agent-terminal-"), "seen.json");
  const child = Bun.spawnSync(cmd([process.execPath, "-e", script]), { env: { ...process.env, SEEN_OUT: out }, stdin: stdio, stdout: stdio, stderr: stdio });
  expect(child.exitCode).toBe(0);
  return JSON.parse(readFileSync(out, "utf8")) as [boolean, boolean][];
}

test("isTerminal says what the streams' isTTY says: not for /dev/null or a pipe, yes for a terminal", () => {
  expect(seenWith((bun) => bun, "ignore")).toEqual([[false, false], [false, false], [false, false]]);
  expect(seenWith((bun) => bun, "pipe")).toEqual([[false, false], [false, false], [false, false]]);
  const script = Bun.which("script");
  if (script === null) return;
  // util-linux script(1) runs the command on a new pseudo-terminal.
  const quoted = (words: string[]) => words.map((word) => `'${word.replaceAll("'", `'\\''`)}'`).join(" ");
  expect(seenWith((bun) => [script, "-qec", quoted(bun), "/dev/null"], "pipe")).toEqual([[true, true], [true, true], [true, true]]);
});
