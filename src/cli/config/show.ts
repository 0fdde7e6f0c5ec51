import { defineCommand } from "citty";
import type { ConfigFile } from "../../config/config.ts";
import type { LoadedSettings, SettingSource, Settings } from "../../config/load.ts";
import { loadWorkspaceSettings } from "../../trust/project-trust.ts";
import { CONFIG_LEVELS } from "../../config/locations.ts";
import { REDACTED, redactHeaders } from "../../config/redact.ts";
import { displayStoreUrl } from "../../store/store-url.ts";
import { globalArgs, jsonArg } from "../args.ts";
import { formatTable, writeErr, writeJson, writeOut } from "../output.ts";
import { type RuntimeValues, runtimeArgs, settingsFlags, trustProjectArg } from "../run/runtime-args.ts";
import { resolveWorkspace } from "../run/workspace.ts";

// The settings flags of `agent run`, so `agent config show --model x` answers
// "what would `agent run --model x` use, and why".
const { model, "base-url": baseUrl, "max-turns": maxTurns, "permission-mode": permissionMode, allow, deny } = runtimeArgs;
const appendSystemPrompt = runtimeArgs["append-system-prompt"];

export const configShowCommand = defineCommand({
  meta: {
    name: "show",
    description: "The effective settings and the level each comes from (flag, env, local, project, user, default); keys redacted",
  },
  args: {
    model,
    "base-url": baseUrl,
    "max-turns": maxTurns,
    "permission-mode": permissionMode,
    allow,
    deny,
    "append-system-prompt": appendSystemPrompt,
    ...trustProjectArg,
    ...jsonArg,
    ...globalArgs,
  },
  async run({ args, rawArgs }) {
    const values = args as RuntimeValues & { json?: boolean };
    const ws = resolveWorkspace(values.workspace);
    const flags = settingsFlags(values, rawArgs);
    const loaded = loadWorkspaceSettings({ workspace: ws, flags, trustProject: values["trust-project"] === true });
    const report = configReport(ws, loaded, flags);
    if (values.json) {
      await writeJson({ ...report, ignored: loaded.ignoredItems.map(({ source, key }) => ({ source, key })) });
      return;
    }
    await writeOut(formatReport(report));
    // What an untrusted project set and does not get, as `agent run` would say it.
    for (const warning of loaded.warnings) await writeErr(`agent: warning: ${warning}\n`);
  },
});

/** One setting: its value and where it came from, or, for lists that add up, each level's part. */
export type ShownSetting =
  | { value: unknown; level: SettingSource["level"]; from?: string }
  | { value: unknown; levels: { level: SettingSource["level"]; from?: string; value: unknown }[] };

export interface ConfigReport {
  workspace: string;
  /** Every level's file, read or not, with what it sets (keys redacted). */
  files: { level: string; path: string; exists: boolean; settings?: ConfigFile }[];
  settings: Record<string, ShownSetting>;
}

