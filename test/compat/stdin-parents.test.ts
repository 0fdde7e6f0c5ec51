import { describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest } from "../support/model-server.ts";
import { tempDir } from "../support/temp-dir.ts";
import { AGENT_BINARY } from "../e2e/agent-binary.ts";
import { scriptedServers } from "../e2e/run-fixture.ts";

// Programs drive `agent run` as they drive `claude -p`: a Node.js parent's
// `child_process.spawn` gives the child a socket for stdin, Python's subprocess
// a pipe, a shell a pipe. Each writes the prompt (or context beside a prompt
// argument) and closes stdin; the model request the scripted server received
// carries the text. A parent that holds stdin open and writes nothing gets
// what `claude -p` gives it: the run goes on without stdin after 3 s.

const startServer = scriptedServers();

/** The parents: each runs AGENT with the argv in $ARGS (JSON) and writes $INPUT to its stdin, or holds it open when $HOLD is set. */
const PARENTS = {
  node: [
    "node",
    "-e",
    `const { spawn } = require("node:child_process");
const child = spawn(process.env.AGENT, JSON.parse(process.env.ARGS), { stdio: ["pipe", "inherit", "inherit"] });
if (process.env.HOLD) child.on("exit", () => child.stdin.destroy()); else child.stdin.end(process.env.INPUT);
child.on("exit", (code) => process.exit(code ?? 1));`,
  ],
  python: [
    "python3",
    "-c",
    `import json, os, subprocess, sys
r = subprocess.run([os.environ["AGENT"], *json.loads(os.environ["ARGS"])], input=os.environ["INPUT"].encode())
sys.exit(r.returncode)`,
  ],
  shell: ["bash", "-c", `printf '%s' "$INPUT" | "$AGENT" "$@"`, "parent"],
} as const;

type Parent = keyof typeof PARENTS;

async function runFrom(parent: Parent, args: string[], input: string, options: { hold?: boolean; reply?: string } = {}) {
  const server = startServer(options.reply === undefined ? [] : [{ text: options.reply }]);
  const root = realpathSync(tempDir("agent-stdin-"));
  const workspace = join(root, "workspace");
  mkdirSync(workspace);
  const argv = ["run", "--workspace", workspace, "--state-dir", join(root, "state"), ...args];
  const command = parent === "shell" ? [...PARENTS.shell, ...argv] : [...PARENTS[parent]];
  const child = Bun.spawn(command, {
    env: {
      ...process.env,
      AGENT: AGENT_BINARY,
      ARGS: JSON.stringify(argv),
      INPUT: input,
      ...(options.hold ? { HOLD: "1" } : {}),
      OPENAI_BASE_URL: server.url,
      OPENAI_API_KEY: "test-key",
      NO_COLOR: "1",
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr, server };
}

const lastUser = (request: RecordedRequest | undefined) => request?.body.messages.findLast((m) => m.role === "user")?.content;

describe.each(Object.keys(PARENTS) as Parent[])("a %s parent", (parent) => {
  test("delivers the prompt on stdin", async () => {
    const { code, stdout, stderr, server } = await runFrom(parent, [], "name the files here\n", { reply: "none" });
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout).toBe("none\n");
    expect(lastUser(server.requests[0])).toBe("name the files here\n");
    server.assertDone();
  });

  test("delivers context on stdin beside a prompt argument", async () => {
    const diff = "diff --git a/x b/x\n+added line\n";
    const { code, stdout, stderr, server } = await runFrom(parent, ["review this"], diff, { reply: "looks fine" });
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout).toBe("looks fine\n");
    expect(lastUser(server.requests[0])).toBe(`review this\n\n<stdin>\n${diff}</stdin>`);
    server.assertDone();
  });
});

describe("a Node.js parent that holds stdin open and writes nothing", () => {
  test("with a prompt argument: the run goes on without stdin after 3 s, saying so", async () => {
    const { code, stdout, stderr, server } = await runFrom("node", ["say hi"], "", { hold: true, reply: "hi" });
    expect(code).toBe(0);
    expect(stdout).toBe("hi\n");
    expect(stderr).toContain("nothing arrived on stdin in 3s and it is still open: going on without it");
    expect(lastUser(server.requests[0])).toBe("say hi");
    server.assertDone();
  });

  test("without one: no prompt, exit 2, naming the open stdin", async () => {
    const { code, stderr, server } = await runFrom("node", [], "", { hold: true });
    expect(code).toBe(2);
    expect(stderr).toContain("no prompt: stdin is open but nothing was written to it in 3s");
    expect(server.requests).toHaveLength(0);
  });
});
