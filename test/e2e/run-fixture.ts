import { afterEach, beforeAll, expect } from "bun:test";
import { mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { type ScriptedModelServerOptions, type ScriptedReply, ScriptedModelServer } from "../support/model-server.ts";
import { SessionStore } from "../../src/sessions/session-store.ts";
import { tempDir } from "../support/temp-dir.ts";
import { type AgentResult, type RunOptions, ensureBinary, runAgent } from "./agent-binary.ts";

// Shared by the `agent run` end-to-end tests: a workspace and a state dir of their
// own, the binary bound to them, and zod schemas of the output contract.

/**
 * Call at the top of a test file: builds the binary once, and closes the scripted
 * server of each test after it. Returns the function that starts that server.
 */
export function scriptedServers(): (script: ScriptedReply[], options?: ScriptedModelServerOptions) => ScriptedModelServer {
  let current: ScriptedModelServer | undefined;
  beforeAll(() => {
    ensureBinary();
  }, 120_000);
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return (script, options) => {
    current = ScriptedModelServer.start(script, options);
    return current;
  };
}

/** The last tool result a request carries (a todo reminder may follow it as a user message). */
export const lastToolResult = (r: { body: { messages: Array<Record<string, unknown>> } }) =>
  String(r.body.messages.findLast((m) => m.role === "tool")!.content);

/** A scripted reply calling one tool; `check` sees the previous call's result. */
export const toolCallReply = (name: string, args: Record<string, unknown>, check?: (text: string) => void): ScriptedReply => ({
  toolCalls: [{ name, arguments: args }],
  ...(check ? { check: (r) => check(lastToolResult(r)) } : {}),
});

export function runSetup() {
  const root = realpathSync(tempDir("agent-run-e2e-"));
  const workspace = join(root, "workspace");
  const stateDir = join(root, "state");
  mkdirSync(workspace);
  /** `agent run ARGS --workspace W --state-dir S`, with a key unless the test's env says otherwise. */
  const run = (args: string[], options: RunOptions = {}) =>
    runAgent(["run", ...args, "--workspace", workspace, "--state-dir", stateDir], {
      ...options,
      env: { OPENAI_API_KEY: "test-key", ...options.env },
    });
  /** The directory of the most recently used session: where the last run's files are. */
  const sessionDir = () => {
    const sessions = new SessionStore(stateDir);
    const recent = sessions.mostRecent();
    if (!recent) throw new Error(`no session in ${stateDir}`);
    return sessions.dirOf(recent.id);
  };
  /** A new, empty session of the state root (as a run would start), for a test to lay out its state: its directory. */
  const newSessionDir = () => {
    const sessions = new SessionStore(stateDir);
    return sessions.dirOf(sessions.create().id);
  };
  return { root, workspace, stateDir, sessionDir, newSessionDir, run };
}

const count = z.number().int().nonnegative();
/** Usage of the whole command, or of one agent (docs/observability.md). */
export const Usage = z.strictObject({
  input_tokens: count,
  output_tokens: count,
  cached_input_tokens: count.optional(),
  model_calls: count,
  tool_calls: count,
  busy_ms: count,
  cost_usd: z.number().nonnegative().optional(),
});

/** The `--output json` object, and the last `--output stream-json` line. */
export const ResultLine = z.strictObject({
  type: z.literal("result"),
  subtype: z.enum(["success", "error_max_turns", "error_model", "error_blocked", "error_interrupted", "error_budget", "error_max_structured_output_retries", "error_refusal"]),
  is_error: z.boolean(),
  result: z.string(),
  turns: z.number().int().nonnegative(),
  // claude -p's name for `turns` (docs/compat.md).
  num_turns: z.number().int().nonnegative(),
  // Model requests asked again after a transient failure (docs/models.md).
  model_retries: z.number().int().nonnegative(),
  usage: Usage.omit({ cost_usd: true }),
  usage_by_agent: z.record(z.string().min(1), Usage),
  // null, with cost_note, when a model's price is unknown.
  total_cost_usd: z.number().nonnegative().nullable(),
  cost_note: z.string().min(1).optional(),
  duration_ms: z.number().int().nonnegative(),
  duration_api_ms: z.number().int().nonnegative(),
  structured_output: z.unknown().optional(),
  agent: z.literal("lead"),
  model: z.string().min(1),
  session_id: z.uuid(),
  // Absent for `agent drain`, which runs no user turn.
  idempotency_key: z.uuid().optional(),
  workspace: z.string().min(1),
  state_dir: z.string().min(1),
  events: z.number().int().nonnegative(),
  event_turns: z.number().int().nonnegative(),
  teammates: z.array(
    z.strictObject({
      name: z.string().min(1),
      role: z.string().min(1),
      state: z.enum(["running", "idle", "failed", "shutdown"]),
      failure: z.string().optional(),
    }),
  ),
  permission_denials: z.array(
    z.strictObject({
      agent: z.string().min(1),
      tool: z.string().min(1),
      input: z.string(),
      reason: z.string().min(1),
      // claude -p's shape of the same denial.
      tool_name: z.string().min(1),
      tool_use_id: z.string().min(1),
      tool_input: z.unknown(),
    }),
  ),
});
export type ResultLine = z.infer<typeof ResultLine>;

const agent = z.string().min(1);

/** Every line `--output stream-json` may print. */
export const StreamLine = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("system"),
    subtype: z.literal("init"),
    agent,
    model: z.string().min(1),
    permission_mode: z.enum(["default", "acceptEdits", "plan", "bypassPermissions"]),
    sandbox: z.enum(["read-only", "workspace-write", "danger-full-access", "unavailable"]),
    session_id: z.uuid(),
    idempotency_key: z.uuid().optional(),
    workspace: z.string(),
    state_dir: z.string(),
    mcp_servers: z
      .array(
        z.strictObject({
          name: z.string().min(1),
          status: z.enum(["pending", "connected", "failed", "closed"]),
          tools: z.array(z.string()),
          transport: z.enum(["stdio", "http", "sse"]).optional(),
          error: z.string().optional(),
        }),
      )
      .optional(),
    version: z.string(),
  }),
  z.strictObject({ type: z.literal("user"), agent, content: z.string() }),
  z.strictObject({ type: z.literal("assistant"), agent, text: z.string() }),
  // Only with --include-partial-messages.
  z.strictObject({ type: z.literal("assistant_delta"), agent, text: z.string() }),
  z.strictObject({ type: z.literal("model_request"), agent, turn: z.number().int().positive() }),
  z.strictObject({ type: z.literal("tool_call"), agent, id: z.string().min(1), name: z.string().min(1), arguments: z.string() }),
  z.strictObject({
    type: z.literal("tool_result"),
    agent,
    id: z.string().min(1),
    name: z.string().min(1),
    content: z.string(),
    is_error: z.boolean(),
  }),
  z.strictObject({ type: z.literal("model_retry"), agent, attempt: z.number().int(), delay_ms: z.number(), reason: z.string() }),
  z.strictObject({
    type: z.literal("compaction"),
    agent,
    summarised_messages: z.number().int(),
    persisted_results: z.number().int(),
  }),
  z.strictObject({ type: z.literal("warning"), agent, message: z.string() }),
  z.strictObject({
    type: z.literal("todos"),
    agent,
    todos: z.array(z.strictObject({ content: z.string(), status: z.enum(["pending", "in_progress", "completed"]) })),
  }),
  // An event reaching the Lead's history: its event turn follows.
  z.strictObject({
    type: z.literal("event"),
    agent,
    event_id: z.uuid(),
    source: z.enum(["mailbox", "cron", "background"]),
    sender: z.string().min(1),
    kind: z.string().min(1),
  }),
  z.strictObject({
    type: z.literal("teammate"),
    name: z.string().min(1),
    role: z.string().min(1),
    state: z.enum(["running", "idle", "failed", "shutdown"]),
    reason: z.string().optional(),
    plan: z.enum(["drafting", "submitted", "approved"]).optional(),
  }),
  // A request or answer between the Lead and a teammate (shutdown, plan approval, permission).
  z.strictObject({
    type: z.literal("protocol"),
    kind: z.enum(["shutdown_request", "shutdown_response", "plan_approval_request", "plan_approval_response", "permission_request", "permission_response"]),
    from: z.string().min(1),
    to: z.string().min(1),
    id: z.uuid(),
    request_id: z.uuid(),
    summary: z.string().min(1),
  }),
  z.strictObject({
    type: z.literal("mailbox"),
    op: z.enum(["send", "claim", "ack", "release", "quarantine"]),
    agent,
    id: z.uuid(),
    from: z.string().min(1),
    kind: z.enum([
      "task",
      "message",
      "result",
      "shutdown_request",
      "shutdown_response",
      "plan_approval_request",
      "plan_approval_response",
      "permission_request",
      "permission_response",
      "task_claimed",
      "idle",
    ]),
  }),
  ResultLine,
]);
export type StreamLine = z.infer<typeof StreamLine>;

