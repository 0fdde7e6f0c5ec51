import { isAbsolute, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { McpHttpServer, McpServerConfig } from "./config.ts";
import { StdioProcessTransport } from "./stdio-transport.ts";
import type { EnvPolicy } from "../security/env-policy.ts";

/** How the agent introduces itself to servers. */
export interface ClientInfo {
  name: string;
  version: string;
}

/** A connected server: its client, the tools it offers, and how it is reached. */
export interface McpConnection {
  client: Client;
  transport: "stdio" | "http" | "sse";
  tools: McpTool[];
  /** Why the connection ended, once it has; undefined while it is up. */
  readonly ended: string | undefined;
  /** Told once when the connection ends by itself (the server exited or hung up). */
  onEnd?: (why: string) => void;
  /** Told when the server changed its tools (`notifications/tools/list_changed`) and `tools` is the new list. */
  onToolsChanged?: () => void;
  close(): Promise<void>;
}

/**
 * Connects to one server (its config already expanded) and lists its tools,
 * within `timeoutMs`. Throws an Error whose message says what went wrong; the
 * caller turns it into a warning and a failed status.
 */
export interface ConnectOptions {
  workspace: string;
  client: ClientInfo;
  timeoutMs: number;
  /** Aborting gives up the attempt and stops what it started (the runtime is closing). */
  signal?: AbortSignal;
  /** The environment policy a stdio server starts from; the default policy when absent. */
  commandEnv?: EnvPolicy;
  /** Puts a stdio server's argv in the sandbox; absent, it runs as is. */
  wrap?: (argv: string[], cwd: string) => string[];
}

export async function connectServer(config: McpServerConfig, options: ConnectOptions): Promise<McpConnection> {
  if ("url" in config) return connectHttp(config, options);
  const transport = new StdioProcessTransport({
    command: config.command,
    args: config.args,
    env: config.env,
    ...(options.commandEnv ? { policy: options.commandEnv } : {}),
    ...(options.wrap ? { wrap: options.wrap } : {}),
    cwd: config.cwd === undefined ? options.workspace : isAbsolute(config.cwd) ? config.cwd : resolve(options.workspace, config.cwd),
  });
  try {
    return await open(transport, "stdio", options, () => {
      const how = transport.exit ?? "closed the connection";
      const stderr = transport.stderrTail;
      return `the server process ${how}${stderr ? ` (stderr: ${lastLines(stderr)})` : ""}`;
    });
  } catch (error) {
    const stderr = transport.stderrTail;
    throw new Error(`${messageOf(error)}${stderr ? ` (stderr: ${lastLines(stderr)})` : ""}`, { cause: error });
  }
}

async function connectHttp(config: McpHttpServer, options: ConnectOptions): Promise<McpConnection> {
  let url: URL;
  try {
    url = new URL(config.url);
  } catch {
    throw new Error(`url ${JSON.stringify(config.url)} is not a URL; write it like http://localhost:3000/mcp`);
  }
  const requestInit = { headers: config.headers ?? {} };
  const hungUp = () => "the server closed the connection";
  if (config.type === "sse") return open(new SSEClientTransport(url, { requestInit }), "sse", options, hungUp);
  try {
    return await open(new StreamableHTTPClientTransport(url, { requestInit }), "http", options, hungUp);
  } catch (streamableError) {
    if (options.signal?.aborted) throw streamableError;
    // A server from before Streamable HTTP answers its POST with an error status;
    // the spec's way to tell is to try the older HTTP+SSE transport next.
    try {
      return await open(new SSEClientTransport(url, { requestInit }), "sse", options, hungUp);
    } catch {
      throw streamableError;
    }
  }
}

async function open(
  transport: Transport,
  kind: McpConnection["transport"],
  options: ConnectOptions,
  whyEnded: () => string,
): Promise<McpConnection> {
  let ended: string | undefined;
  let closing = false;
  // The SDK lists the tools again when the server says they changed.
  const client = new Client(options.client, {
    capabilities: {},
    listChanged: {
      tools: {
        onChanged: (error, tools) => {
          if (error || !tools) return;
          connection.tools = tools;
          connection.onToolsChanged?.();
        },
      },
    },
  });
  const connection: McpConnection = {
    client,
    transport: kind,
    tools: [],
    get ended() {
      return ended;
    },
    async close() {
      closing = true;
      ended ??= "closed";
      await client.close();
    },
  };
  client.onclose = () => {
    if (closing || ended !== undefined) return;
    ended = whyEnded();
    connection.onEnd?.(ended);
  };
  try {
    const request = { timeout: options.timeoutMs, signal: options.signal };
    await client.connect(transport, request);
    connection.tools = await listAllTools(client, request);
    return connection;
  } catch (error) {
    await connection.close().catch(() => {});
    // The client may have begun closing the transport itself without waiting: wait for it here.
    await transport.close().catch(() => {});
    throw error;
  }
}

async function listAllTools(client: Client, request: { timeout: number; signal?: AbortSignal }): Promise<McpTool[]> {
  if (!client.getServerCapabilities()?.tools) return [];
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, request);
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

function lastLines(text: string): string {
  return text.split("\n").slice(-3).join(" | ").slice(-400);
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
