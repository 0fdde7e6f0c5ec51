import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_ENV_POLICY } from "../../src/security/env-policy.ts";
import { DEFAULTS, type LoadSettingsInput, loadSettings, modelClientOptions } from "../../src/config/load.ts";
import { type ConfigLevel, configLocations } from "../../src/config/locations.ts";
import { ConfigError, UsageError } from "../../src/core/errors.ts";
import { readProjectMcpFile } from "../../src/config/mcp-config-file.ts";
import { tempDir } from "../support/temp-dir.ts";

/** A workspace and a home; each given level's file written (raw text when a string). */
function world(files: Partial<Record<ConfigLevel, unknown>> = {}, mode = 0o600) {
  const workspace = tempDir("agent-config-ws-");
  const home = tempDir("agent-config-home-");
  const locations = configLocations(workspace, {}, home);
  for (const [level, config] of Object.entries(files) as [ConfigLevel, unknown][]) {
    const path = locations[level];
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, typeof config === "string" ? config : JSON.stringify(config), { mode });
    chmodSync(path, mode);
  }
  return { workspace, home, locations };
}

/** A workspace whose local config file holds `config` (the level the old single file maps to). */
function workspaceWith(config?: unknown, mode = 0o600): string {
  return world(config === undefined ? {} : { local: config }, mode).workspace;
}

/** The project trusted, as `agent trust` would leave it: these tests are about levels (test/config/project-rules.test.ts: untrusted). */
function load(input: Partial<LoadSettingsInput>) {
  return loadSettings({ env: {}, cwd: "/cwd", home: tempDir("agent-config-home-"), projectTrusted: true, ...input, workspace: input.workspace ?? workspaceWith() });
}

function errorOf(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a throw");
}

describe("precedence: flags > environment > config.json > defaults", () => {
  test("defaults with nothing given, and no file read", () => {
    const { settings, files, warnings } = load({});
    expect(files).toEqual([]);
    expect(warnings).toEqual([]);
    expect(settings).toMatchObject({ ...DEFAULTS, permissions: { allow: [], deny: [] }, hooks: {} });
    expect(settings.baseUrl).toBeUndefined();
    expect(settings.apiKey).toBeUndefined();
  });

  test("each layer overrides the one below, key by key", () => {
    const ws = workspaceWith({
      model: "file-model",
      baseUrl: "http://file.example/v1",
      apiKey: "file-key",
      maxTurns: 7,
      permissionMode: "plan",
      requestTimeoutMs: 5000,
    });
    const fileOnly = load({ workspace: ws }).settings;
    expect(fileOnly).toMatchObject({
      model: "file-model",
      baseUrl: "http://file.example/v1",
      apiKey: "file-key",
      maxTurns: 7,
      permissionMode: "plan",
      requestTimeoutMs: 5000,
    });

    const env = {
      AGENT_MODEL: "env-model",
      OPENAI_BASE_URL: "http://env.example/v1",
      OPENAI_API_KEY: "env-key",
      AGENT_MAX_TURNS: "8",
      AGENT_PERMISSION_MODE: "acceptEdits",
    };
    expect(load({ workspace: ws, env }).settings).toMatchObject({
      model: "env-model",
      baseUrl: "http://env.example/v1",
      apiKey: "env-key",
      maxTurns: 8,
      permissionMode: "acceptEdits",
      requestTimeoutMs: 5000,
    });

    const flags = { model: "flag-model", baseUrl: "https://flag.example/v1", maxTurns: "9", permissionMode: "bypassPermissions" };
    expect(load({ workspace: ws, env, flags }).settings).toMatchObject({
      model: "flag-model",
      baseUrl: "https://flag.example/v1",
      apiKey: "env-key",
      maxTurns: 9,
      permissionMode: "bypassPermissions",
    });
  });

  test("an empty environment variable counts as unset", () => {
    const ws = workspaceWith({ model: "file-model", baseUrl: "http://file.example/v1" });
    const env = { AGENT_MODEL: "", OPENAI_BASE_URL: "", OPENAI_API_KEY: "" };
    expect(load({ workspace: ws, env }).settings).toMatchObject({ model: "file-model", baseUrl: "http://file.example/v1" });
    expect(load({ workspace: ws, env }).settings.apiKey).toBeUndefined();
  });

  test("file-only keys come through: rules, hooks, shell, compaction", () => {
    const config = {
      permissions: { allow: ["read_file", "shell(git status*)"], deny: ["write_file(secrets/**)"] },
      hooks: { PreToolUse: [{ matcher: "shell", command: "./check.sh", timeoutMs: 2000 }] },
      shell: { timeoutMs: 1000, deny: ["mkfs"] },
      compaction: { thresholdChars: 10000 },
    };
    const { settings } = load({ workspace: workspaceWith(config) });
    expect(settings.permissions).toEqual(config.permissions);
    expect(settings.hooks).toEqual(config.hooks);
    expect(settings.shell).toEqual({ ...config.shell, env: DEFAULT_ENV_POLICY });
    expect(settings.compaction).toEqual(config.compaction);
  });

  test("--record and --replay paths are absolute, from the cwd", () => {
    expect(load({ flags: { replay: "examples/x.jsonl" } }).settings.replayPath).toBe("/cwd/examples/x.jsonl");
    expect(load({ flags: { record: "/abs/r.jsonl" } }).settings.recordPath).toBe("/abs/r.jsonl");
    expect(errorOf(() => load({ flags: { record: "a", replay: "b" } })).message).toContain(
      "--record and --replay cannot be used together",
    );
  });

  test("modelClientOptions carries the model part", () => {
    const { settings } = load({ env: { OPENAI_API_KEY: "k" }, flags: { baseUrl: "http://h/v1", replay: "c.jsonl" } });
    expect(modelClientOptions(settings)).toEqual({
      model: DEFAULTS.model,
      baseUrl: "http://h/v1",
      provider: "openai",
      profile: "auto",
      apiKey: "k",
      headers: {},
      timeoutMs: DEFAULTS.requestTimeoutMs,
      recordPath: undefined,
      replayPath: "/cwd/c.jsonl",
    });
  });
});

