import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadSettings } from "../../src/config/load.ts";
import { configLocations } from "../../src/config/locations.ts";
import { DEFAULT_ENV_POLICY, type EnvPolicy, commandEnv } from "../../src/security/env-policy.ts";
import { clearSecrets, redact, registerSecret } from "../../src/security/redact.ts";
import { tempDir } from "../support/temp-dir.ts";

afterEach(() => clearSecrets());

const AGENT_ENV = {
  PATH: "/usr/bin:/bin",
  HOME: "/home/u",
  LANG: "C.UTF-8",
  EDITOR: "vi",
  GITHUB_TOKEN: "ghp_0123456789abcdef",
  AWS_SECRET_ACCESS_KEY: "aws-secret-0123456789",
  aws_access_key_id: "AKIA0123",
  PGPASSWORD: "pw12",
  AGENT_STORE: "postgres://u:pw12@db/agent",
  DB_PASSWORD_FILE: "/run/secrets/db",
  NETRC_CREDENTIALS: "x",
  OPENAI_API_KEY: "sk-live-0123456789",
  COPY_OF_KEY_VALUE: "prefix sk-live-0123456789",
  DATABASE_URL: "postgres://u:pw12@db/agent",
  ALMOST_PW: "pw123",
};
const policy = (over: Partial<EnvPolicy>): EnvPolicy => ({ ...DEFAULT_ENV_POLICY, ...over });

describe("commandEnv", () => {
  test("by default: everything but secret names and values carrying a registered secret, short ones as whole tokens", () => {
    registerSecret("sk-live-0123456789");
    registerSecret("pw12");
    expect(commandEnv(DEFAULT_ENV_POLICY, AGENT_ENV)).toEqual({
      PATH: "/usr/bin:/bin",
      HOME: "/home/u",
      LANG: "C.UTF-8",
      EDITOR: "vi",
      // "pw12" inside "pw123" is not that password.
      ALMOST_PW: "pw123",
    });
  });

  test("inherit core and none, exclude and include_only globs (case-insensitive), set last", () => {
    expect(commandEnv(policy({ inherit: "core" }), AGENT_ENV)).toEqual({ PATH: "/usr/bin:/bin", HOME: "/home/u", LANG: "C.UTF-8" });
    expect(commandEnv(policy({ inherit: "none", set: { CI: "1" } }), AGENT_ENV)).toEqual({ CI: "1" });
    expect(Object.keys(commandEnv(policy({ exclude: ["edit*", "almost_*", "DATABASE_*"] }), AGENT_ENV))).toEqual(["PATH", "HOME", "LANG"]);
    // One list per level: a name must match each.
    expect(Object.keys(commandEnv(policy({ includeOnly: [["PATH", "HOME", "LANG"], ["pa?h", "lang"]] }), AGENT_ENV))).toEqual(["PATH", "LANG"]);
    // The user's own `set` is given as written, secret-looking names included.
    expect(commandEnv(policy({ inherit: "none", set: { NPM_TOKEN: "t" } }), AGENT_ENV)).toEqual({ NPM_TOKEN: "t" });
  });

  test("a cap on inherit (stdio MCP servers) only narrows", () => {
    expect(Object.keys(commandEnv(DEFAULT_ENV_POLICY, AGENT_ENV, { inherit: "core" }))).toEqual(["PATH", "HOME", "LANG"]);
    expect(commandEnv(policy({ inherit: "none" }), AGENT_ENV, { inherit: "core" })).toEqual({});
  });
});

describe("config shell.env across levels", () => {
  function world(files: { user?: unknown; project?: unknown; local?: unknown }) {
    const workspace = tempDir("agent-envpolicy-ws-");
    const home = tempDir("agent-envpolicy-home-");
    const locations = configLocations(workspace, {}, home);
    for (const [level, config] of Object.entries(files)) {
      const path = locations[level as keyof typeof locations];
      mkdirSync(join(path, ".."), { recursive: true });
      writeFileSync(path, JSON.stringify(config), { mode: 0o600 });
    }
    return loadSettings({ env: {}, cwd: workspace, home, workspace });
  }

  test("the user sets the policy; the project and the local file only narrow it, the rest named and ignored", () => {
    const { settings, warnings } = world({
      user: { shell: { env: { inherit: "core", exclude: ["A"], set: { X: "1" } } } },
      project: { shell: { env: { inherit: "all", exclude: ["B"], include_only: ["PATH"], set: { LD_PRELOAD: "/tmp/evil.so" } } } },
      local: { shell: { env: { inherit: "none", exclude: ["C"] } } },
    });
    expect(settings.shell.env).toEqual({ inherit: "none", exclude: ["A", "B", "C"], includeOnly: [["PATH"]], set: { X: "1" } });
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain('shell.env.inherit "all" ignored');
    expect(warnings[1]).toContain("shell.env.set ignored");
  });

  test("every credential in any config file is registered, the unused local apiKey included", () => {
    world({
      user: { headers: { Authorization: "Bearer user-header-credential" }, mcpServers: { gh: { command: "gh-mcp", env: { GITHUB_TOKEN: "ghp_fromconfig0123" } } } },
      local: { apiKey: "sk-unused-local-0123456789", store: "postgres://u:s3cr3t-pass@db/agent" },
    });
    expect(redact("sk-unused-local-0123456789 user-header-credential ghp_fromconfig0123 s3cr3t-pass")).toBe("[REDACTED] [REDACTED] [REDACTED] [REDACTED]");
  });
});
