import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadSettings } from "../../src/config/load.ts";
import { configLocations } from "../../src/config/locations.ts";
import { ConfigError } from "../../src/core/errors.ts";
import { expandServer } from "../../src/mcp/expand.ts";
import { tempDir } from "../support/temp-dir.ts";

function world(files: { user?: unknown; project?: unknown; local?: unknown }) {
  const workspace = tempDir("agent-mcp-ws-");
  const home = tempDir("agent-mcp-home-");
  const locations = configLocations(workspace, {}, home);
  for (const [level, config] of Object.entries(files) as ["user" | "project" | "local", unknown][]) {
    mkdirSync(join(locations[level], ".."), { recursive: true });
    writeFileSync(locations[level], JSON.stringify(config), { mode: 0o600 });
  }
  return { workspace, home };
}

test("mcpServers merge by name across levels, --mcp-config files last; mcp.toolTimeoutMs from the highest level; the workspace's own servers are the sandboxed ones", () => {
  const { workspace, home } = world({
    user: { mcpServers: { a: { command: "user-a" }, b: { command: "user-b" } }, mcp: { toolTimeoutMs: 5000 } },
    project: { mcpServers: { b: { command: "project-b" }, c: { type: "http", url: "http://x/mcp" } } },
    local: { mcp: { toolTimeoutMs: 7000 } },
  });
  const file = join(tempDir("agent-mcp-flag-"), "servers.json");
  writeFileSync(file, JSON.stringify({ mcpServers: { c: { command: "flag-c" } }, unrelated: true }));
  const { settings } = loadSettings({ workspace, home, env: {}, cwd: "/", projectTrusted: true, flags: { mcpConfig: [file, '{"mcpServers": {"d": {"command": "inline-d"}}}'] } });
  expect(settings.mcp).toEqual({
    servers: { a: { command: "user-a" }, b: { command: "project-b" }, c: { command: "flag-c" }, d: { command: "inline-d" } },
    toolTimeoutMs: 7000,
    // b's definition in effect is the project's; c's project one is replaced by a flag's.
    sandboxed: ["b"],
  });
});

test("without servers anywhere there are none, and calls time out after 120 s", () => {
  const { workspace, home } = world({});
  expect(loadSettings({ workspace, home, env: {} }).settings.mcp).toEqual({ servers: {}, toolTimeoutMs: 120_000, sandboxed: [] });
});

test("a bad server in a config file or a missing --mcp-config file is a ConfigError naming it", () => {
  const { workspace, home } = world({ project: { mcpServers: { "bad name": { command: "x" } } } });
  expect(() => loadSettings({ workspace, home, env: {}, projectTrusted: true })).toThrow(/mcpServers\.bad name: a server name must be/);
  const clean = world({});
  const error = (() => {
    try {
      loadSettings({ ...clean, env: {}, cwd: "/nowhere", flags: { mcpConfig: ["missing.json"] } });
    } catch (e) {
      return e as Error;
    }
  })();
  expect(error).toBeInstanceOf(ConfigError);
  expect(error?.message).toBe(
    'cannot read --mcp-config file /nowhere/missing.json: it does not exist; pass a JSON file like {"mcpServers": {"name": {"command": "..."}}}',
  );
});

test("${VAR} and ${VAR:-default} expand in every string of a server's config", () => {
  const env = { TOKEN: "t0k", DIR: "/srv" };
  expect(
    expandServer("s", { command: "${DIR}/bin/server", args: ["--token=${TOKEN}", "${LEVEL:-info}"], env: { K: "${TOKEN}" }, cwd: "${DIR}" }, env),
  ).toEqual({ command: "/srv/bin/server", args: ["--token=t0k", "info"], env: { K: "t0k" }, cwd: "/srv" });
  expect(expandServer("h", { type: "http", url: "https://${HOST:-example.com}/mcp", headers: { Authorization: "Bearer ${TOKEN}" } }, env)).toEqual({
    type: "http",
    url: "https://example.com/mcp",
    headers: { Authorization: "Bearer t0k" },
  });
  expect(() => expandServer("h", { type: "http", url: "https://${HOST}/mcp" }, env)).toThrow(
    "mcpServers.h.url uses ${HOST}, which is not set; export HOST or write ${HOST:-default}",
  );
});
