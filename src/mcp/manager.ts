import type { Sandbox } from "../security/sandbox/sandbox.ts";
import type { Tool, ToolSource } from "../core/tool.ts";
import type { McpServerConfig, McpSettings } from "./config.ts";
import type { ClientInfo, McpConnection } from "./connection.ts";
import { expandServer } from "./expand.ts";
import type { EnvPolicy } from "../security/env-policy.ts";

/** A server's connection attempts per runtime: the first, then a restart at each of two later turns. */
const MAX_STARTS = 3;
/** How long connecting and listing tools may take. */
const CONNECT_TIMEOUT_MS = 30_000;

export type McpServerState = "pending" | "connected" | "failed" | "closed";

/** One server as the init line and `agent mcp list` show it. */
export interface McpServerStatus {
  name: string;
  status: McpServerState;
  /** The names the model sees (`mcp__<server>__<tool>`). */
  tools: string[];
  transport?: "stdio" | "http" | "sse";
  error?: string;
}

export interface McpManagerOptions extends McpSettings {
  workspace: string;
  client: ClientInfo;
  /** Where `${VAR}` in a server's config is read from. */
  env?: Record<string, string | undefined>;
  /** The environment policy stdio servers start from (config `shell.env`), capped at its core list. */
  commandEnv?: EnvPolicy;
  /** Output cap of one call's result, like `shell`'s. */
  maxOutputChars: number;
  /** A server failed to start or died: one line for the user. */
  onWarning?: (message: string) => void;
  /** The sandbox the `sandboxed` stdio servers run in, around the workspace (docs/security.md, "The execution boundary"). */
  sandbox?: Sandbox;
}

/** Who asks for tools: teammates get only the servers whose config says `teammates: true`. */
export type McpAudience = "lead" | "teammate";

class ServerSlot {
  readonly name: string;
  readonly config: McpServerConfig;
  connection: McpConnection | undefined;
  tools: Tool[] = [];
  starts = 0;
  error: string | undefined;
  starting: Promise<void> | undefined;

  constructor(name: string, config: McpServerConfig) {
    this.name = name;
    this.config = config;
  }

  get state(): McpServerState {
    if (this.connection?.ended === "closed") return "closed";
    if (this.connection && this.connection.ended === undefined) return "connected";
    return this.error !== undefined || this.connection ? "failed" : "pending";
  }

  /** Why a call cannot reach this server now. */
  get down(): string {
    const why = this.connection?.ended ?? this.error ?? "it has not started";
    return `MCP server "${this.name}" is not available (${why}); its tools cannot be called in this turn`;
  }
}

/**
 * The runtime's MCP servers: started on first need (the first turn that has
 * tools to offer, the init line, `agent mcp list`), restarted at a later turn
 * when one died (a few times at most), closed with the runtime.
 */
export class McpManager {
  readonly #o: McpManagerOptions;
  readonly #slots: ServerSlot[];
  /** Aborted by close(): a server still starting gives up at once instead of holding the close. */
  readonly #closing = new AbortController();
  #closed = false;

  constructor(options: McpManagerOptions) {
    this.#o = options;
    this.#slots = Object.entries(options.servers).map(([name, config]) => new ServerSlot(name, config));
  }

  get configured(): boolean {
    return this.#slots.length > 0;
  }

