import { defineCommand } from "citty";
import { McpManager, type McpServerStatus } from "../../mcp/manager.ts";
import { DEFAULT_SHELL_OUTPUT_CHARS } from "../../tools/shell.ts";
import { globalArgs, jsonArg } from "../args.ts";
import { writeErr, writeJson, writeOut } from "../output.ts";
import { runtimeArgs, runtimeSetup, trustProjectArg } from "../run/runtime-args.ts";
import { VERSION } from "../version.ts";

export const mcpListCommand = defineCommand({
  meta: {
    name: "list",
    description: "Start each configured MCP server (config levels and --mcp-config), show whether it starts and its tools, then stop it",
  },
  args: { "mcp-config": runtimeArgs["mcp-config"], ...trustProjectArg, ...jsonArg, ...globalArgs },
  async run({ args, rawArgs }) {
    const setup = runtimeSetup(args, rawArgs);
    if (!args.json) for (const warning of setup.warnings) await writeErr(`agent: warning: ${warning}\n`);
    // No runtime lock: the servers are started and stopped here, nothing in the state dir is touched.
    const manager = new McpManager({
      ...setup.settings.mcp,
      workspace: setup.workspace,
      client: { name: "agent", version: VERSION },
      maxOutputChars: DEFAULT_SHELL_OUTPUT_CHARS,
      commandEnv: setup.settings.shell.env,
      sandbox: setup.sandbox,
    });
    let statuses: McpServerStatus[];
    try {
      await manager.start();
      statuses = manager.statuses();
    } finally {
      await manager.close();
    }
    if (args.json) {
      await writeJson({ mcp_servers: statuses });
      return;
    }
    if (statuses.length === 0) {
      await writeOut("no MCP servers configured; add mcpServers to .agent/config.json or pass --mcp-config FILE (docs/mcp.md)\n");
      return;
    }
    await writeOut(statuses.map(describe).join(""));
  },
});

function describe(server: McpServerStatus): string {
  const via = server.transport ? ` (${server.transport})` : "";
  if (server.status !== "connected") return `${server.name}${via}: ${server.status}${server.error ? `: ${server.error}` : ""}\n`;
  const tools = server.tools.map((tool) => `  ${tool}\n`).join("");
  return `${server.name}${via}: connected, ${server.tools.length} tool${server.tools.length === 1 ? "" : "s"}\n${tools}`;
}
