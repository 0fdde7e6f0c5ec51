import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type LoadedConfigFile, describeIssues, withoutBom } from "./config-file.ts";
import { ConfigError } from "../core/errors.ts";
import { McpConfigFile, type McpServers } from "../mcp/config.ts";

/**
 * The servers of `--mcp-config` values, later ones winning for the same name.
 * A value is a file (`{"mcpServers": {...}}`, the shape `claude` reads) or that
 * JSON written inline. Throws ConfigError naming the file and the problem.
 */
export function readMcpConfigs(values: readonly string[], cwd: string): McpServers {
  const servers: McpServers = {};
  for (const value of values) Object.assign(servers, readOne(value, cwd));
  return servers;
}

function readOne(value: string, cwd: string): McpServers {
  const inline = value.trimStart().startsWith("{");
  const where = inline ? "--mcp-config JSON" : `--mcp-config file ${resolve(cwd, value)}`;
  let text = value;
  if (!inline) {
    try {
      text = withoutBom(readFileSync(resolve(cwd, value), "utf8"));
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const why = code === "ENOENT" ? "it does not exist" : code === "EISDIR" ? "it is a directory" : (error as Error).message;
      throw new ConfigError(`cannot read ${where}: ${why}; pass a JSON file like {"mcpServers": {"name": {"command": "..."}}}`);
    }
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${where} is not valid JSON (${(error as Error).message}); fix the syntax`);
  }
  const parsed = McpConfigFile.safeParse(json);
  if (!parsed.success) throw new ConfigError(`${where}: ${describeIssues(parsed.error.issues)}; see docs/mcp.md for the shape`);
  return parsed.data.mcpServers;
}

/** The file Claude Code and other MCP clients read at a project's root. */
export const PROJECT_MCP_FILE = ".mcp.json";

/**
 * `<workspace>/.mcp.json` (`{"mcpServers": {...}}`, other keys ignored) as a
 * project-level config file holding only `mcpServers`: it is project input, so
 * it passes the same trust filter and fingerprint as `.agent/config.json`.
 * Null when there is none; ConfigError naming the file when it is malformed.
 */
export function readProjectMcpFile(workspace: string): LoadedConfigFile | null {
  const path = join(workspace, PROJECT_MCP_FILE);
  let text: string;
  try {
    text = withoutBom(readFileSync(path, "utf8"));
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw new ConfigError(`cannot read ${path}: ${(error as Error).message}; make it a readable file or remove it`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${path} is not valid JSON (${(error as Error).message}); fix the syntax or remove the file`);
  }
  const parsed = McpConfigFile.safeParse(json);
  if (!parsed.success) throw new ConfigError(`${path}: ${describeIssues(parsed.error.issues)}; see docs/mcp.md for the shape`);
  return { level: "project", path, config: { mcpServers: parsed.data.mcpServers }, warnings: [] };
}
