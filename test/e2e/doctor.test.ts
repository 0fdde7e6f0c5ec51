import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { anthropicAnswer } from "../support/anthropic-stream.ts";
import { ScriptedModelServer } from "../support/model-server.ts";
import { clusterForFile } from "../support/postgres.ts";
import { visibleInSandbox } from "../support/sandbox-visible.ts";
import { tempDir } from "../support/temp-dir.ts";
import { AGENT_BINARY, type AgentResult, ensureBinary, runAgent } from "./agent-binary.ts";

// `agent doctor` against the scripted server's `GET /models`, the real binary and
// real directories: exit 0 on a good setup; on a bad one exit 1, one FAIL line per
// problem on stdout, and one summary line on stderr.

const KEY = "sk-test-doctor";
const servers: ScriptedModelServer[] = [];

beforeAll(() => {
  ensureBinary();
}, 120_000);

afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

function modelServer(): ScriptedModelServer {
  // Every completion (doctor's one check request) answered "OK".
  const server = ScriptedModelServer.start([], { models: ["gpt-4o-mini", "local-coder"], apiKey: KEY, respond: () => ({ text: "OK", usage: { prompt_tokens: 12, completion_tokens: 1 } }) });
  servers.push(server);
  return server;
}

interface Report {
  ok: boolean;
  checks: Array<{ id: string; status: string; detail: string }>;
}

function doctorSetup() {
  const workspace = tempDir("agent-doctor-");
  const stateDir = join(workspace, ".agent");
  const doctor = (env: Record<string, string | undefined>, ...args: string[]) =>
    runAgent(["doctor", "--workspace", workspace, "--state-dir", stateDir, ...args], { env });
  return { workspace, stateDir, doctor };
}

const failLines = (result: AgentResult) => result.stdout.split("\n").filter((line) => line.startsWith("FAIL"));
const statusOf = (report: Report, id: string) => report.checks.find((c) => c.id === id)?.status;