describe("the provider: named, or from the base URL's host; its own key variable", () => {
  const env = { OPENAI_API_KEY: "openai-key", ANTHROPIC_API_KEY: "anthropic-key", OPENAI_BASE_URL: "http://openai-proxy/v1" };

  test("api.anthropic.com means anthropic, with ANTHROPIC_API_KEY and a Claude model by default; any other host openai", () => {
    const anthropic = load({ env: { ...env, OPENAI_BASE_URL: undefined }, flags: { baseUrl: "https://api.anthropic.com" } }).settings;
    expect([anthropic.provider, anthropic.apiKey, anthropic.model]).toEqual(["anthropic", "anthropic-key", "claude-sonnet-4-5"]);
    const other = load({ env, flags: { baseUrl: "https://api.groq.com/openai/v1" } }).settings;
    expect([other.provider, other.apiKey, other.model]).toEqual(["openai", "openai-key", DEFAULTS.model]);
  });

  test("--provider anthropic never takes the OpenAI key or OPENAI_BASE_URL; config apiKey is the fallback", () => {
    const named = load({ env, flags: { provider: "anthropic" } });
    expect([named.settings.provider, named.settings.apiKey, named.settings.baseUrl]).toEqual(["anthropic", "anthropic-key", undefined]);
    expect(named.sources.apiKey).toEqual({ level: "env", from: "ANTHROPIC_API_KEY" });
    const fromFile = load({ env: { OPENAI_API_KEY: "openai-key" }, workspace: workspaceWith({ provider: "anthropic", apiKey: "file-key" }) });
    expect([fromFile.settings.provider, fromFile.settings.apiKey]).toEqual(["anthropic", "file-key"]);
    const responses = load({ env, flags: { provider: "openai-responses" } }).settings;
    expect([responses.provider, responses.apiKey, responses.baseUrl]).toEqual(["openai-responses", "openai-key", "http://openai-proxy/v1"]);
  });

  test("--provider anthropic takes ANTHROPIC_BASE_URL, as Claude Code does; the other providers never do", () => {
    const anthropicEnv = { ...env, ANTHROPIC_BASE_URL: "http://anthropic-proxy:8080" };
    const named = load({ env: anthropicEnv, flags: { provider: "anthropic" } });
    expect([named.settings.provider, named.settings.baseUrl, named.settings.apiKey]).toEqual(["anthropic", "http://anthropic-proxy:8080", "anthropic-key"]);
    expect(named.sources.baseUrl).toEqual({ level: "env", from: "ANTHROPIC_BASE_URL" });
    expect(load({ env: anthropicEnv }).settings.baseUrl).toBe("http://openai-proxy/v1");
    expect(load({ env: { ANTHROPIC_BASE_URL: "http://anthropic-proxy:8080" } }).settings).toMatchObject({ provider: "openai", baseUrl: undefined });
    expect(load({ env: anthropicEnv, flags: { provider: "anthropic", baseUrl: "http://flag/" } }).settings.baseUrl).toBe("http://flag/");
  });

  test("an unknown provider names the choices", () => {
    const error = errorOf(() => load({ flags: { provider: "claude" } }));
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toContain("openai, openai-responses, anthropic");
  });
});

