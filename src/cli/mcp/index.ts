import { defineCommand } from "citty";
import { globalArgs } from "../args.ts";
import { mcpListCommand } from "./list.ts";

export const mcpCommand = defineCommand({
  meta: { name: "mcp", description: "The MCP servers the agent is configured with (docs/mcp.md)" },
  args: { ...globalArgs },
  subCommands: { list: mcpListCommand },
});