describe("agent doctor", () => {
  test("a good setup: every check ok, the key accepted by a models-list call, exit 0", async () => {
    const server = modelServer();
    const { doctor, stateDir } = doctorSetup();
    mkdirSync(stateDir);
    writeFileSync(join(stateDir, "config.json"), JSON.stringify({ model: "local-coder" }));
    const env = { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.url };
    const text = await doctor(env);
    expect(text.code).toBe(0);
    expect(text.stderr).toBe("");
    expect(failLines(text)).toEqual([]);
    expect(text.stdout).toMatch(/^ok +api key +accepted by http:\/\/127\.0\.0\.1:\d+\/v1$/m);
    expect(text.stdout).toMatch(/^ok +model +local-coder is offered by /m);
    // One real request, capped, through the run's client and profile.
    expect(text.stdout).toMatch(/^ok +completion +local-coder answered a 16-token request in \d+\.\d s \(12 tokens in, 1 out\)$/m);
    expect(server.requests.map((request) => [request.body.model, request.body.max_tokens])).toEqual([["local-coder", 16]]);
    expect(text.stdout).toContain(`${join(stateDir, "config.json")} (valid)`);

    const json = await doctor(env, "--json");
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as Report;
    expect(report.ok).toBe(true);
    for (const id of ["version", "workspace", "state_dir", "config_user", "config_project", "config_local", "api_key", "endpoint", "model", "profile", "model_info", "completion", "pending"]) {
      expect(statusOf(report, id)).toBe("ok");
    }
    expect(server.modelListRequests).toBe(2);
    server.assertDone();
    // A doctor looks and leaves no trace: no lock or spare directories in the state dir.
    expect(readdirSync(stateDir)).toEqual(["config.json"]);
  });

  test("names the profile requests will use and what the catalogue knows of the model", async () => {
    const { doctor, stateDir } = doctorSetup();
    const env = { OPENAI_API_KEY: KEY };
    const deepseek = await doctor(env, "--offline", "--base-url", "https://api.deepseek.com", "--model", "deepseek-chat");
    expect(deepseek.stdout).toMatch(/^ok +profile +deepseek \(DeepSeek; detected from api\.deepseek\.com\)$/m);
    expect(deepseek.stdout).toMatch(
      /^ok +model info +deepseek-chat: context window 1000000 tokens, output up to 384000, no thinking; \$0\.14 in \/ \$0\.28 out per million tokens, cached \$0\.0028 \(model catalogue: https:\/\/api-docs\.deepseek\.com\/quick_start\/pricing, read 2026-05\); deprecated: shut down from 2026-07-24, use deepseek-v4-flash$/m,
    );
    // A long-context tier and the page the prices were read from; a model with no official price found.
    const gpt = await doctor(env, "--offline", "--model", "gpt-5.4");
    expect(gpt.stdout).toMatch(
      /^ok +model info +gpt-5\.4: context window 1050000 tokens, output up to 128000, reasoning effort \(.*\); \$2\.5 in \/ \$15 out per million tokens, cached \$0\.25, above 272000 input tokens \$5 in \/ \$22\.5 out \(model catalogue: https:\/\/developers\.openai\.com\/api\/docs\/models\/gpt-5\.4, read 2026-12-07\)$/m,
    );
    const mini = await doctor(env, "--offline", "--model", "gpt-5.4-mini");
    expect(mini.stdout).toMatch(/^ok +model info +gpt-5\.4-mini: context window 400000 tokens, output up to 128000, reasoning effort \(.*\); unknown price: results say total_cost_usd null/m);
    // The thinking form the adapter will send: a budget, or adaptive (the newest Claude models take no other).
    const sonnet = await doctor({ ANTHROPIC_API_KEY: KEY }, "--offline", "--provider", "anthropic", "--model", "claude-sonnet-5");
    expect(sonnet.stdout).toMatch(/^ok +model info +claude-sonnet-5: context window 1000000 tokens, output up to 128000, thinking adaptive; \$2 in \/ \$10 out/m);
    const older = await doctor({ ANTHROPIC_API_KEY: KEY }, "--offline", "--provider", "anthropic", "--model", "claude-sonnet-4-5");
    expect(older.stdout).toMatch(/^ok +model info +claude-sonnet-4-5: context window 200000 tokens, output up to 64000, thinking with a budget; /m);
    const named = await doctor(env, "--offline", "--base-url", "http://127.0.0.1:9/v1", "--profile", "gemini", "--model", "local-coder");
    expect(named.stdout).toMatch(/^ok +profile +gemini \(Google Gemini \(OpenAI-compatible endpoint\); as configured\)$/m);
    expect(named.stdout).toMatch(/^ok +model info +local-coder: not in the model catalogue; unknown price/m);
    // A budget needs a price: with none, the run would fail, so doctor does.
    mkdirSync(stateDir);
    writeFileSync(join(stateDir, "config.json"), JSON.stringify({ maxBudgetUsd: 2 }));
    const budget = await doctor(env, "--offline", "--model", "local-coder");
    expect(budget.code).toBe(1);
    expect(failLines(budget)).toEqual([expect.stringMatching(/^FAIL +model info +local-coder: not in the model catalogue; unknown price, and a budget needs one/)]);
  });

  test("--provider anthropic: the list at /v1/models with x-api-key, the check request through the Messages adapter", async () => {
    const server = ScriptedModelServer.start([anthropicAnswer([{ type: "text", text: "OK" }], "end_turn", { input_tokens: 14, output_tokens: 2 })], {
      models: ["claude-sonnet-4-5"],
      apiKey: KEY,
    });
    servers.push(server);
    const { doctor } = doctorSetup();
    const result = await doctor({ ANTHROPIC_API_KEY: KEY, OPENAI_API_KEY: undefined }, "--provider", "anthropic", "--base-url", server.url, "--model", "claude-sonnet-4-5");
    expect({ code: result.code, fails: failLines(result) }).toEqual({ code: 0, fails: [] });
    expect(result.stdout).toMatch(/^ok +provider +anthropic \(Anthropic Messages API; as configured\)$/m);
    expect(result.stdout).toMatch(/^ok +model +claude-sonnet-4-5 is offered by /m);
    expect(result.stdout).toMatch(/^ok +completion +claude-sonnet-4-5 answered a 16-token request in \d+\.\d s \(14 tokens in, 2 out\)$/m);
    // Too small a cap to think in: no thinking asked for.
    expect(server.requests.map((request) => [request.headers["x-api-key"], request.body.max_tokens, request.body.thinking])).toEqual([[KEY, 16, undefined]]);
    server.assertDone();
  });

  test("a model the list offers but the completion refuses: the check request fails with the run's own line", async () => {
    const server = modelServer();
    server.push({ status: 404, body: { error: { message: "The model `local-coder` does not exist", code: "model_not_found" } } });
    const { doctor } = doctorSetup();
    const result = await doctor({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.url }, "--model", "local-coder");
    expect(result.code).toBe(1);
    expect(failLines(result)).toEqual([
      expect.stringMatching(/^FAIL +completion +unknown model/),
    ]);
    expect(result.stdout).toContain(
      `unknown model local-coder at ${server.url} (HTTP 404: The model \`local-coder\` does not exist): check --model / AGENT_MODEL`,
    );
    expect(server.requests).toHaveLength(1);
  });

  test("no key: exit 1 and exactly one FAIL line, naming OPENAI_API_KEY", async () => {
    const server = modelServer();
    const { doctor } = doctorSetup();
    const result = await doctor({ OPENAI_API_KEY: undefined, OPENAI_BASE_URL: server.url });
    expect(result.code).toBe(1);
    expect(failLines(result)).toEqual([expect.stringMatching(/^FAIL +api key +no API key: set OPENAI_API_KEY/)]);
    // The endpoint itself answered (401 without a key): that part is fine.
    expect(result.stdout).toMatch(/^ok +endpoint /m);
    expect(result.stderr).toBe("agent: 1 problem (api_key): `agent run` would fail; fix what the failed checks say\n");
  });

  test("a wrong key is rejected by the endpoint", async () => {
    const server = modelServer();
    const { doctor } = doctorSetup();
    const result = await doctor({ OPENAI_API_KEY: "sk-wrong", OPENAI_BASE_URL: server.url });
    expect(result.code).toBe(1);
    expect(failLines(result)).toEqual([expect.stringMatching(/^FAIL +api key +rejected by .*HTTP 401: Incorrect API key provided.*check OPENAI_API_KEY$/)]);
  });

  test("a bad base URL: nobody listening, or not the API root", async () => {
    const server = modelServer();
    const { doctor } = doctorSetup();
    const refused = await doctor({ OPENAI_API_KEY: KEY }, "--base-url", "http://127.0.0.1:9/v1");
    expect(refused.code).toBe(1);
    expect(failLines(refused)).toEqual([expect.stringMatching(/^FAIL +endpoint +cannot reach http:\/\/127\.0\.0\.1:9\/v1 .*check --base-url/)]);

    // The server's root, without /v1: its /models is a 404.
    const root = server.url.replace(/\/v1$/, "");
    const wrongRoot = await doctor({ OPENAI_API_KEY: KEY }, "--base-url", root);
    expect(wrongRoot.code).toBe(1);
    expect(failLines(wrongRoot)).toEqual([expect.stringMatching(/^FAIL +endpoint +http:\/\/127\.0\.0\.1:\d+\/models not found \(HTTP 404.*must be the API root/)]);
  });

  test("--offline does not contact the endpoint", async () => {
    const server = modelServer();
    const { doctor } = doctorSetup();
    const result = await doctor({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.url }, "--offline", "--json");
    expect(result.code).toBe(0);
    expect(statusOf(JSON.parse(result.stdout) as Report, "endpoint")).toBe("skip");
    expect(server.modelListRequests).toBe(0);
  });

  test("an invalid config file: exit 1, its FAIL line names the file and the key", async () => {
    const server = modelServer();
    const { doctor, stateDir } = doctorSetup();
    mkdirSync(stateDir);
    writeFileSync(join(stateDir, "config.json"), JSON.stringify({ modle: "gpt-4o" }));
    const result = await doctor({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.url });
    expect(result.code).toBe(1);
    expect(failLines(result)).toEqual([expect.stringMatching(/^FAIL +config project +config file .*\.agent\/config\.json: unknown key "modle"/)]);
  });

  test("MCP servers are started: one that starts is ok, one that does not is a warning (a run goes on without it)", async () => {
    const server = modelServer();
    const { doctor, workspace } = doctorSetup();
    // The project's servers run sandboxed, with a private /tmp: wherever the checkout is, they must see these.
    const tiny = visibleInSandbox(join(import.meta.dir, "..", "mcp", "fixtures", "tiny-server.ts"));
    const bun = visibleInSandbox(process.execPath);
    mkdirSync(join(workspace, ".agent"), { recursive: true });
    writeFileSync(
      join(workspace, ".agent", "config.json"),
      JSON.stringify({
        mcpServers: { tiny: { command: bun, args: [tiny] }, broken: { command: bun, args: [tiny, "--fail-start"] } },
      }),
    );
    // The user's own checkout, trusted: its servers are started (test/e2e/trust.test.ts: untrusted).
    const env = { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.url, AGENT_TRUST_PROJECT: "1" };
    const result = await doctor(env);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ok +mcp tiny +tiny: starts, \d+ tools?$/m);
    expect(result.stdout).toMatch(/^warn +mcp broken +broken: failed: .*a run goes on without its tools/m);
    const offline = await doctor(env, "--offline");
    expect(offline.stdout).toMatch(/^skip +mcp +tiny, broken: not started \(--offline\)$/m);
  });

  test("no sandbox: a failure, by default (shell would be refused) and when a mode is asked for; ok in danger-full-access", async () => {
    const server = modelServer();
    const { doctor } = doctorSetup();
    // No bwrap (nor git) on this PATH.
    const env = { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.url, PATH: tempDir() };
    const byDefault = await doctor(env, "--offline");
    expect(byDefault.code).toBe(1);
    expect(failLines(byDefault)).toEqual([
      expect.stringMatching(/^FAIL +sandbox +shell commands would be refused: the workspace-write sandbox cannot start here \(bubblewrap \(bwrap\) is not installed\); install bubblewrap/),
    ]);
    const asked = await doctor(env, "--offline", "--sandbox", "read-only");
    expect(asked.code).toBe(1);
    expect(failLines(asked)).toEqual([expect.stringMatching(/^FAIL +sandbox +read-only was asked for but cannot be enforced here \(bubblewrap \(bwrap\) is not installed\)/)]);
    const off = await doctor(env, "--offline", "--sandbox", "danger-full-access");
    expect(off.stdout).toMatch(/^ok +sandbox +off \(danger-full-access\)/m);
  });

  test("pending work left by an earlier run is reported, not a failure", async () => {
    const server = modelServer();
    const { doctor, stateDir } = doctorSetup();
    expect((await runAgent(["mailbox", "send", "--state-dir", stateDir, "--to", "lead", "--from", "alice", "--content", "done"])).code).toBe(0);
    const result = await doctor({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.url });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^warn +pending +work left by an earlier run \(session [0-9a-f-]{36}: lead: 1 message\); `agent drain` finishes it$/m);
  });
});

