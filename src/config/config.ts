import { z } from "zod";
import { McpServers, McpSettingsConfig } from "../mcp/config.ts";
import { PROFILE_NAMES } from "../model/profiles/chat-profile.ts";
import { PROVIDER_NAMES } from "../model/providers/provider.ts";
import { LEAD_MODES, PERMISSION_MODES, TASK_TOOLS_CHOICES, TEAMMATE_PANES, type TeammatePanes } from "./modes.ts";
import { Pricing } from "../usage/pricing.ts";
import { Isolation } from "../worktrees/teammate-worktree.ts";
import { STATE_ROOT_CHOICES } from "./locations.ts";
import { EnvPolicyConfig } from "../security/env-policy.ts";
import { lazySchema } from "../core/lazy-schema.ts";

/** An `api-version` as Azure OpenAI names them: a date, a word (`preview`, `latest`), with a suffix. */
export const API_VERSION = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export { PERMISSION_MODES, TEAMMATE_PANES, type TeammatePanes };
export const PermissionMode = lazySchema(() => z.enum(PERMISSION_MODES));
export type PermissionMode = z.infer<typeof PermissionMode>;

/** Claude Code's events (docs/hooks.md); the team's last three can refuse (exit 2): going idle, a task's creation, its completion. */
export const HOOK_EVENTS = [
  "PreToolUse",
  "PostToolUse",
  "UserPromptSubmit",
  "Stop",
  "SubagentStop",
  "SessionStart",
  "SessionEnd",
  "PreCompact",
  "Notification",
  "TeammateIdle",
  "TaskCreated",
  "TaskCompleted",
] as const;
export const HookEvent = lazySchema(() => z.enum(HOOK_EVENTS));
export type HookEvent = z.infer<typeof HookEvent>;

export const HookConfig = lazySchema(() =>
  z.strictObject({
    /** Tool names this hook applies to, as a regular expression (`shell|write_file`); all tools when absent. Tool events only. */
    matcher: z.string().optional(),
    /** Run with `sh -c` in the workspace; the event is JSON on stdin. */
    command: z.string().min(1),
    timeoutMs: z.number().int().positive().optional(),
    /**
     * `false` runs this hook outside the sandbox (for a hook that must write
     * outside the workspace). Honoured in the user's own config only: elsewhere it
     * is ignored with a warning, since the hook would run what the model edited.
     */
    sandbox: z.boolean().optional(),
  }),
);
export type HookConfig = z.infer<typeof HookConfig>;

/**
 * Claude Code's settings.json shape, accepted as it is so their hook settings
 * can be pasted: a matcher and its commands, `timeout` in seconds. Read as our
 * flat entries, one per command.
 */
const ClaudeHookGroup = lazySchema(() =>
  z.strictObject({
    matcher: z.string().optional(),
    hooks: z
      .array(z.strictObject({ type: z.literal("command"), command: z.string().min(1), timeout: z.number().positive().optional() }))
      .min(1),
  }),
);

const HookEntries = lazySchema(() =>
  z.array(z.union([HookConfig, ClaudeHookGroup])).transform((entries): HookConfig[] =>
    entries.flatMap((entry) =>
      "hooks" in entry
        ? entry.hooks.map((hook) => ({
            ...(entry.matcher !== undefined ? { matcher: entry.matcher } : {}),
            command: hook.command,
            ...(hook.timeout !== undefined ? { timeoutMs: Math.round(hook.timeout * 1000) } : {}),
          }))
        : [entry],
    ),
  ),
);

/** An HTTP header name as RFC 9110 defines a token; the value on one line. */
const HeaderName = lazySchema(() => z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "must be an HTTP header name such as X-Title"));
const HeaderValue = lazySchema(() => z.string().regex(/^[^\r\n]*$/, "must be on one line"));

/**
 * The shape of every config file (user, project, local; see locations.ts). Every
 * key optional, unknown keys are errors. Precedence: flags > environment > local
 * > project > user > defaults; rules, hooks and shell.deny add up across files.
 */