/** The report `config show` prints; no secret survives into it. */
export function configReport(workspace: string, loaded: LoadedSettings, flags: ReturnType<typeof settingsFlags>): ConfigReport {
  const { settings, sources, files, locations } = loaded;
  const single = (key: string, value: unknown): ShownSetting | undefined => {
    const source = sources[key];
    return source === undefined ? undefined : { value, ...source };
  };
  /** A list that adds up: each file's part, then the flag's. */
  const combined = (value: unknown, fromFile: (config: ConfigFile) => unknown, flag?: { name: string; value: unknown }): ShownSetting => ({
    value,
    levels: [
      ...files.flatMap((file) => {
        const part = fromFile(file.config);
        return part === undefined ? [] : [{ level: file.level, from: file.path, value: part }];
      }),
      ...(flag?.value === undefined ? [] : [{ level: "flag" as const, from: flag.name, value: flag.value }]),
    ],
  });
  const shown: Record<string, ShownSetting | undefined> = {
    model: single("model", settings.model),
    baseUrl: single("baseUrl", settings.baseUrl),
    apiKey: single("apiKey", REDACTED),
    ...Object.fromEntries(Object.entries(redactHeaders(settings.headers)).map(([name, value]) => [`headers.${name}`, single(`headers.${name}`, value)])),
    requestTimeoutMs: single("requestTimeoutMs", settings.requestTimeoutMs),
    maxTurns: single("maxTurns", settings.maxTurns),
    permissionMode: single("permissionMode", settings.permissionMode),
    store: single("store", displayStoreUrl(settings.store)),
    "permissions.allow": combined(settings.permissions.allow, (c) => c.permissions?.allow, { name: "--allow", value: flags.allow }),
    "permissions.deny": combined(settings.permissions.deny, (c) => c.permissions?.deny, { name: "--deny", value: flags.deny }),
    hooks: combined(settings.hooks, (c) => c.hooks),
    "shell.timeoutMs": single("shell.timeoutMs", settings.shell.timeoutMs),
    "shell.deny": combined(settings.shell.deny, (c) => c.shell?.deny),
    "compaction.thresholdChars": single("compaction.thresholdChars", settings.compaction.thresholdChars),
    "compaction.largeToolResultChars": single("compaction.largeToolResultChars", settings.compaction.largeToolResultChars),
    appendSystemPrompt: combined(settings.appendSystemPrompt satisfies Settings["appendSystemPrompt"], (c) => c.appendSystemPrompt, {
      name: "--append-system-prompt",
      value: flags.appendSystemPrompt,
    }),
  };
  // MCP servers replace each other by name across levels: each level's names, and
  // the names in effect (their definitions may hold tokens: not shown).
  shown.mcpServers = combined(Object.keys(settings.mcp.servers), (c) => (c.mcpServers === undefined ? undefined : Object.keys(c.mcpServers)));
  // Any other single-valued setting loadSettings recorded a source for (sandbox.mode,
  // mailbox.maxContentBytes, …): its value is found by its dotted path.
  for (const key of Object.keys(sources)) {
    if (key in shown || key.startsWith("headers.")) continue;
    shown[key] = single(key, valueAt(settings, key));
  }
  return {
    workspace,
    files: CONFIG_LEVELS.map((level) => {
      const file = files.find((f) => f.level === level);
      return { level, path: locations[level], exists: file !== undefined, ...(file ? { settings: redactFile(file.config) } : {}) };
    }),
    settings: Object.fromEntries(Object.entries(shown).filter((entry): entry is [string, ShownSetting] => entry[1] !== undefined)),
  };
}

function valueAt(settings: Settings, path: string): unknown {
  let value: unknown = settings;
  for (const part of path.split(".")) value = typeof value === "object" && value !== null ? (value as Record<string, unknown>)[part] : undefined;
  return value;
}

function redactFile(config: ConfigFile): ConfigFile {
  return {
    ...config,
    ...(config.apiKey !== undefined ? { apiKey: REDACTED } : {}),
    ...(config.headers !== undefined ? { headers: redactHeaders(config.headers) } : {}),
    ...(config.store !== undefined ? { store: displayStoreUrl(config.store) } : {}),
    // Server definitions carry commands' env and headers, often tokens: names only.
    ...(config.mcpServers !== undefined ? { mcpServers: Object.fromEntries(Object.keys(config.mcpServers).map((name) => [name, REDACTED])) } : {}),
  } as ConfigFile;
}

function formatReport(report: ConfigReport): string {
  const rows = Object.entries(report.settings).map(([key, setting]) => {
    const from =
      "levels" in setting
        ? setting.levels.map((part) => (part.level === "flag" ? part.from : part.level)).join(" + ") || "none"
        : setting.level === "flag" || setting.level === "env" ? `${setting.level} ${setting.from}` : setting.level;
    return [key, setting.value === undefined ? "(not set)" : JSON.stringify(setting.value), from];
  });
  const files = report.files.map((file) => [file.level, file.path, file.exists ? "" : "(none)"]);
  const table = (cells: string[][]) => formatTable(cells).replace(/ +$/gm, "");
  return `${table([["SETTING", "VALUE", "FROM"], ...rows])}\nconfig files (lowest precedence first):\n${table(files).replace(/^(?=.)/gm, "  ")}`;
}
