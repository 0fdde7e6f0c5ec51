import { describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import type { HookConfig } from "../../src/config/config.ts";
import { ShellHooks } from "../../src/hooks/hook-runner.ts";
import { type PermissionAsker, PermissionPolicy } from "../../src/permissions/policy.ts";
import { baseTools } from "../../src/tools/base-tools.ts";
import { ToolPipeline } from "../../src/tools/pipeline.ts";
import { defineTool, type Tool, type ToolContext } from "../../src/core/tool.ts";
import { workspaceContext } from "./helpers.ts";
import { waitUntil } from "../support/deadline.ts";

/**
 * Every step writes one line to `steps.log` in the workspace: the hooks as real
 * shell commands, the asker and the handler from here. The log is the order.
 */
function setup(options: { pre?: string; post?: string; ask?: boolean; mode?: "default" | "bypassPermissions"; fail?: boolean } = {}) {
  const context = workspaceContext();
  const log = join(context.workspace, "steps.log");
  const step = (name: string) => appendFileSync(log, `${name}\n`);
  const hook = (name: string, extra = ""): HookConfig[] => [{ command: `cat > ${name}.json; echo ${name} >> steps.log${extra}` }];
  const hooks = new ShellHooks({ PreToolUse: hook("pre", options.pre), PostToolUse: hook("post", options.post) });
  const ask: PermissionAsker = async () => {
    step("ask");
    return options.ask ?? true;
  };
  const echo = defineTool({
    name: "echo",
    description: "Echoes its text.",
    input: z.strictObject({ text: z.string() }),
    effect: "execute",
    subject: (input) => input.text,
    async run(input) {
      step("run");
      if (options.fail) throw new Error("the handler broke");
      return { content: `echo: ${input.text}` };
    },
  });
  const warnings: string[] = [];
  const pipeline = new ToolPipeline({
    tools: [echo as Tool, ...baseTools()],
    policy: new PermissionPolicy({ mode: options.mode ?? "default", ask }),
    hooks,
    onWarning: (warning) => warnings.push(warning),
  });
  const steps = () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : []);
  const event = (name: string) => JSON.parse(readFileSync(join(context.workspace, `${name}.json`), "utf8"));
  const run = (args: string, name = "echo", ctx: ToolContext = context) => pipeline.execute({ id: "call_1", name, arguments: args }, ctx);
  return { context, pipeline, steps, event, run, warnings };
}