export const ConfigFile = lazySchema(() =>
  z.strictObject({
    model: z.string().min(1).optional(),
    baseUrl: z.url().optional(),
    /** Prefer OPENAI_API_KEY in the environment; a key here must stay in a 0600 file, and never in the project's. */
    apiKey: z.string().min(1).optional(),
    /** The wire protocol (docs/models.md#providers-and-profiles): `openai` (Chat Completions), `openai-responses` or `anthropic`; from baseUrl's host when absent. */
    provider: z.enum(PROVIDER_NAMES).optional(),
    /** The Chat Completions dialect of baseUrl (docs/models.md#providers-and-profiles); `auto` (the default) detects it from the host. */
    profile: z.enum(["auto", ...PROFILE_NAMES]).optional(),
    /** Azure OpenAI's `api-version` query parameter for every request (`2024-10-21`, `2025-04-01-preview`). */
    apiVersion: z.string().regex(API_VERSION).optional(),
    /** Extra HTTP headers sent with every model request (OpenRouter's X-Title, a gateway's routing header). */
    headers: z.record(HeaderName, HeaderValue).optional(),
    /** Text added to every agent's system prompt, after the project instructions. */
    appendSystemPrompt: z.string().min(1).optional(),
    requestTimeoutMs: z.number().int().positive().optional(),
    maxTurns: z.number().int().positive().optional(),
    permissionMode: PermissionMode.optional(),
    permissions: z
      .strictObject({
        /** Rules like `read_file`, `shell(git status*)`, `write_file(src/**)`. */
        allow: z.array(z.string().min(1)).optional(),
        deny: z.array(z.string().min(1)).optional(),
      })
      .optional(),
    // The enum itself, not its stand-in: a record knows its keys from the enum's values (an unknown event is an unknown key).
    hooks: z.partialRecord(HookEvent.unwrap(), HookEntries).optional(),
    shell: z
      .strictObject({
        timeoutMs: z.number().int().positive().optional(),
        /** Extra patterns refused as destructive, on top of the built-in list. */
        deny: z.array(z.string().min(1)).optional(),
        /** The environment of commands, hooks and stdio MCP servers (docs/security.md#environment-of-commands). */
        env: EnvPolicyConfig.optional(),
      })
      .optional(),
    /** The OS sandbox `shell` runs in (see docs/security.md). */
    sandbox: z
      .strictObject({
        mode: z.enum(["read-only", "workspace-write", "danger-full-access"]).optional(),
        /** Let sandboxed commands use the network (off by default). */
        network: z.boolean().optional(),
        /** Unix sockets sandboxed commands may connect to (absolute paths; honoured in the user's config only). */
        unixSockets: z.array(z.string().min(1)).optional(),
        /** More paths sandboxed commands cannot read, besides the session key, state and credentials files (absolute or `~/…`). */
        hiddenPaths: z.array(z.string().min(1)).optional(),
      })
      .optional(),
    compaction: z
      .strictObject({
        /** Compact once the history passes this many characters. */
        thresholdChars: z.number().int().positive().optional(),
        /** Tool results longer than this are written to a file and replaced by a pointer. */
        largeToolResultChars: z.number().int().positive().optional(),
      })
      .optional(),
    files: z
      .strictObject({
        /** Contents larger than this are journaled by hash only, not kept (default 1 MiB). */
        journalMaxBytes: z.number().int().nonnegative().optional(),
        /** A workspace with more files is not scanned around shell commands (default 20 000). */
        shellScanMaxFiles: z.number().int().nonnegative().optional(),
      })
      .optional(),
    mailbox: z
      .strictObject({
        /** The cap on one message's content, in UTF-8 bytes (default 1 MiB). */
        maxContentBytes: z.number().int().positive().optional(),
      })
      .optional(),
    team: z
      .strictObject({
        /** How spawned teammates work by default: "worktree" gives each its own git worktree and branch (docs/team-worktrees.md). */
        isolation: Isolation.optional(),
        /** Spawned teammates claim unblocked tasks of the task graph when idle (docs/team.md#self-claiming-teammates). */
        autoClaim: z.boolean().optional(),
        /** A teammate's turn takes the Lead's and the operator's messages between its steps (default true; docs/team.md#messages-mid-turn). */
        midTurnDelivery: z.boolean().optional(),
        /** "all": every teammate gets the task-graph tools (create, list, claim, complete); default only self-claiming ones (docs/team.md#the-task-graph-for-every-teammate). */
        taskTools: z.enum(TASK_TOOLS_CHOICES).optional(),
      })
      .optional(),
    lead: z
      .strictObject({
        /** "delegate": the Lead only coordinates — no file, shell or MCP tools of its own (docs/team.md#a-lead-that-only-coordinates). */
        mode: z.enum(LEAD_MODES).optional(),
      })
      .optional(),
    /** MCP servers by name (docs/mcp.md); `--mcp-config` files add to them. */
    mcpServers: McpServers.optional(),
    mcp: McpSettingsConfig.optional(),
    /** US dollars per million tokens by model name (docs/observability.md): gives results a cost. */
    pricing: Pricing.optional(),
    /** No new model call starts once the session has spent this much (needs a price for the model). */
    maxBudgetUsd: z.number().positive().optional(),
    /** Where the team's shared state lives: "files" (default) or postgres://user@host:5432/db (docs/store.md). */
    store: z.string().min(1).optional(),
    /** The Lead's runtime runs no teammate: `agent worker` processes run them all (docs/worker.md). */
    remoteTeammates: z.boolean().optional(),
    terminal: z
      .strictObject({
        /** "tmux": inside tmux, each spawned teammate gets a pane following it (docs/terminal.md#panes-in-tmux); "off" (default): none. */
        teammatePanes: z.enum(TEAMMATE_PANES).optional(),
      })
      .optional(),
    /** "user": the state under $XDG_STATE_HOME/agent/projects/ instead of the workspace's .agent/state (user level only; docs/layout.md). */
    stateRoot: z.enum(STATE_ROOT_CHOICES).optional(),
  }),
);
export type ConfigFile = z.infer<typeof ConfigFile>;