describe("agent doctor with a PostgreSQL store", () => {
  const pg = clusterForFile();

  test("the store is checked (unreachable: FAIL, password masked) and pending work is read from its rows", async () => {
    const server = modelServer();
    const { doctor, stateDir } = doctorSetup();
    const env = { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.url };
    const down = await doctor(env, "--store", `postgres://agent:pw-doc-1@127.0.0.1:${pg().port + 1}/x`, "--offline");
    expect(down.code).toBe(1);
    expect(failLines(down)).toEqual([expect.stringMatching(/^FAIL +store +cannot use the PostgreSQL store postgres:\/\/agent:\[REDACTED\]@127\.0\.0\.1:\d+\/x: /)]);
    expect(down.stdout).toMatch(/^skip +pending +not checked: the store cannot be used$/m);
    expect(down.stdout + down.stderr).not.toContain("pw-doc-1");

    // A message for the Lead waits in the store's rows of a session of this state root; its files have none.
    const url = (await pg().database()).replace("postgres://agent@", "postgres://agent:pw-doc-2@");
    const sent = await runAgent(["mailbox", "send", "--state-dir", stateDir, "--store", url, "--to", "lead", "--from", "alice", "--content", "done"]);
    expect(sent.code).toBe(0);
    const report = await doctor(env, "--store", url, "--offline");
    expect(report.code).toBe(0);
    expect(report.stdout).toMatch(/^ok +store +PostgreSQL postgres:\/\/agent:\[REDACTED\]@127\.0\.0\.1:\d+\/\w+ answers; schema at version \d+$/m);
    expect(report.stdout).toMatch(/^warn +pending +work left by an earlier run \(session [0-9a-f-]{36}: lead: 1 message\); `agent drain` finishes it$/m);
    expect(report.stdout).not.toContain("pw-doc-2");
    expect((await doctor(env, "--offline")).stdout).toMatch(/^ok +pending +nothing pending$/m);
  });
});

