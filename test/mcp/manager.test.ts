import { afterEach, describe, expect, test } from "bun:test";
import { ToolPipeline } from "../../src/tools/pipeline.ts";
import { PermissionPolicy } from "../../src/permissions/policy.ts";
import type { ToolContext } from "../../src/core/tool.ts";
import { tempDir } from "../support/temp-dir.ts";
import { alive, cleanUp, eventually, everythingHttp, everythingStdio, manager, processesWith, tiny } from "./helpers.ts";

afterEach(cleanUp);

const context = (signal = new AbortController().signal): ToolContext => ({ identity: "lead", idempotencyKey: "k", workspace: "/tmp", signal });

/** The Lead's pipeline over the manager's tools, allowing everything unless rules say otherwise. */
function pipelineOf(mcp: ReturnType<typeof manager>["mcp"], rules: { allow?: string[]; deny?: string[] } = {}) {
  return new ToolPipeline({ tools: [], sources: [mcp.source("lead")], policy: new PermissionPolicy({ mode: "bypassPermissions", ...rules }) });
}

const callOf = (name: string, args: unknown = {}) => ({ id: "c1", name, arguments: JSON.stringify(args) });

describe("server-everything", () => {
  test("over stdio: its tools as mcp__everything__*, the server's schema as is, a call's text and a summarised image", async () => {
    const { mcp, warnings } = manager({ everything: everythingStdio() });
    const pipeline = pipelineOf(mcp);
    expect(pipeline.specs()).toEqual([]); // nothing started before the first turn
    await pipeline.prepare(new AbortController().signal);
    expect(warnings).toEqual([]);
    const specs = pipeline.specs();
    const names = specs.map((spec) => spec.name);
    expect(names).toContain("mcp__everything__echo");
    expect(names).toContain("mcp__everything__get-sum");
    expect(names.every((name) => name.startsWith("mcp__everything__"))).toBe(true);
    const echo = specs.find((spec) => spec.name === "mcp__everything__echo");
    expect(echo?.parameters).toMatchObject({ type: "object", properties: { message: { type: "string" } }, required: ["message"] });

    expect(await pipeline.execute(callOf("mcp__everything__echo", { message: "hi there" }), context())).toEqual({ content: "Echo: hi there" });
    const sum = await pipeline.execute(callOf("mcp__everything__get-sum", { a: 2, b: 40 }), context());
    expect(sum.content).toContain("42");
    const image = await pipeline.execute(callOf("mcp__everything__get-tiny-image"), context());
    expect(image.isError).toBeUndefined();
    expect(image.content).toMatch(/\[image: image\/png, \d+ bytes; not shown\]/);
    expect(image.content).not.toContain("iVBOR");

    // Validated against the server's schema before anything is sent.
    const bad = await pipeline.execute(callOf("mcp__everything__echo", { message: 7 }), context());
    expect(bad.isError).toBe(true);
    expect(bad.content).toContain("invalid input for mcp__everything__echo");

    const [status] = mcp.statuses();
    expect(status).toMatchObject({ name: "everything", status: "connected", transport: "stdio" });
    expect(status?.tools).toContain("mcp__everything__echo");
  });

  test("over Streamable HTTP, and over SSE by falling back when the URL only speaks SSE", async () => {
    const http = await everythingHttp("streamableHttp");
    const sse = await everythingHttp("sse");
    const { mcp, warnings } = manager({
      remote: { type: "http", url: `${http.base}/mcp`, headers: { "x-test": "${TEST_HEADER:-yes}" } },
      legacy: { type: "http", url: `${sse.base}/sse` },
    });
    await mcp.start();
    expect(warnings).toEqual([]);
    expect(mcp.statuses().map((s) => [s.name, s.status, s.transport])).toEqual([
      ["remote", "connected", "http"],
      ["legacy", "connected", "sse"],
    ]);
    const pipeline = pipelineOf(mcp);
    expect(await pipeline.execute(callOf("mcp__remote__echo", { message: "over http" }), context())).toEqual({ content: "Echo: over http" });
    expect(await pipeline.execute(callOf("mcp__legacy__echo", { message: "over sse" }), context())).toEqual({ content: "Echo: over sse" });
  });
});