describe("ToolPipeline", () => {
  test("runs validation → PreToolUse → permission → handler → PostToolUse, and PostToolUse sees the result", async () => {
    const { run, steps, event, context } = setup();
    expect(await run('{"text":"hi"}')).toEqual({ content: "echo: hi" });
    expect(steps()).toEqual(["pre", "ask", "run", "post"]);
    const base = { tool: "echo", input: { text: "hi" }, identity: "lead", idempotencyKey: context.idempotencyKey, callId: "call_1" };
    // Ours, and Claude Code's keys for the same things.
    const theirs = { cwd: context.workspace, tool_name: "echo", tool_input: { text: "hi" }, tool_use_id: "call_1" };
    expect(event("pre")).toEqual({ event: "PreToolUse", hook_event_name: "PreToolUse", ...theirs, ...base });
    expect(event("post")).toEqual({
      event: "PostToolUse",
      hook_event_name: "PostToolUse",
      ...theirs,
      tool_response: { content: "echo: hi" },
      ...base,
      result: { content: "echo: hi" },
    });
  });

  test("malformed JSON arguments are an error result; nothing else runs", async () => {
    const { run, steps } = setup();
    const result = await run('{"text": "unterminated');
    expect(result.isError).toBe(true);
    expect(result.content).toStartWith("invalid JSON arguments: ");
    expect(steps()).toEqual([]);
  });

  test("invalid input is an error result naming the issues and never reaches the hooks", async () => {
    const { run, steps } = setup();
    const result = await run('{"text": 5, "extra": true}');
    expect(result.isError).toBe(true);
    expect(result.content).toStartWith("invalid input for echo: ");
    expect(result.content).toContain("text: ");
    expect(result.content).toContain('Unrecognized key: "extra"');
    expect(steps()).toEqual([]);
  });

  test("an unknown tool is an error result listing the tools", async () => {
    const { run } = setup();
    expect(await run("{}", "delete_everything")).toEqual({
      content: 'unknown tool "delete_everything"; available tools: echo, shell, read_file, write_file, edit_file, glob, grep',
      isError: true,
    });
  });

  test("a PreToolUse JSON permissionDecision: allow answers for the person, ask asks even where the mode allows, deny blocks", async () => {
    const answer = (decision: string) => `; echo '{"hookSpecificOutput":{"permissionDecision":"${decision}","permissionDecisionReason":"hook says ${decision}"}}'`;
    const allowed = setup({ pre: answer("allow") });
    expect(await allowed.run('{"text":"hi"}')).toEqual({ content: "echo: hi" });
    expect(allowed.steps()).toEqual(["pre", "run", "post"]);

    const asked = setup({ pre: answer("ask"), mode: "bypassPermissions", ask: false });
    const refused = await asked.run('{"text":"hi"}');
    expect(refused.isError).toBe(true);
    expect(asked.steps()).toEqual(["pre", "ask"]);

    const denied = setup({ pre: answer("deny") });
    expect(await denied.run('{"text":"hi"}')).toEqual({ content: "blocked by PreToolUse hook: hook says deny", isError: true });
    expect(denied.steps()).toEqual(["pre"]);
  });

  test("a PreToolUse allow does not beat a deny rule", async () => {
    const context = workspaceContext();
    const hooks = new ShellHooks({ PreToolUse: [{ command: `echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'` }] });
    const pipeline = new ToolPipeline({
      tools: baseTools(),
      policy: new PermissionPolicy({ mode: "default", deny: ["write_file(*.env)"] }),
      hooks,
      onWarning: () => {},
    });
    const result = await pipeline.execute({ id: "c", name: "write_file", arguments: '{"path":"a.env","content":"x"}' }, context);
    expect(result.isError).toBe(true);
    expect(result.content).toContain("deny rule");
    expect(existsSync(join(context.workspace, "a.env"))).toBe(false);
  });

  test("a PreToolUse block never reaches the asker or the handler", async () => {
    const { run, steps } = setup({ pre: "; echo 'not on main' >&2; exit 2" });
    expect(await run('{"text":"hi"}')).toEqual({ content: "blocked by PreToolUse hook: not on main", isError: true });
    expect(steps()).toEqual(["pre"]);
  });

  test("a denial never reaches the handler or PostToolUse", async () => {
    const { run, steps } = setup({ ask: false });
    expect(await run('{"text":"hi"}')).toEqual({ content: "permission denied by the user for echo(hi)", isError: true });
    expect(steps()).toEqual(["pre", "ask"]);
  });

  test("a handler that throws is an error result, which PostToolUse sees", async () => {
    const { run, steps, event } = setup({ fail: true });
    expect(await run('{"text":"hi"}')).toEqual({ content: "the handler broke", isError: true });
    expect(steps()).toEqual(["pre", "ask", "run", "post"]);
    expect(event("post").result).toEqual({ content: "the handler broke", isError: true });
  });

  test("a PostToolUse block turns the result into an error carrying the reason", async () => {
    const { run } = setup({ post: "; echo 'secret in output' >&2; exit 2" });
    expect(await run('{"text":"hi"}')).toEqual({
      content: "echo: hi\n\n[blocked by PostToolUse hook: secret in output]",
      isError: true,
    });
  });

  test("hook warnings go to the observer and the call goes on", async () => {
    const { run, warnings } = setup({ mode: "bypassPermissions", pre: "; exit 1" });
    expect(await run('{"text":"hi"}')).toEqual({ content: "echo: hi" });
    expect(warnings).toEqual([expect.stringMatching(/^PreToolUse hook ".*" exited 1$/)]);
  });

  test("an abort during the handler is an interrupted result", async () => {
    const { run, context } = setup({ mode: "bypassPermissions" });
    const controller = new AbortController();
    // Aborted once the command runs: the abort lands during the handler.
    void waitUntil(() => existsSync(join(context.workspace, "began")), "the command to start").then(() => controller.abort());
    const started = Date.now();
    const result = await run('{"command":"touch began; sleep 30"}', "shell", { ...context, signal: controller.signal });
    expect(result).toEqual({ content: "interrupted", isError: true });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  test("headless, an edit that needs approval is denied with the fix and nothing is written", async () => {
    const context = workspaceContext();
    const pipeline = new ToolPipeline({ tools: baseTools(), policy: PermissionPolicy.fromConfig({}) });
    const args = JSON.stringify({ path: "a.txt", content: "x" });
    const result = await pipeline.execute({ id: "call_1", name: "write_file", arguments: args }, context);
    expect(result.isError).toBe(true);
    expect(result.content).toStartWith("permission denied: write_file needs approval and there is no TTY to ask; allow it with permissions.allow");
    expect(existsSync(join(context.workspace, "a.txt"))).toBe(false);
  });

  test("specs() are the tools' JSON schemas in order", () => {
    const { pipeline } = setup();
    expect(pipeline.specs().map((spec) => spec.name)).toEqual(["echo", "shell", "read_file", "write_file", "edit_file", "glob", "grep"]);
  });

  test("specs() are built once per tool, and a changed tool set (a source's new list, a deny rule) is never served a stale one", () => {
    const source = { tools: [] as Tool[], prepare: async () => {}, unavailable: () => undefined };
    const listed = (version: number): Tool =>
      defineTool({
        name: "listed",
        description: `listed v${version}`,
        input: z.strictObject(version === 1 ? { a: z.string() } : { b: z.number() }),
        effect: "read",
        subject: () => "",
        run: async () => ({ content: "" }),
      }) as Tool;
    source.tools = [listed(1)];
    const policy = new PermissionPolicy({ mode: "default" });
    const pipeline = new ToolPipeline({ tools: baseTools(), sources: [{ prepare: source.prepare, tools: () => source.tools, unavailable: source.unavailable }], policy });
    const first = pipeline.specs();
    // The same tools: the very same specs, not rebuilt from zod.
    expect(pipeline.specs()).toEqual(first);
    pipeline.specs().forEach((spec, i) => expect(spec).toBe(first[i]!));
    expect(first.at(-1)).toMatchObject({ description: "listed v1", parameters: { properties: { a: { type: "string" } } } });
    // The server lists its tools again: the new schema, not the cached one.
    source.tools = [listed(2)];
    expect(pipeline.specs().at(-1)).toMatchObject({ description: "listed v2", parameters: { properties: { b: { type: "number" } } } });
    // A rule now denies a whole tool: it is no longer offered.
    policy.addSessionRules("deny", ["shell"]);
    expect(pipeline.specs().map((spec) => spec.name)).toEqual(["read_file", "write_file", "edit_file", "glob", "grep", "listed"]);
  });

  test("two tools with one name are refused", () => {
    const tools = [...baseTools(), ...baseTools()];
    expect(() => new ToolPipeline({ tools, policy: new PermissionPolicy({ mode: "default" }) })).toThrow("unique");
  });
});
