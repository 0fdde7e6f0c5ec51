import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedRequest } from "../support/model-server.ts";
import { EVERYTHING, TINY, eventually, processesWithEnv } from "../mcp/helpers.ts";
import { AGENT_BINARY, runAgent } from "./agent-binary.ts";
import { parseStream, runSetup, scriptedServers } from "./run-fixture.ts";

// MCP servers with the compiled binary: server-everything from npm over stdio,
// and the hand-written tiny server for hooks, rules and killing the runtime.

const startServer = scriptedServers();

const toolNames = (r: RecordedRequest) => (r.body.tools ?? []).map((tool) => tool.function.name);
const lastToolResult = (r: RecordedRequest) => String(r.body.messages.at(-1)!.content);

/** A --mcp-config file; each server gets a marker in its environment, to find its processes. */
function serversFile(
  root: string,
  servers: Record<string, Record<string, unknown>>,
  marker = `AGENT_MCP_TEST_${crypto.randomUUID().replaceAll("-", "")}`,
  file = "servers.json",
): { path: string; marker: string } {
  const withMarker = Object.fromEntries(
    Object.entries(servers).map(([name, config]) => [name, { ...config, env: { ...(config.env as object), MCP_TEST_MARKER: marker } }]),
  );
  const path = join(root, file);
  writeFileSync(path, JSON.stringify({ mcpServers: withMarker }));
  return { path, marker };
}

const everything = { command: "node", args: [EVERYTHING, "stdio"] };
const tiny = (...flags: string[]) => ({ command: process.execPath, args: [TINY, ...flags] });

