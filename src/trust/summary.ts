import type { HookConfig } from "../config/config.ts";
import type { McpServerConfig } from "../mcp/config.ts";
import type { TrustItem } from "./fingerprint.ts";

/**
 * What trusting the project would enable, one line per hook, server, header or
 * rule, grouped by file: what `agent trust` prints and the terminal question shows.
 */
export function trustSummaryLines(items: readonly TrustItem[]): string[] {
  const lines: string[] = [];
  let source: string | undefined;
  for (const item of items) {
    if (item.source !== source) {
      source = item.source;
      lines.push(`  ${source}`);
    }
    for (const line of itemLines(item)) lines.push(`    ${line}`);
  }
  return lines;
}

function itemLines(item: TrustItem): string[] {
  const runs = item.covers.length > 0 ? ` (runs ${item.covers.join(", ")})` : "";
  if (item.key === "hooks") {
    const hooks = Object.entries(item.value as Record<string, HookConfig[]>).flatMap(([event, list]) =>
      list.map((hook) => `hook ${event}${hook.matcher ? ` [${hook.matcher}]` : ""}: ${hook.command}`),
    );
    return [...hooks, `  ${item.effect}${runs}`];
  }
  if (item.key === "mcpServers") {
    const servers = Object.entries(item.value as Record<string, McpServerConfig>).map(([name, server]) =>
      "url" in server
        ? `MCP server ${name}: ${server.type} ${server.url}${server.headers ? ` (headers ${Object.keys(server.headers).join(", ")})` : ""}`
        : `MCP server ${name}: ${[server.command, ...(server.args ?? [])].join(" ")}${server.env ? ` (env ${Object.keys(server.env).join(", ")})` : ""}`,
    );
    return [...servers, `  ${item.effect}${runs}`];
  }
  if (item.key === "headers") {
    return [...Object.entries(item.value as Record<string, string>).map(([name, value]) => `header ${name}: ${value}`), `  ${item.effect}`];
  }
  const value = Array.isArray(item.value) ? item.value.join(", ") : typeof item.value === "string" ? item.value : JSON.stringify(item.value);
  return [`${item.key}: ${value}  (${item.effect})${runs}`];
}