export function parseResult(stdout: string): ResultLine {
  expect(stdout.endsWith("\n")).toBe(true);
  expect(stdout.trimEnd().split("\n")).toHaveLength(1);
  return ResultLine.parse(JSON.parse(stdout));
}

/** The one JSON object `--output json` prints for a command that failed before or outside its run. */
export const ErrorResult = z.strictObject({
  type: z.literal("result"),
  subtype: z.string().regex(/^error_[a-z_]+$/),
  is_error: z.literal(true),
  result: z.string().min(1),
  exit_code: z.number().int().positive(),
  exit_meaning: z.string().min(1),
  error_code: z.string().min(1).optional(),
});

export function parseErrorResult(stdout: string): z.infer<typeof ErrorResult> {
  expect(stdout.endsWith("\n")).toBe(true);
  expect(stdout.trimEnd().split("\n")).toHaveLength(1);
  return ErrorResult.parse(JSON.parse(stdout));
}

/** Every line parsed and validated; the last one must be the result. */
export function parseStream(stdout: string): StreamLine[] {
  expect(stdout.endsWith("\n")).toBe(true);
  const lines = stdout.trimEnd().split("\n").map((line) => StreamLine.parse(JSON.parse(line)));
  expect(lines.at(-1)?.type).toBe("result");
  return lines;
}

/** The error contract: exit code, one `agent: …` line on stderr and no stack trace. */
export function expectOneLineError(result: AgentResult, code: number, pattern: RegExp): void {
  expect(result.code).toBe(code);
  expect(result.stderr).toMatch(/^agent: [^\n]+\n$/);
  expect(result.stderr).toMatch(pattern);
  expect(result.stderr).not.toMatch(/\n\s+at /);
}
