import { describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { filesUnder } from "../security/attack-fixture.ts";
import { TINY } from "../mcp/helpers.ts";
import type { RecordedRequest } from "../support/model-server.ts";
import { runAgent } from "./agent-binary.ts";
import { runSetup, scriptedServers } from "./run-fixture.ts";

// Secrets with the compiled binary: what every process the agent starts sees of
// the environment (issue 30, item 4), and where the key can end up when the
// model echoes it and the endpoint quotes it in an error (item 5).

const startServer = scriptedServers();

const randomKey = () => `sk-live-${crypto.randomUUID().replaceAll("-", "")}`;

/** The secrets of the user's environment, and the names that must never reach a command. */
function hostileEnv(key: string) {
  const values = {
    GITHUB_TOKEN: `ghp_${crypto.randomUUID().replaceAll("-", "")}`,
    AWS_SECRET_ACCESS_KEY: `aws/${crypto.randomUUID()}`,
    PGPASSWORD: "Pg4short",
    AGENT_STORE: "postgres://agent:Zq7@127.0.0.1:1/agent",
    // Not a secret by name; carries the (short) store password of the config file.
    DATABASE_URL: "postgres://agent:Wk3@127.0.0.1:1/agent",
  };
  const env = { ...values, OPENAI_API_KEY: key, VISIBLE_MARKER: "still-here" };
  const needles = [...Object.keys(values), "OPENAI_API_KEY", ...Object.values(values), key, "Wk3@", "Zq7@"];
  return { env, needles };
}

/** The environment text as printed, whatever the command did to it (reversed lines, base64). */
function decoded(text: string, how: "plain" | "rev" | "base64"): string {
  if (how === "plain") return text;
  if (how === "rev") return text.split("\n").map((line) => [...line].reverse().join("")).join("\n");
  return Buffer.from(text.replace(/\[exit code \d+\][\s\S]*$/, "").trim(), "base64").toString("utf8");
}

function expectClean(label: string, text: string, needles: string[]): void {
  // The decoding worked: the command printed an environment.
  expect(`${label}: ${text}`).toContain("VISIBLE_MARKER=still-here");
  for (const needle of needles) expect(`${label} holds ${needle}: ${text.includes(needle)}`).toEndWith("false");
}

const lastContent = (r: RecordedRequest) => String(r.body.messages.at(-1)!.content);

describe("the environment of every command the agent starts", () => {
  test("shell calls, a background job, a hook and a stdio MCP server see no secret, in any encoding", async () => {
    const key = randomKey();
    const { env, needles } = hostileEnv(key);
    const { root, workspace, run } = runSetup();
    const configHome = join(root, "config");
    mkdirSync(join(configHome, "agent"), { recursive: true });
    // The user's own hook and MCP server; the server's explicitly configured variable still reaches it.
    const dump = (file: string) => `printenv | base64 -w0 > ${file}`;
    writeFileSync(
      join(configHome, "agent", "config.json"),
      JSON.stringify({
        hooks: { UserPromptSubmit: [{ command: dump("hook-env.b64") }] },
        mcpServers: {
          tiny: { command: "sh", args: ["-c", `${dump("mcp-env.b64")}; exec "$0" "$@"`, process.execPath, TINY], env: { MCP_GIVEN_TOKEN: "given-by-config-0123" } },
        },
      }),
      { mode: 0o600 },
    );
    // An unused store with a short password, in the user's local file: registered, so scrubbed wherever it appears.
    mkdirSync(join(workspace, ".agent"), { recursive: true });
    writeFileSync(join(workspace, ".agent", "config.local.json"), JSON.stringify({ store: "postgres://agent:Wk3@127.0.0.1:1/agent" }), { mode: 0o600 });

    // Each reply's check reads the result of the call before it.
    const results: Record<string, string> = {};
    const keep = (name: string) => (r: RecordedRequest) => {
      results[name] = lastContent(r);
    };
    const shell = (command: string, extra: Record<string, unknown> = {}) => [{ name: "shell", arguments: { command, ...extra } }];
    const server = startServer([
      { toolCalls: shell("printenv | rev") },
      { toolCalls: shell("printenv | base64 -w0"), check: keep("rev") },
      { toolCalls: shell("printenv"), check: keep("base64") },
      { toolCalls: shell("printenv | rev", { run_in_background: true }), check: keep("plain") },
      { text: "waiting for the job" },
      { text: "seen", check: keep("background") },
    ]);
    const result = await run(["--base-url", server.url, "--permission-mode", "bypassPermissions", "--store", "files", "go"], {
      env: { ...env, XDG_CONFIG_HOME: configHome },
    });
    expect(result.code).toBe(0);
    server.assertDone();
    expectClean("shell printenv | rev", decoded(results.rev!, "rev"), needles);
    expectClean("shell printenv | base64", decoded(results.base64!, "base64"), needles);
    expectClean("shell printenv", decoded(results.plain!, "plain"), needles);
    const job = results.background!;
    expect(job).toContain("background job");
    expectClean("background printenv | rev", decoded(job, "rev"), needles);
    expectClean("hook", decoded(readFileSync(join(workspace, "hook-env.b64"), "utf8"), "base64"), needles);
    const mcpEnv = decoded(readFileSync(join(workspace, "mcp-env.b64"), "utf8"), "base64");
    // A server starts from the core list: the marker is not there, the configured variable is.
    expect(mcpEnv).toContain("MCP_GIVEN_TOKEN=given-by-config-0123");
    expect(mcpEnv).toContain("PATH=");
    for (const needle of needles) expect(`mcp server env holds ${needle}: ${mcpEnv.includes(needle)}`).toEndWith("false");
  });
});

/** An OTLP/HTTP receiver keeping each body as the text it received. */
function collector(): { url: string; bodies: string[]; server: Server<undefined> } {
  const bodies: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (request) => {
      bodies.push(await request.text());
      return Response.json({});
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, bodies, server };
}

/** A streamed answer whose text carries `key` cut in two across chunk events. */
function splitKeyStream(key: string): string {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const cut = Math.floor(key.length / 2);
  return [
    chunk({ role: "assistant", content: "" }),
    chunk({ content: `the key is ${key.slice(0, 6)}` }),
    chunk({ content: key.slice(6, cut) }),
    chunk({ content: `${key.slice(cut)} and that is all` }),
    chunk({}, "stop"),
    `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } })}\n\n`,
    "data: [DONE]\n\n",
  ].join("");
}

describe("the key leaves the process nowhere", () => {
  test("Claude's partial messages: a key in a tool call's input, split across its streamed pieces, is masked in the input_json_delta lines", async () => {
    const key = randomKey();
    const { run } = runSetup();
    const server = startServer([{ toolCalls: [{ name: "shell", arguments: { command: `echo ${key} > key-copy.txt` } }] }, { text: "done" }]);
    const result = await run(["--base-url", server.url, "--permission-mode", "bypassPermissions", "--output-format", "stream-json", "--include-partial-messages", "copy it"], { env: { OPENAI_API_KEY: key } });
    expect(result.code).toBe(0);
    server.assertDone();
    const input = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; event?: { delta?: { type: string; partial_json?: string } } })
      .flatMap((line) => (line.type === "stream_event" && line.event?.delta?.type === "input_json_delta" ? [line.event.delta.partial_json] : []));
    // Streamed in more than one piece, the key among them: joined, they are the masked command.
    expect(input.length).toBeGreaterThan(1);
    expect(input.join("")).toBe(JSON.stringify({ command: "echo [REDACTED] > key-copy.txt" }));
    expect(result.stdout).not.toContain(key);
  });

  test("echoed by the model (split across deltas, in a tool call) and quoted by the endpoint's error", async () => {
    const key = randomKey();
    const otlp = collector();
    try {
      const { root, stateDir, run, sessionDir } = runSetup();
      const cassette = join(root, "run.cassette.jsonl");
      const lastMessage = join(root, "last-message.txt");
      const server = startServer([
        { raw: { contentType: "text/event-stream", body: splitKeyStream(key) } },
        { toolCalls: [{ name: "shell", arguments: { command: `echo ${key} > key-copy.txt` } }] },
        { status: 400, body: { error: { message: `Invalid API key: ${key}`, type: "invalid_request_error" } } },
      ]);
      const result = await run(
        ["--base-url", server.url, "--permission-mode", "bypassPermissions", "--output", "stream-json", "--include-partial-messages", "--verbose", "--record", cassette, "--output-last-message", lastMessage, `remember ${key}`],
        { env: { OPENAI_API_KEY: key, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url } },
      );
      // The prompt ends at its first answer; a second turn in the same session echoes it in a tool call.
      const second = await run(["--base-url", server.url, "--permission-mode", "bypassPermissions", "--output", "stream-json", "--include-partial-messages", "--record", cassette, "-c", "again"], {
        env: { OPENAI_API_KEY: key, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url },
      });
      expect(result.code).toBe(0);
      expect(second.code).not.toBe(0);
      server.assertDone();
      // The key was really in play: the endpoint got it in the header, and the second request carries the echoed answer masked.
      expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${key}`);

      const deltas = result.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { type: string; text?: string })
        .filter((line) => line.type === "assistant_delta")
        .map((line) => line.text)
        .join("");
      // What the state shows later, read without the key in the environment: stored masked, not masked on the way out.
      const id = basename(sessionDir());
      const noKey = { env: { OPENAI_API_KEY: undefined } };
      const timeline = await runAgent(["sessions", "show", id, "--timeline", "--state-dir", stateDir], noKey);
      const listed = await runAgent(["sessions", "list", "--json", "--state-dir", stateDir], noKey);
      expect(timeline.code).toBe(0);
      expect(timeline.stdout).toContain("[REDACTED]");
      const places: Record<string, string> = {
        timeline: timeline.stdout,
        sessionsList: listed.stdout,
        stdout: result.stdout + second.stdout,
        stderr: result.stderr + second.stderr,
        deltas,
        cassette: readFileSync(cassette, "utf8"),
        lastMessage: readFileSync(lastMessage, "utf8"),
        otlp: otlp.bodies.join("\n"),
        ...Object.fromEntries(filesUnder(stateDir).map((file) => [file.path, file.text])),
      };
      expect(otlp.bodies.length).toBeGreaterThan(0);
      expect(Object.keys(places).some((place) => place.endsWith("session.json"))).toBe(true);
      expect(Object.keys(places).some((place) => place.endsWith("usage.jsonl"))).toBe(true);
      const leaks = Object.entries(places)
        .filter(([, text]) => text.includes(key))
        .map(([place]) => place);
      expect(leaks).toEqual([]);
      expect(deltas).toContain("the key is [REDACTED] and that is all");
      expect(places.otlp).toContain("[REDACTED]");
    } finally {
      await otlp.server.stop(true);
    }
  });
});

describe("a teammate's failure quoting the key", () => {
  test("its result reaches the Lead and the mailbox masked", async () => {
    const key = randomKey();
    const { stateDir, run } = runSetup();
    const server = startServer([
      { identity: "lead", toolCalls: [{ name: "spawn_teammate", arguments: { name: "alice", role: "tester", prompt: "check" } }] },
      { identity: "alice", status: 400, body: { error: { message: `Invalid API key: ${key}`, type: "invalid_request_error" } } },
      { identity: "lead", text: "spawned" },
      { identity: "lead", text: "alice failed" },
    ]);
    const result = await run(["--base-url", server.url, "--permission-mode", "bypassPermissions", "--output", "stream-json", "go"], { env: { OPENAI_API_KEY: key } });
    expect(result.code).toBe(0);
    server.assertDone();
    const leadSaw = server.requests.filter((r) => r.identity === "lead").map((r) => JSON.stringify(r.body));
    expect(leadSaw.at(-1)).toContain("Invalid API key: [REDACTED]");
    for (const body of leadSaw) expect(body.includes(key)).toBe(false);
    const leaks = filesUnder(stateDir).filter((file) => file.text.includes(key)).map((file) => file.path);
    expect(leaks).toEqual([]);
    expect(result.stdout.includes(key)).toBe(false);
  });
});

describe("credentials in config files", () => {
  test("an unused apiKey in config.local.json never reaches the model, read by read_file or by a shell", async () => {
    const unused = randomKey();
    const { workspace, run } = runSetup();
    mkdirSync(join(workspace, ".agent"), { recursive: true });
    writeFileSync(join(workspace, ".agent", "config.local.json"), JSON.stringify({ apiKey: unused }), { mode: 0o600 });
    const server = startServer([
      { toolCalls: [{ name: "read_file", arguments: { path: ".agent/config.local.json" } }] },
      { toolCalls: [{ name: "shell", arguments: { command: "cat .agent/config.local.json" } }] },
      { text: "done" },
    ]);
    // OPENAI_API_KEY wins over the file's key: the file's is never sent, never used.
    const result = await run(["--base-url", server.url, "--permission-mode", "bypassPermissions", "go"], { env: { OPENAI_API_KEY: randomKey() } });
    expect(result.code).toBe(0);
    server.assertDone();
    const toolResults = server.requests.slice(1).map((r) => lastContent(r));
    // The file was read: its shape is there, its key is not.
    for (const text of toolResults) expect(text).toContain('"apiKey"');
    for (const request of server.requests) expect(JSON.stringify(request.body).includes(unused)).toBe(false);
  });
});