describe("a server that fails", () => {
  test("one that cannot start is a warning with its stderr, and its tools are absent; the others work", async () => {
    const { mcp, warnings } = manager({ broken: tiny("--fail-start"), good: tiny() });
    const pipeline = pipelineOf(mcp);
    await pipeline.prepare(new AbortController().signal);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('MCP server "broken" failed to start');
    expect(warnings[0]).toContain("cannot open the database");
    expect(pipeline.specs().map((s) => s.name)).not.toContain("mcp__broken__echo");
    const call = await pipeline.execute(callOf("mcp__broken__echo", { text: "x" }), context());
    expect(call).toMatchObject({ isError: true });
    expect(call.content).toContain('MCP server "broken" is not available');
    expect(await pipeline.execute(callOf("mcp__good__echo", { text: "x" }), context())).toEqual({ content: "echo: x" });
  });

  test("a crash in the middle of a call is an error result; the tools are gone for the turn and back at the next", async () => {
    const { mcp, warnings } = manager({ tiny: tiny() });
    const pipeline = pipelineOf(mcp);
    await pipeline.prepare(new AbortController().signal);
    const crashed = await pipeline.execute(callOf("mcp__tiny__crash"), context());
    expect(crashed.isError).toBe(true);
    expect(crashed.content).toContain("MCP tool crash of server \"tiny\" failed");
    expect(crashed.content).toContain("exited with code 3");
    expect(warnings.join("\n")).toContain('MCP server "tiny" stopped');
    expect(pipeline.specs()).toEqual([]);
    const after = await pipeline.execute(callOf("mcp__tiny__echo", { text: "x" }), context());
    expect(after.isError).toBe(true);
    expect(after.content).toContain("crashing on purpose");

    await pipeline.prepare(new AbortController().signal); // the next turn
    expect(pipeline.specs().map((s) => s.name)).toContain("mcp__tiny__echo");
    expect(await pipeline.execute(callOf("mcp__tiny__echo", { text: "back" }), context())).toEqual({ content: "echo: back" });
  });

  test("a call slower than mcp.toolTimeoutMs is cancelled with an error naming the setting", async () => {
    const { mcp } = manager({ tiny: tiny() }, { toolTimeoutMs: 300 });
    const pipeline = pipelineOf(mcp);
    await pipeline.prepare(new AbortController().signal);
    const slow = await pipeline.execute(callOf("mcp__tiny__slow", { ms: 60_000 }), context());
    expect(slow.isError).toBe(true);
    expect(slow.content).toContain("timed out after 300 ms");
    expect(slow.content).toContain("mcp.toolTimeoutMs");
    // The server is still usable.
    expect(await pipeline.execute(callOf("mcp__tiny__echo", { text: "x" }), context())).toEqual({ content: "echo: x" });
  });

  test("a malformed result, an isError result, a big result, an image and a resource", async () => {
    const { mcp } = manager({ tiny: tiny() });
    const pipeline = pipelineOf(mcp);
    await pipeline.prepare(new AbortController().signal);
    const malformed = await pipeline.execute(callOf("mcp__tiny__malformed"), context());
    expect(malformed.isError).toBe(true);
    expect(malformed.content).toContain("returned a malformed result");
    expect(await pipeline.execute(callOf("mcp__tiny__fails"), context())).toEqual({ content: "no such row", isError: true });
    const big = await pipeline.execute(callOf("mcp__tiny__big"), context());
    expect(big.content.length).toBeLessThan(51_000);
    expect(big.content).toContain("150000 more characters truncated");
    const picture = await pipeline.execute(callOf("mcp__tiny__picture"), context());
    expect(picture.content).toBe(
      "here it is\n[image: image/png, 8 bytes; not shown]\n[resource: file:///notes.txt (text/plain, 12 characters of text); not shown]",
    );
  });
});

describe("a server whose tools change", () => {
  test("notifications/tools/list_changed brings the new list to the next model call", async () => {
    const { mcp } = manager({ tiny: tiny() });
    const pipeline = pipelineOf(mcp);
    await pipeline.prepare(new AbortController().signal);
    expect(pipeline.specs().map((s) => s.name)).not.toContain("mcp__tiny__extra");
    expect(await pipeline.execute(callOf("mcp__tiny__grow"), context())).toEqual({ content: "grown" });
    expect(await eventually(() => pipeline.specs().some((s) => s.name === "mcp__tiny__extra"))).toBe(true);
    expect(await pipeline.execute(callOf("mcp__tiny__extra"), context())).toEqual({ content: "extra here" });
  });
});

