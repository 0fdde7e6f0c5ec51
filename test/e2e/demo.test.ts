import { beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { DEMO_ANSWER, DEMO_FILES } from "../../examples/team-demo.ts";
import { REPO_ROOT, ensureBinary } from "./agent-binary.ts";

// `npm run demo`, the README's first command, after its build step: the compiled
// binary's Lead and two teammates against the scripted server, offline.

beforeAll(() => {
  ensureBinary();
}, 120_000);

test("the demo runs a Lead and two teammates offline and shows what they wrote", async () => {
  // As a newcomer runs it: no key, no state dir, no config of the test's own.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(AGENT_|OPENAI_)/.test(name)));
  const child = Bun.spawn([process.execPath, join(REPO_ROOT, "examples", "team-demo.ts")], { cwd: REPO_ROOT, env, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  // The demo keeps its workspace for a newcomer to look at; a test run leaves nothing behind.
  const kept = /is kept in (\S+)$/m.exec(stdout)?.[1];
  if (kept !== undefined) rmSync(dirname(kept), { recursive: true, force: true });
  expect({ code, stderr: code === 0 ? "" : stderr }).toEqual({ code: 0, stderr: "" });
  expect(stdout).toContain(`${DEMO_ANSWER}\n`);
  expect(stdout).toMatch(/^alice +backend +idle /m);
  expect(stdout).toMatch(/^bob +docs +idle /m);
  for (const content of Object.values(DEMO_FILES)) expect(stdout).toContain(content);
  // One line a batch: the two results may share one event turn.
  expect(stderr).toMatch(/^\[lead\] event turn: .*result from alice/m);
  expect(stderr).toMatch(/^\[lead\] event turn: .*result from bob/m);
}, 60_000);
