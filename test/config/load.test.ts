import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULTS, type LoadSettingsInput, loadSettings, modelClientOptions } from "../../src/config/load.ts";
import { ConfigError, UsageError } from "../../src/core/errors.ts";
import { tempDir } from "../support/temp-dir.ts";

function stateDirWith(config?: unknown, mode = 0o600): string {
  const stateDir = tempDir("agent-config-");
  if (config !== undefined) {
    const path = join(stateDir, "config.json");
    writeFileSync(path, typeof config === "string" ? config : JSON.stringify(config), { mode });
    chmodSync(path, mode);
  }
  return stateDir;
}

function load(input: Partial<LoadSettingsInput> & { stateDir?: string }) {
  return loadSettings({ env: {}, cwd: "/cwd", ...input, stateDir: input.stateDir ?? stateDirWith() });
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
    const { settings, configPath, warnings } = load({});
    expect(configPath).toBeNull();
    expect(warnings).toEqual([]);
    expect(settings).toMatchObject({ ...DEFAULTS, permissions: { allow: [], deny: [] }, hooks: {} });
    expect(settings.baseUrl).toBeUndefined();
    expect(settings.apiKey).toBeUndefined();
  });

  test("each layer overrides the one below, key by key", () => {
    const stateDir = stateDirWith({
      model: "file-model",
      baseUrl: "http://file.example/v1",
      apiKey: "file-key",
      maxTurns: 7,
      permissionMode: "plan",
      requestTimeoutMs: 5000,
    });
    const fileOnly = load({ stateDir }).settings;
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
    expect(load({ stateDir, env }).settings).toMatchObject({
      model: "env-model",
      baseUrl: "http://env.example/v1",
      apiKey: "env-key",
      maxTurns: 8,
      permissionMode: "acceptEdits",
      requestTimeoutMs: 5000,
    });

    const flags = { model: "flag-model", baseUrl: "https://flag.example/v1", maxTurns: "9", permissionMode: "bypassPermissions" };
    expect(load({ stateDir, env, flags }).settings).toMatchObject({
      model: "flag-model",
      baseUrl: "https://flag.example/v1",
      apiKey: "env-key",
      maxTurns: 9,
      permissionMode: "bypassPermissions",
    });
  });

  test("an empty environment variable counts as unset", () => {
    const stateDir = stateDirWith({ model: "file-model", baseUrl: "http://file.example/v1" });
    const env = { AGENT_MODEL: "", OPENAI_BASE_URL: "", OPENAI_API_KEY: "" };
    expect(load({ stateDir, env }).settings).toMatchObject({ model: "file-model", baseUrl: "http://file.example/v1" });
    expect(load({ stateDir, env }).settings.apiKey).toBeUndefined();
  });

  test("file-only keys come through: rules, hooks, shell, compaction", () => {
    const config = {
      permissions: { allow: ["read_file", "shell(git status*)"], deny: ["write_file(secrets/**)"] },
      hooks: { PreToolUse: [{ matcher: "shell", command: "./check.sh", timeoutMs: 2000 }] },
      shell: { timeoutMs: 1000, deny: ["mkfs"] },
      compaction: { thresholdChars: 10000 },
    };
    const { settings } = load({ stateDir: stateDirWith(config) });
    expect(settings.permissions).toEqual(config.permissions);
    expect(settings.hooks).toEqual(config.hooks);
    expect(settings.shell).toEqual(config.shell);
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
      apiKey: "k",
      timeoutMs: DEFAULTS.requestTimeoutMs,
      recordPath: undefined,
      replayPath: "/cwd/c.jsonl",
    });
  });
});

describe("config.json errors name the file, the key and the fix", () => {
  test("an unknown key, listing the known ones", () => {
    const stateDir = stateDirWith({ modle: "x" });
    const error = errorOf(() => load({ stateDir }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toStartWith(`config file ${join(stateDir, "config.json")}: unknown key "modle" (known keys: model, baseUrl,`);
    expect(error.message).toContain("fix it or remove it");
    expect(error.message).not.toContain("\n");
  });

  test("an unknown nested key names where it is", () => {
    const error = errorOf(() => load({ stateDir: stateDirWith({ hooks: { PreToolUse: [{ command: "x", match: "y" }] } }) }));
    expect(error.message).toContain('unknown key "match" in hooks.PreToolUse[0]');
    const event = errorOf(() => load({ stateDir: stateDirWith({ hooks: { PreTool: [] } }) }));
    expect(event.message).toContain('unknown key "PreTool" in hooks');
  });

  test("bad JSON", () => {
    const stateDir = stateDirWith('{ "model": "x", }');
    const error = errorOf(() => load({ stateDir }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toMatch(/^config file .*config\.json is not valid JSON \(.+\); fix the syntax or remove the file$/);
  });

  test("a bad enum value lists the allowed ones", () => {
    const error = errorOf(() => load({ stateDir: stateDirWith({ permissionMode: "yolo" }) }));
    expect(error.message).toContain('permissionMode must be one of "default", "acceptEdits", "plan", "bypassPermissions"');
  });

  test("a wrong type, a bad URL, not an object; several problems are counted", () => {
    expect(errorOf(() => load({ stateDir: stateDirWith({ maxTurns: "3" }) })).message).toContain(
      "maxTurns: invalid input: expected number, received string",
    );
    expect(errorOf(() => load({ stateDir: stateDirWith({ baseUrl: "nope" }) })).message).toContain("baseUrl: invalid URL");
    expect(errorOf(() => load({ stateDir: stateDirWith([]) })).message).toContain("the top level: invalid input: expected object");
    expect(errorOf(() => load({ stateDir: stateDirWith({ maxTurns: 0, model: "" }) })).message).toContain("(and 1 more problem)");
  });

  test("a config.json that is a directory", () => {
    const stateDir = tempDir("agent-config-");
    mkdirSync(join(stateDir, "config.json"));
    expect(errorOf(() => load({ stateDir })).message).toContain("cannot read config file");
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
    const stateDir = stateDirWith({ apiKey: "sk-secret" }, 0o644);
    const { settings, warnings } = load({ stateDir });
    expect(settings.apiKey).toBe("sk-secret");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("holds apiKey but is readable by others (mode 0644); run `chmod 600");
    expect(warnings[0]).not.toContain("sk-secret");
  });

  test("no warning for a 0600 file, or a readable file without a key", () => {
    expect(load({ stateDir: stateDirWith({ apiKey: "k" }, 0o600) }).warnings).toEqual([]);
    expect(load({ stateDir: stateDirWith({ model: "m" }, 0o644) }).warnings).toEqual([]);
  });
});