describe("permissions", () => {
  test("rules name MCP tools by name, server prefix or wildcard; readOnlyHint tools are reads but not in plan mode; patterns match the arguments", async () => {
    const { mcp } = manager({ tiny: tiny() });
    await mcp.start();
    const ask = (rules: { allow?: string[]; deny?: string[] }, mode: "default" | "plan" = "default") =>
      new ToolPipeline({ tools: [], sources: [mcp.source("lead")], policy: new PermissionPolicy({ mode, ...rules }) });
    const slow = callOf("mcp__tiny__slow", { ms: 1 });
    // Headless default mode: an execute tool is denied, with the rule that would allow it.
    const denied = await ask({}).execute(slow, context());
    expect(denied.isError).toBe(true);
    expect(denied.content).toContain('"mcp__tiny__slow"');
    expect(await ask({ allow: ["mcp__tiny__*"] }).execute(slow, context())).toEqual({ content: "slow done" });
    expect(await ask({ allow: ["mcp__tiny"] }).execute(slow, context())).toEqual({ content: "slow done" });
    expect(await ask({ allow: ["mcp__tiny__slow"] }).execute(slow, context())).toEqual({ content: "slow done" });
    const deny = await ask({ allow: ["mcp__tiny__*"], deny: ["mcp__tiny__slow"] }).execute(slow, context());
    expect(deny.content).toContain('matches the deny rule "mcp__tiny__slow"');
    // echo says readOnlyHint: a read in the default mode; in plan mode a hint is not enough, an allow rule naming it is.
    const echo = callOf("mcp__tiny__echo", { text: "r" });
    expect(await ask({}).execute(echo, context())).toEqual({ content: "echo: r" });
    expect((await ask({}, "plan").execute(echo, context())).content).toContain("plan mode is read-only: mcp__tiny__echo is an MCP tool");
    expect(await ask({ allow: ["mcp__tiny__echo"] }, "plan").execute(echo, context())).toEqual({ content: "echo: r" });
    // A pattern matches the arguments' canonical JSON.
    expect((await ask({ deny: ['mcp__tiny__echo(*"text":"secret*)'] }).execute(callOf("mcp__tiny__echo", { text: "secret x" }), context())).content).toContain("matches the deny rule");
  });
});

describe("lifecycle", () => {
  test("close() kills the server and everything in its process group", async () => {
    const marker = `mcp-child-${crypto.randomUUID()}`;
    const dir = tempDir("agent-mcp-");
    const pidFile = `${dir}/pid`;
    const { mcp } = manager({ tiny: tiny("--ignore-eof", "--child", marker, "--pid-file", pidFile) });
    await mcp.start();
    expect(await processesWith(marker)).toHaveLength(2); // the server (its argument) and its child
    const pid = Number(await Bun.file(pidFile).text());
    expect(alive(pid)).toBe(true);
    await mcp.close();
    expect(await eventually(async () => (await processesWith(marker)).length === 0 && !alive(pid))).toBe(true);
    expect(mcp.statuses()[0]?.status).toBe("closed");
  });

  test("close() does not wait for a server still starting: the attempt is given up and the process killed", async () => {
    const dir = tempDir("agent-mcp-");
    const { mcp, warnings } = manager({ hung: tiny("--mute", "--pid-file", `${dir}/pid`) });
    const starting = mcp.start();
    expect(await eventually(async () => (await Bun.file(`${dir}/pid`).exists()) && (await Bun.file(`${dir}/pid`).text()) !== "")).toBe(true);
    const pid = Number(await Bun.file(`${dir}/pid`).text());
    await mcp.close(); // would take the 30 s connect timeout if it waited
    await starting;
    expect(alive(pid)).toBe(false);
    expect(warnings).toEqual([]);
  });

  test("${VAR} expands from the environment; a missing one fails that server only", async () => {
    const { mcp, warnings } = manager(
      { a: { command: "${TINY_RUNTIME}", args: ["${TINY_SCRIPT}"] }, b: { command: "${NOT_SET_ANYWHERE}" } },
      { env: { TINY_RUNTIME: process.execPath, TINY_SCRIPT: tiny().args[0] as string } },
    );
    await mcp.start();
    expect(mcp.statuses().map((s) => s.status)).toEqual(["connected", "failed"]);
    expect(warnings[0]).toContain("mcpServers.b.command uses ${NOT_SET_ANYWHERE}, which is not set");
  });

  test("teammates see only the servers marked teammates: true", async () => {
    const { mcp } = manager({ shared: { ...tiny(), teammates: true }, private: tiny() });
    const lead = mcp.source("lead");
    const teammate = mcp.source("teammate");
    await teammate.prepare(new AbortController().signal);
    expect(teammate.tools().every((t) => t.name.startsWith("mcp__shared__"))).toBe(true);
    expect(teammate.tools().length).toBeGreaterThan(0);
    expect(mcp.statuses().map((s) => s.status)).toEqual(["connected", "pending"]); // lazily: only what was needed
    await lead.prepare(new AbortController().signal);
    expect(new Set(lead.tools().map((t) => t.name.split("__")[1]))).toEqual(new Set(["shared", "private"]));
  });
});