describe("agent run --mcp-config", () => {
  test("server-everything: its tools follow the built-in ones, a call's result reaches the next request, the init line lists it", async () => {
    const server = startServer([
      {
        check: (r) => {
          const names = toolNames(r);
          // The built-in tools first (their order is pinned by test/runtime/lead-tools.test.ts), then the server's.
          const first = names.findIndex((name) => name.startsWith("mcp__"));
          // Every built-in tool (however many the team features add) comes before the first MCP tool.
          expect(names.slice(0, first)).toEqual(expect.arrayContaining(["shell", "spawn_teammate", "send_message"]));
          const mcp = names.slice(first);
          expect(mcp).toContain("mcp__everything__echo");
          expect(mcp.every((name) => name.startsWith("mcp__everything__"))).toBe(true);
        },
        toolCalls: [{ name: "mcp__everything__echo", arguments: { message: "hello from the model" } }],
      },
      { check: (r) => expect(lastToolResult(r)).toBe("Echo: hello from the model"), text: "done" },
    ]);
    const { run, root } = runSetup();
    const { path, marker } = serversFile(root, { everything });
    const result = await run(["--base-url", server.url, "--mcp-config", path, "--output", "stream-json", "go"]);
    expect(result.code).toBe(0);
    const lines = parseStream(result.stdout);
    const init = lines[0] as { mcp_servers?: { name: string; status: string; tools: string[] }[] };
    expect(init.mcp_servers?.[0]).toMatchObject({ name: "everything", status: "connected" });
    expect(init.mcp_servers?.[0]?.tools).toContain("mcp__everything__echo");
    server.assertDone();
    expect(processesWithEnv(marker)).toEqual([]);
  });

  test("agent mcp list shows the servers of every --mcp-config file, their tools, and a server that cannot start", async () => {
    const { root, workspace } = runSetup();
    const { path: first, marker } = serversFile(root, { everything });
    const { path: second } = serversFile(root, { broken: tiny("--fail-start") }, marker, "more.json");
    const args = ["mcp", "list", "--mcp-config", first, "--mcp-config", second, "--workspace", workspace];
    const text = await runAgent(args);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("everything (stdio): connected, ");
    expect(text.stdout).toContain("  mcp__everything__echo\n");
    expect(text.stdout).toContain("broken: failed: failed to start");
    expect(text.stdout).toContain("cannot open the database");
    const json = await runAgent([...args, "--json"]);
    const parsed = JSON.parse(json.stdout) as { mcp_servers: { name: string; status: string }[] };
    expect(parsed.mcp_servers.map((s) => [s.name, s.status])).toEqual([
      ["everything", "connected"],
      ["broken", "failed"],
    ]);
    expect(processesWithEnv(marker)).toEqual([]);
  });

  test("a bad --mcp-config file is exit 2 naming the file and the key", async () => {
    const { root, workspace } = runSetup();
    const path = join(root, "bad.json");
    writeFileSync(path, JSON.stringify({ mcpServers: { x: { command: "a", colour: "blue" } } }));
    const result = await runAgent(["mcp", "list", "--mcp-config", path, "--workspace", workspace]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`agent: --mcp-config file ${path}: unknown key "colour" in mcpServers.x; see docs/mcp.md for the shape\n`);
  });

  test("hooks and permission rules apply to MCP tools", async () => {
    const server = startServer([
      { toolCalls: [{ name: "mcp__tiny__slow", arguments: { ms: 1 } }] },
      {
        check: (r) => expect(lastToolResult(r)).toBe("blocked by PreToolUse hook: no slow calls"),
        toolCalls: [{ name: "mcp__tiny__fails", arguments: {} }],
      },
      {
        check: (r) => expect(lastToolResult(r)).toContain('matches the deny rule "mcp__tiny__fails"'),
        toolCalls: [{ name: "mcp__tiny__big", arguments: {} }],
      },
      {
        // No rule allows it: an execute tool, denied headless with the rule that would allow it.
        check: (r) => expect(lastToolResult(r)).toContain('permission denied: mcp__tiny__big needs approval'),
        toolCalls: [{ name: "mcp__tiny__picture", arguments: {} }],
      },
      { check: (r) => expect(lastToolResult(r)).toContain("here it is"), text: "done" },
    ]);
    const { run, root, workspace } = runSetup();
    const { path, marker } = serversFile(root, { tiny: tiny() });
    mkdirSync(join(workspace, ".agent"));
    writeFileSync(
      join(workspace, ".agent", "config.json"),
      JSON.stringify({
        hooks: {
          PreToolUse: [{ matcher: "mcp__tiny__slow", command: "echo 'no slow calls' >&2; exit 2" }],
          PostToolUse: [{ matcher: "mcp__.*", command: "cat >> post-hook.jsonl; echo >> post-hook.jsonl" }],
        },
      }),
    );
    const result = await run(["--base-url", server.url, "--mcp-config", path, "--trust-project", "--allow", "mcp__tiny__pic*", "--allow", "mcp__tiny__fails", "--deny", "mcp__tiny__fails", "go"]);
    expect(result.code).toBe(0);
    server.assertDone();
    const post = readFileSync(join(workspace, "post-hook.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line));
    expect(post.map((event) => event.tool)).toEqual(["mcp__tiny__picture"]);
    expect(post[0].result.content).toContain("[image: image/png");
    expect(processesWithEnv(marker)).toEqual([]);
  });
});

describe("killing the runtime leaves no MCP process behind", () => {
  // SIGTERM and SIGINT close the runtime, which closes the servers; after
  // SIGKILL the watchdog kills each server's process group. The tiny server
  // ignores the end of its stdin and has a child: both must go, and so must
  // server-everything.
  for (const signal of ["SIGTERM", "SIGINT", "SIGKILL"] as const) {
    test(`${signal} in the middle of an MCP call`, async () => {
      const server = startServer([{ toolCalls: [{ name: "mcp__tiny__slow", arguments: { ms: 600_000 } }] }]);
      const { root, workspace, stateDir } = runSetup();
      // server-everything too: it exits when its stdin closes, as a well-behaved server does.
      const { path, marker } = serversFile(root, { tiny: tiny("--ignore-eof", "--child", "mcp-kill-test"), everything });
      const child = Bun.spawn(
        [AGENT_BINARY, "run", "--base-url", server.url, "--mcp-config", path, "--allow", "mcp__tiny", "--workspace", workspace, "--state-dir", stateDir, "go"],
        { env: { ...process.env, OPENAI_API_KEY: "test-key", NO_COLOR: "1" }, stdin: "ignore", stdout: "pipe", stderr: "pipe" },
      );
      try {
        // Both servers and the tiny one's child are up, and the model has asked for the slow call.
        expect(await eventually(() => processesWithEnv(marker).length >= 3 && server.remaining === 0, 30_000)).toBe(true);
        await Bun.sleep(300);
        child.kill(signal);
        await child.exited;
        if (signal !== "SIGKILL") expect(processesWithEnv(marker)).toEqual([]);
        expect(await eventually(() => processesWithEnv(marker).length === 0, 10_000)).toBe(true);
      } finally {
        child.kill("SIGKILL");
        for (const pid of processesWithEnv(marker)) process.kill(pid, "SIGKILL");
      }
    });
  }
});
