import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { JsonSchemaType } from "@modelcontextprotocol/sdk/validation/types.js";
import { ErrorCode, McpError, type Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { type Tool, defineTool } from "../core/tool.ts";
import { type McpConnection, messageOf } from "./connection.ts";
import { toToolResult } from "./result.ts";

/** Model APIs accept tool names of these characters, at most 64 of them. */
const MAX_TOOL_NAME = 64;

/** `mcp__<server>__<tool>`, with characters model APIs refuse replaced by `_`. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool.replace(/[^A-Za-z0-9_-]/g, "_")}`.slice(0, MAX_TOOL_NAME);
}

/** Where a call goes: the server's connection while it is up, else why it is not. */
export interface McpCallTarget {
  server: string;
  connection(): McpConnection | string;
  timeoutMs: number;
  maxOutputChars: number;
}

/** One validator factory per process: ajv compiles each schema once. */
const validators = new AjvJsonSchemaValidator();

/**
 * The input check of an MCP tool: the server's own JSON schema, through ajv. A
 * schema ajv cannot compile is left to the server to enforce.
 */
function inputOf(schema: McpTool["inputSchema"]): z.ZodType<Record<string, unknown>> {
  let validate: ((input: unknown) => { valid: boolean; errorMessage?: string }) | undefined;
  try {
    validate = validators.getValidator(schema as JsonSchemaType);
  } catch {
    validate = undefined;
  }
  return z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
    const result = validate?.(value);
    if (result && !result.valid) ctx.addIssue({ code: "custom", message: result.errorMessage ?? "does not match the tool's schema" });
  });
}

/** The server's schema as the model should see it: as is, without the dialect marker our own schemas omit too. */
function parametersOf(schema: McpTool["inputSchema"]): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = schema as Record<string, unknown>;
  return rest;
}

/**
 * An MCP server's tool as one of ours. Its effect is `execute` (it may do
 * anything) unless the server says it only reads — a hint, which the policy
 * does not take on trust in plan mode. Rules match it by name, or by a
 * pattern over its arguments' canonical JSON, which the policy builds from the
 * input (src/permissions/mcp-call.ts), so its subject is empty.
 */
export function adaptMcpTool(tool: McpTool, target: McpCallTarget): Tool<z.ZodType<Record<string, unknown>>> {
  const name = mcpToolName(target.server, tool.name);
  const title = tool.annotations?.title ?? tool.title;
  return defineTool({
    name,
    description: `${tool.description ?? title ?? tool.name} (MCP server "${target.server}")`,
    input: inputOf(tool.inputSchema),
    parameters: parametersOf(tool.inputSchema),
    effect: tool.annotations?.readOnlyHint === true ? "read" : "execute",
    subject: () => "",
    async run(input, context) {
      const connection = target.connection();
      if (typeof connection === "string") return { content: connection, isError: true };
      try {
        const result = await connection.client.callTool({ name: tool.name, arguments: input }, undefined, {
          timeout: target.timeoutMs,
          signal: context.signal,
        });
        if (!Array.isArray(result.content)) throw new Error("the result has no content list");
        return toToolResult(result as Parameters<typeof toToolResult>[0], target.maxOutputChars);
      } catch (error) {
        if (context.signal.aborted) throw error;
        return { content: callFailure(target.server, tool.name, error, target.timeoutMs, connection), isError: true };
      }
    },
  });
}

function callFailure(server: string, tool: string, error: unknown, timeoutMs: number, connection: McpConnection): string {
  const at = `MCP tool ${tool} of server "${server}"`;
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
    return `${at} timed out after ${timeoutMs} ms and was cancelled; raise mcp.toolTimeoutMs in config.json if it needs longer`;
  }
  if (connection.ended !== undefined || (error instanceof McpError && error.code === ErrorCode.ConnectionClosed)) {
    return `${at} failed: ${connection.ended ?? "the connection closed"} during the call, which may or may not have taken effect; the server's tools are unavailable for the rest of this turn`;
  }
  // The SDK checks the result with its own copy of zod: tell its error by its issues.
  const issues = (error as { issues?: unknown }).issues;
  if (Array.isArray(issues)) {
    const first = issues[0] as { path?: PropertyKey[]; message?: string } | undefined;
    const what = first ? `${first.path?.join(".") || "result"}: ${first.message}` : "not an MCP result";
    return `${at} returned a malformed result (${what}); the server does not follow the MCP protocol for this tool`;
  }
  return `${at} failed: ${messageOf(error)}`;
}