  /** Starts every server not running (within its start budget) and waits for all of them; never throws. */
  async start(audience: McpAudience = "lead"): Promise<void> {
    await Promise.all(this.#for(audience).map((slot) => this.#ensure(slot)));
  }

  statuses(): McpServerStatus[] {
    return this.#slots.map((slot) => ({
      name: slot.name,
      status: slot.state,
      tools: slot.state === "connected" ? slot.tools.map((tool) => tool.name) : [],
      ...(slot.connection ? { transport: slot.connection.transport } : {}),
      ...(slot.state === "failed" ? { error: slot.connection?.ended ?? slot.error } : {}),
    }));
  }

  /** The tools of `audience`'s servers, for a ToolPipeline. */
  source(audience: McpAudience): ToolSource {
    return {
      prepare: async () => {
        if (!this.#closed) await this.start(audience);
      },
      tools: () => this.#for(audience).flatMap((slot) => (slot.state === "connected" ? slot.tools : [])),
      unavailable: (name) => {
        const slot = this.#for(audience).find((s) => name.startsWith(`mcp__${s.name}__`));
        return slot && slot.state !== "connected" ? slot.down : undefined;
      },
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#closing.abort();
    await Promise.all(
      this.#slots.map(async (slot) => {
        await slot.starting?.catch(() => {});
        await slot.connection?.close().catch(() => {});
      }),
    );
  }

  #for(audience: McpAudience): ServerSlot[] {
    return audience === "lead" ? this.#slots : this.#slots.filter((slot) => slot.config.teammates === true);
  }

  #ensure(slot: ServerSlot): Promise<void> {
    if (this.#closed || slot.state === "connected" || slot.starts >= MAX_STARTS) return slot.starting ?? Promise.resolve();
    slot.starting ??= this.#connect(slot).finally(() => {
      slot.starting = undefined;
    });
    return slot.starting;
  }

  /** For a server the workspace's config defines: its argv run as `exec argv` inside the workspace's sandbox. */
  #wrapFor(name: string): { wrap?: (argv: string[], cwd: string) => string[] } {
    const sandbox = this.#o.sandbox;
    if (sandbox === undefined || !(this.#o.sandboxed ?? []).includes(name)) return {};
    const quote = (word: string) => `'${word.replace(/'/g, "'\\''")}'`;
    return { wrap: (argv, cwd) => sandbox.within(this.#o.workspace).command(`exec ${argv.map(quote).join(" ")}`, cwd) };
  }

  async #connect(slot: ServerSlot): Promise<void> {
    slot.starts += 1;
    const previous = slot.connection;
    slot.connection = undefined;
    await previous?.close().catch(() => {});
    try {
      const config = expandServer(slot.name, slot.config, this.#o.env ?? process.env);
      // The SDK is loaded on first use: a command that starts no server (`--version`
      // above all) does not pay for it.
      const { connectServer } = await import("./connection.ts");
      const { adaptMcpTool } = await import("./tool-adapter.ts");
      const connection = await connectServer(config, {
        workspace: this.#o.workspace,
        client: this.#o.client,
        timeoutMs: CONNECT_TIMEOUT_MS,
        signal: this.#closing.signal,
        ...(this.#o.commandEnv ? { commandEnv: this.#o.commandEnv } : {}),
        ...this.#wrapFor(slot.name),
      });
      if (this.#closed) {
        await connection.close();
        return;
      }
      slot.connection = connection;
      slot.error = undefined;
      slot.tools = this.#adapt(slot, connection, adaptMcpTool);
      connection.onToolsChanged = () => {
        if (slot.connection === connection) slot.tools = this.#adapt(slot, connection, adaptMcpTool);
      };
      connection.onEnd = (why) => this.#warn(`MCP server "${slot.name}" stopped: ${why}; its tools are unavailable until a later turn restarts it`);
    } catch (error) {
      if (this.#closed) return;
      // One line: an HTTP server's error page or a stack must not flood the warning.
      slot.error = `failed to start: ${(error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, " ").slice(0, 500)}`;
      const retry = slot.starts < MAX_STARTS ? "; it will be tried again at the next turn" : "";
      this.#warn(`MCP server "${slot.name}" ${slot.error}; its tools are unavailable${retry}`);
    }
  }

  #adapt(slot: ServerSlot, connection: McpConnection, adaptMcpTool: typeof import("./tool-adapter.ts").adaptMcpTool): Tool[] {
    const target = {
      server: slot.name,
      connection: () => (slot.connection === connection && connection.ended === undefined ? connection : slot.down),
      timeoutMs: this.#o.toolTimeoutMs,
      maxOutputChars: this.#o.maxOutputChars,
    };
    const tools: Tool[] = [];
    const names = new Set<string>();
    for (const tool of connection.tools) {
      const adapted = adaptMcpTool(tool, target);
      if (names.has(adapted.name)) {
        this.#warn(`MCP server "${slot.name}": tool ${JSON.stringify(tool.name)} is skipped: its name becomes ${adapted.name}, like another tool's`);
        continue;
      }
      names.add(adapted.name);
      tools.push(adapted);
    }
    return tools;
  }

  #warn(message: string): void {
    this.#o.onWarning?.(message);
  }
}