describe("config.json errors name the file, the key and the fix", () => {
  test("an unknown key, listing the known ones", () => {
    const ws = workspaceWith({ modle: "x" });
    const error = errorOf(() => load({ workspace: ws }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toStartWith(`config file ${join(ws, ".agent", "config.local.json")}: unknown key "modle" (known keys: model, baseUrl,`);
    expect(error.message).toContain("fix it or remove it");
    expect(error.message).not.toContain("\n");
  });

  test("an unknown nested key names where it is", () => {
    const error = errorOf(() => load({ workspace: workspaceWith({ hooks: { PreToolUse: [{ command: "x", match: "y" }] } }) }));
    expect(error.message).toContain('unknown key "match" in hooks.PreToolUse[0]');
    const event = errorOf(() => load({ workspace: workspaceWith({ hooks: { PreTool: [] } }) }));
    expect(event.message).toContain('unknown key "PreTool" in hooks');
  });

  test("bad JSON names the place", () => {
    const ws = workspaceWith('{\n  "model": "x"\n  "maxTurns": 3\n}');
    const error = errorOf(() => load({ workspace: ws }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toMatch(
      /^config file .*config\.local\.json is not valid JSON \(CommaExpected at line 3, column 3\); fix the syntax or remove the file$/,
    );
    expect(errorOf(() => load({ workspace: workspaceWith("") })).message).toContain("is not valid JSON");
  });

  test("a file that starts with a UTF-8 byte order mark (as some Windows editors save) is read", () => {
    const ws = workspaceWith('\ufeff{ "model": "bom-model", // a comment\n "maxTurns": 3 }');
    expect(load({ workspace: ws }).settings).toMatchObject({ model: "bom-model", maxTurns: 3 });
    const mcp = join(ws, ".mcp.json");
    writeFileSync(mcp, `\ufeff${JSON.stringify({ mcpServers: { tiny: { command: "true" } } })}`);
    expect(readProjectMcpFile(ws)?.config.mcpServers).toEqual({ tiny: { command: "true" } });
    // A mark anywhere else is still not JSON.
    expect(errorOf(() => load({ workspace: workspaceWith('{ "model": \ufeff"x" }') })).message).toContain("is not valid JSON");
  });

  test("a bad enum value lists the allowed ones", () => {
    const error = errorOf(() => load({ workspace: workspaceWith({ permissionMode: "yolo" }) }));
    expect(error.message).toContain('permissionMode must be one of "default", "acceptEdits", "plan", "bypassPermissions"');
  });

  test("a wrong type, a bad URL, not an object; several problems are counted", () => {
    expect(errorOf(() => load({ workspace: workspaceWith({ maxTurns: "3" }) })).message).toContain(
      "maxTurns: invalid input: expected number, received string",
    );
    expect(errorOf(() => load({ workspace: workspaceWith({ baseUrl: "nope" }) })).message).toContain("baseUrl: invalid URL");
    expect(errorOf(() => load({ workspace: workspaceWith([]) })).message).toContain("the top level: invalid input: expected object");
    expect(errorOf(() => load({ workspace: workspaceWith({ maxTurns: 0, model: "" }) })).message).toContain("(and 1 more problem)");
  });

  test("a config.json that is a directory", () => {
    const ws = world().workspace;
    mkdirSync(join(ws, ".agent", "config.local.json"), { recursive: true });
    expect(errorOf(() => load({ workspace: ws })).message).toContain("cannot read config file");
  });
});

describe("bad flag and environment values", () => {
  test("flags are usage errors naming the flag", () => {
    const error = errorOf(() => load({ flags: { maxTurns: "0" } }));
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toBe('invalid value "0" for --max-turns: expected a whole number greater than 0, e.g. 20');
    for (const maxTurns of ["1e3", " 7", "-2", "3.5", "0x10"]) {
      expect(() => load({ flags: { maxTurns } })).toThrow(UsageError);
    }
    expect(errorOf(() => load({ flags: { baseUrl: "localhost:11434" } })).message).toContain("for --base-url: expected an http(s) URL");
    expect(errorOf(() => load({ flags: { permissionMode: "yolo" } })).message).toContain("expected one of default, acceptEdits");
    expect(errorOf(() => load({ flags: { model: "" } })).message).toContain("for --model: expected a non-empty value");
  });

  test("environment values are config errors naming the variable", () => {
    const error = errorOf(() => load({ env: { AGENT_MAX_TURNS: "many" } }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe(
      'invalid AGENT_MAX_TURNS="many" in the environment: expected a whole number greater than 0, e.g. 20; fix or unset it',
    );
    expect(errorOf(() => load({ env: { AGENT_PERMISSION_MODE: "all" } })).message).toContain("AGENT_PERMISSION_MODE");
    expect(errorOf(() => load({ env: { OPENAI_BASE_URL: "ftp://x" } })).message).toContain("OPENAI_BASE_URL");
  });

  test("a bad environment value is not reached when a flag overrides it", () => {
    expect(load({ env: { AGENT_MAX_TURNS: "many" }, flags: { maxTurns: "3" } }).settings.maxTurns).toBe(3);
  });
});

describe("an apiKey in config.json", () => {
  test("warns when the file is readable by group or others, but still loads", () => {
    const ws = workspaceWith({ apiKey: "sk-secret" }, 0o644);
    const { settings, warnings } = load({ workspace: ws });
    expect(settings.apiKey).toBe("sk-secret");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("holds apiKey but is readable by others (mode 0644); run `chmod 600");
    expect(warnings[0]).not.toContain("sk-secret");
  });

  test("no warning for a 0600 file, or a readable file without a key", () => {
    expect(load({ workspace: workspaceWith({ apiKey: "k" }, 0o600) }).warnings).toEqual([]);
    expect(load({ workspace: workspaceWith({ model: "m" }, 0o644) }).warnings).toEqual([]);
  });
});

describe("levels: flags > env > local > project > user > defaults", () => {
  test("each level overrides the one below, key by key, and says where a value came from", () => {
    const { workspace, home, locations } = world({
      user: { model: "user-model", maxTurns: 3, requestTimeoutMs: 1000, baseUrl: "http://user.example/v1" },
      project: { model: "project-model", maxTurns: 4 },
      local: { model: "local-model" },
    });
    const { settings, sources, files } = load({ workspace, home });
    expect(files.map((file) => file.level)).toEqual(["user", "project", "local"]);
    expect(settings).toMatchObject({ model: "local-model", maxTurns: 4, requestTimeoutMs: 1000, baseUrl: "http://user.example/v1" });
    expect(sources.model).toEqual({ level: "local", from: locations.local });
    expect(sources.maxTurns).toEqual({ level: "project", from: locations.project });
    expect(sources.requestTimeoutMs).toEqual({ level: "user", from: locations.user });
    expect(sources.permissionMode).toEqual({ level: "default" });
    expect(sources.apiKey).toBeUndefined();

    const env = { AGENT_MODEL: "env-model", AGENT_MAX_TURNS: "5" };
    const withEnv = load({ workspace, home, env });
    expect(withEnv.settings).toMatchObject({ model: "env-model", maxTurns: 5 });
    expect(withEnv.sources.model).toEqual({ level: "env", from: "AGENT_MODEL" });
    const withFlag = load({ workspace, home, env, flags: { model: "flag-model" } });
    expect(withFlag.settings.model).toBe("flag-model");
    expect(withFlag.sources.model).toEqual({ level: "flag", from: "--model" });
  });

  test("rules, hooks, shell.deny and appendSystemPrompt add up across levels; deny still wins", () => {
    const hook = (command: string) => ({ command });
    const { workspace, home } = world({
      user: { permissions: { allow: ["shell(ls*)"] }, hooks: { Stop: [hook("u")] }, shell: { deny: ["u"] }, appendSystemPrompt: "From the user." },
      project: { permissions: { allow: ["read_file"], deny: ["shell(ls -la*)"] }, hooks: { Stop: [hook("p")], PreToolUse: [hook("pp")] } },
      local: { permissions: { deny: ["write_file(.env)"] }, shell: { deny: ["l"] }, appendSystemPrompt: "From local." },
    });
    const { settings } = load({ workspace, home, flags: { allow: ["shell(npm test)"], deny: ["edit_file"], appendSystemPrompt: "From the flag." } });
    expect(settings.permissions).toEqual({
      allow: ["shell(ls*)", "read_file", "shell(npm test)"],
      deny: ["shell(ls -la*)", "write_file(.env)", "edit_file"],
    });
    expect(settings.hooks).toEqual({ Stop: [hook("u"), hook("p")], PreToolUse: [hook("pp")] });
    expect(settings.shell.deny).toEqual(["u", "l"]);
    expect(settings.appendSystemPrompt).toBe("From the user.\n\nFrom local.\n\nFrom the flag.");
  });

  test("headers merge by case-insensitive name, the higher level winning", () => {
    const { workspace, home, locations } = world({
      user: { headers: { "X-Title": "user", Authorization: "Bearer u" } },
      project: { headers: { "x-title": "project", "HTTP-Referer": "https://example.com" } },
    });
    const { settings, sources } = load({ workspace, home });
    expect(settings.headers).toEqual({ "x-title": "project", Authorization: "Bearer u", "HTTP-Referer": "https://example.com" });
    expect(sources["headers.x-title"]).toEqual({ level: "project", from: locations.project });
    expect(modelClientOptions(settings).headers).toBe(settings.headers);
  });

  test("$XDG_CONFIG_HOME holds the user's file when set (and absolute), else ~/.config", () => {
    expect(configLocations("/ws", { XDG_CONFIG_HOME: "/xdg" }, "/home/u").user).toBe("/xdg/agent/config.json");
    expect(configLocations("/ws", { XDG_CONFIG_HOME: "" }, "/home/u").user).toBe("/home/u/.config/agent/config.json");
    expect(configLocations("/ws", { XDG_CONFIG_HOME: "rel" }, "/home/u").user).toBe("/home/u/.config/agent/config.json");
    expect(configLocations("/ws", {}, "/home/u")).toEqual({
      user: "/home/u/.config/agent/config.json",
      project: "/ws/.agent/config.json",
      local: "/ws/.agent/config.local.json",
    });
    const xdg = tempDir("agent-config-xdg-");
    mkdirSync(join(xdg, "agent"));
    writeFileSync(join(xdg, "agent", "config.json"), JSON.stringify({ model: "xdg-model" }));
    expect(load({ env: { XDG_CONFIG_HOME: xdg } }).settings.model).toBe("xdg-model");
  });

  test("comments and trailing commas are accepted", () => {
    const text = '// the team\'s settings\n{\n  /* cheap for CI */ "model": "m", // trailing\n  "maxTurns": 9,\n}\n';
    expect(load({ workspace: world({ project: text }).workspace }).settings).toMatchObject({ model: "m", maxTurns: 9 });
  });

  test("an apiKey, or a credential header, in the project's file is refused", () => {
    const key = world({ project: { apiKey: "sk-project-secret" } });
    const error = errorOf(() => load(key));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain(`config file ${key.locations.project} holds apiKey`);
    expect(error.message).toContain("keys belong in the environment or your user config");
    expect(error.message).not.toContain("sk-project-secret");
    expect(errorOf(() => load(world({ project: { headers: { "api-key": "x" } } }))).message).toContain('holds the header "api-key"');
    // The same key in the user's or the local file is fine.
    expect(load(world({ user: { apiKey: "k1" } })).settings.apiKey).toBe("k1");
    expect(load(world({ local: { apiKey: "k2", headers: { Authorization: "Bearer x" } } })).settings.apiKey).toBe("k2");
  });

  test("a bad header name or value names the file and the key", () => {
    const bad = world({ user: { headers: { "X Title": "v" } } });
    expect(errorOf(() => load(bad)).message).toContain(`config file ${bad.locations.user}: headers.X Title: must be an HTTP header name`);
    expect(errorOf(() => load(world({ local: { headers: { A: "x\ny" } } }))).message).toContain("headers.A: must be on one line");
  });

  test("an empty --append-system-prompt is a usage error", () => {
    expect(errorOf(() => load({ flags: { appendSystemPrompt: " " } }))).toBeInstanceOf(UsageError);
  });
});