// Root ignores file modes, so as root the binary runs as `nobody` (as in read-only-state.test.ts).
const asRoot = process.getuid?.() === 0;
const setpriv = Bun.which("setpriv");

describe.if(!asRoot || setpriv !== null)("agent doctor on a read-only state root", () => {
  test("exit 1 with one FAIL line naming the directory", async () => {
    const server = modelServer();
    const stateDir = join(tempDir("agent-e2e-"), "state");
    mkdirSync(stateDir);
    chmodSync(stateDir, 0o555);
    const workspace = join(stateDir, "..");
    chmodSync(workspace, 0o755);
    try {
      const drop = asRoot ? [setpriv!, "--reuid", "65534", "--regid", "65534", "--clear-groups"] : [];
      const child = Bun.spawn([...drop, AGENT_BINARY, "doctor", "--workspace", workspace, "--state-dir", stateDir], {
        cwd: workspace,
        env: { ...process.env, NO_COLOR: "1", HOME: workspace, OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.url },
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stdout, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
      expect(code).toBe(1);
      expect(stdout.split("\n").filter((l) => l.startsWith("FAIL"))).toEqual([
        expect.stringMatching(new RegExp(`^FAIL +state dir +cannot write to ${stateDir} \\((EACCES|EROFS)\\); make it writable`)),
      ]);
    } finally {
      chmodSync(stateDir, 0o755);
    }
  });
});
