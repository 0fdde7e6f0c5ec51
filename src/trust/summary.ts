import { readFileSync } from "node:fs";
import { join } from "node:path";
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

/** Programs that run what a project file says rather than the command line: their scripts are not in the fingerprint. */
const SCRIPT_RUNNERS = /(?:^|[\s;&|(`])(npm|npx|yarn|pnpm|bun|make|just|task|gradle|mvn|cargo|rake|tox|nox)(?=\s|$)/;
/** A line of a script that reads another file into it: what that file says is not in the fingerprint either. */
const SOURCING = /^\s*(?:source|\.)\s+(\S+)/m;

/** What the fingerprint covers, and what it cannot: `agent trust` says both. */
export interface TrustCoverage {
  /** Workspace files whose content is in the hash, relative to the workspace. */
  covered: string[];
  /** What a trusted command runs that the hash does not see, one phrase each. */
  uncovered: string[];
}

/**
 * The files the hash covers and what it does not: for each hook or server
 * command that runs a package script or a build file's target, and each
 * covered script that sources another file, those. They can change after the
 * trust without ending it. `workspace` is where the covered files are read.
 */
export function trustCoverage(items: readonly TrustItem[], workspace: string): TrustCoverage {
  const covered = [...new Set(items.flatMap((item) => item.covers).concat(items.filter((item) => item.definition !== undefined).map((item) => item.source)))].sort();
  const uncovered: string[] = [];
  for (const command of commandsOf(items)) {
    const runner = SCRIPT_RUNNERS.exec(command)?.[1];
    if (runner !== undefined) uncovered.push(`\`${command}\`: what ${runner} runs from the project's own files (package.json scripts, a Makefile's recipes and the like)`);
  }
  for (const file of covered) {
    const sourced = SOURCING.exec(textOf(join(workspace, file)))?.[1];
    if (sourced !== undefined) uncovered.push(`${file}: the files it sources (${sourced})`);
  }
  return { covered, uncovered };
}

/** The lines `agent trust` prints after the summary: what the hash holds and what it cannot. */
export function trustCoverageLines(items: readonly TrustItem[], workspace: string): string[] {
  const { covered, uncovered } = trustCoverage(items, workspace);
  return [
    covered.length > 0 ? `The trust covers these settings and the content of: ${covered.join(", ")}.` : "The trust covers these settings.",
    ...(uncovered.length > 0 ? ["It cannot cover what those commands read or run in turn, so a change there keeps the trust:", ...uncovered.map((line) => `  ${line}`)] : []),
    "Never covered: package scripts, files a script sources or reads, and programs on PATH.",
  ];
}

/** Every hook command line and stdio server command of the items. */
function commandsOf(items: readonly TrustItem[]): string[] {
  return items.flatMap((item) => {
    if (item.key === "hooks") return Object.values(item.value as Record<string, HookConfig[]>).flatMap((list) => list.map((hook) => hook.command));
    if (item.key === "mcpServers") {
      return Object.values(item.value as Record<string, McpServerConfig>).flatMap((server) => ("command" in server ? [[server.command, ...(server.args ?? [])].join(" ")] : []));
    }
    return [];
  });
}

/** A covered file's text, or nothing when it cannot be read (gone since, a directory). */
function textOf(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}
