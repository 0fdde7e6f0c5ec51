import { z } from "zod";
import { lazySchema } from "../core/lazy-schema.ts";

// The shape of `mcpServers` as `claude` and other MCP clients already write it,
// so a user's existing file works here unchanged.

/** Becomes part of every tool name (`mcp__<server>__<tool>`), which model APIs limit to these characters. */
export const MCP_SERVER_NAME = /^[A-Za-z0-9_-]{1,32}$/;

/** The keys both kinds of server take (built with their schema). */
const common = () => ({
  /** Teammates get this server's tools too (the Lead and `task` subagents always do). */
  teammates: z.boolean().optional(),
});

export const McpStdioServer = lazySchema(() =>
  z.strictObject({
    type: z.literal("stdio").optional(),
    command: z.string().min(1),
    args: z.array(z.string()).optional(),
    /** Added to a minimal environment (PATH, HOME, …): the agent's own variables, API keys above all, are not passed on. */
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().min(1).optional(),
    ...common(),
  }),
);
export type McpStdioServer = z.infer<typeof McpStdioServer>;

export const McpHttpServer = lazySchema(() =>
  z.strictObject({
    /** `http`: Streamable HTTP, falling back to SSE when the server only speaks that; `sse`: SSE only. */
    type: z.enum(["http", "sse"]),
    url: z.string().min(1),
    headers: z.record(z.string(), z.string()).optional(),
    ...common(),
  }),
);
export type McpHttpServer = z.infer<typeof McpHttpServer>;

export type McpServerConfig = McpStdioServer | McpHttpServer;

/**
 * A stdio server or a remote one, told apart by `type` (or a `url`) so that a
 * mistake is reported against the shape the user meant, not as "invalid input".
 */
export const McpServerConfig: z.ZodType<McpServerConfig> = lazySchema(() =>
  z.unknown().transform((value, ctx) => {
    const remote = typeof value === "object" && value !== null && ("url" in value || ["http", "sse"].includes((value as { type?: unknown }).type as string));
    const parsed = (remote ? McpHttpServer : McpStdioServer).safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.issues.push(issue as (typeof ctx.issues)[number]);
    return z.NEVER;
  }),
);

export const McpServers = lazySchema(() =>
  z.record(z.string(), McpServerConfig).superRefine((servers, ctx) => {
    for (const name of Object.keys(servers)) {
      if (!MCP_SERVER_NAME.test(name)) {
        ctx.addIssue({ code: "custom", path: [name], message: "a server name must be 1-32 letters, digits, '_' or '-' (it becomes part of tool names)" });
      }
    }
  }),
);
export type McpServers = z.infer<typeof McpServers>;

/** The `mcp` key of config.json: settings of the MCP client itself. */
export const McpSettingsConfig = lazySchema(() =>
  z.strictObject({
    /** How long one MCP tool call may take before it is cancelled. */
    toolTimeoutMs: z.number().int().positive().optional(),
  }),
);

/** A `--mcp-config` file: `{"mcpServers": {...}}`; other keys (e.g. from a larger settings file) are ignored. */
export const McpConfigFile = lazySchema(() => z.object({ mcpServers: McpServers }));

export const DEFAULT_MCP_TOOL_TIMEOUT_MS = 120_000;

/** The MCP part of the settings, after every config level and `--mcp-config` file is merged. */
export interface McpSettings {
  servers: McpServers;
  toolTimeoutMs: number;
  /**
   * The stdio servers that run in the sandbox: those the workspace's own config
   * files define (the repository can ship them, and they run in it); the user's
   * config and `--mcp-config` files name programs the user chose.
   */
  sandboxed?: string[];
}
