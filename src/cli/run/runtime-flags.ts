import type { ArgsDef } from "citty";
import { LEAD_MODES, PERMISSION_MODES, TEAMMATE_PANES } from "../../config/modes.ts";
import { PROFILE_NAMES } from "../../model/profiles/chat-profile.ts";
import { PROVIDER_NAMES } from "../../model/providers/provider.ts";
import { SANDBOX_MODES } from "../../security/sandbox/modes.ts";
import { OUTPUT_FORMATS } from "./result-json.ts";

/** Every command that reads the project's config takes it (docs/security.md#6-trusting-a-project). */
export const trustProjectArg = {
  "trust-project": {
    type: "boolean",
    description: "Apply the project's own hooks, MCP servers, endpoint, allow rules and modes for this command, as `agent trust` would (default: $AGENT_TRUST_PROJECT)",
  },
} as const satisfies ArgsDef;

// The flags of every command that runs the Lead (`run`, `drain`, the interactive
// session), as definitions only: the root command lists them for the session, and
// parsing a command line must not load what turns them into settings.

/** Where the runtime works and how it reaches the model. */
export const runtimeArgs = {
  workspace: { type: "string", valueHint: "dir", description: "Directory the agent works in (default: the git repository around the current directory, else the current directory)" },
  model: { type: "string", alias: "m", valueHint: "name", description: "Model name (default: $AGENT_MODEL, config, else gpt-4o-mini)" },
  "base-url": { type: "string", valueHint: "url", description: "OpenAI-compatible endpoint (default: $OPENAI_BASE_URL, config, else OpenAI)" },
  provider: {
    type: "enum",
    options: [...PROVIDER_NAMES],
    description: "The endpoint's protocol: Chat Completions, Responses or Anthropic Messages (default: config provider, else from the base URL's host, else openai)",
  },
  profile: {
    type: "enum",
    options: ["auto", ...PROFILE_NAMES],
    description: "The endpoint's Chat Completions dialect (default: config profile, else auto: from the base URL's host; see docs/models.md)",
  },
  "api-version": { type: "string", valueHint: "version", description: "Azure OpenAI's api-version query parameter, e.g. 2024-10-21 (default: config apiVersion, else the base URL's own query)" },
  "max-turns": { type: "string", valueHint: "n", description: "Model calls allowed per Lead or teammate turn (default: 50)" },
  "permission-mode": { type: "enum", options: [...PERMISSION_MODES], description: "What tools may do without asking (default: default)" },
  allow: { type: "string", valueHint: "rule", description: "Allow calls matching a rule, e.g. 'shell(npm test*)'; may be repeated; adds to config" },
  deny: { type: "string", valueHint: "rule", description: "Deny calls matching a rule, e.g. 'write_file(.env)'; may be repeated; wins over allow" },
  "append-system-prompt": { type: "string", valueHint: "text", description: "Add this to every agent's system prompt, after the config's appendSystemPrompt" },
  record: { type: "string", valueHint: "file", description: "Append every model request and response to this JSONL cassette" },
  replay: { type: "string", valueHint: "file", description: "Answer model requests from this cassette, with no network" },
  "mcp-config": { type: "string", valueHint: "file", description: "Load MCP servers from a JSON file ({\"mcpServers\": {...}}); may be repeated; adds to config" },
  "wait-lock": { type: "boolean", description: "Wait for another runtime using the state dir to finish instead of failing" },
  "max-budget-usd": {
    type: "string",
    valueHint: "usd",
    description: "Start no model call once the session has spent this many US dollars (needs a known price: the model catalogue or config pricing; see docs/observability.md)",
  },
  store: {
    type: "string",
    valueHint: "url",
    description: "Where the team's mailboxes live: files (default) or postgres://user@host:5432/db (default: $AGENT_STORE, config store; see docs/store.md)",
  },
  "remote-teammates": {
    type: "boolean",
    description: "Run no teammate in this process: `agent worker` processes run them (default: config remoteTeammates; see docs/worker.md)",
  },
  "lead-mode": {
    type: "enum",
    options: [...LEAD_MODES],
    description: "delegate: the Lead only coordinates (spawn, send, tasks, plan review, shutdown), with no file, shell or MCP tools (default: config lead.mode, else default; see docs/team.md)",
  },
  "teammate-panes": {
    type: "enum",
    options: [...TEAMMATE_PANES],
    description: "tmux: inside tmux, give each spawned teammate a pane following it (default: config terminal.teammatePanes, else off; see docs/terminal.md)",
  },
  sandbox: {
    type: "enum",
    options: [...SANDBOX_MODES],
    description: "OS sandbox for shell commands (default: workspace-write where available; see docs/security.md)",
  },
  ...trustProjectArg,
} as const satisfies ArgsDef;

/** How `agent run` and the interactive session choose their session: a new one unless told otherwise. */
export const sessionArgs = {
  continue: { type: "boolean", alias: "c", description: "Continue the most recently used session of the workspace" },
  resume: { type: "string", alias: "r", valueHint: "id", description: "Continue this session (short id, id, unique id prefix or name)" },
  session: { type: "string", valueHint: "name", description: "Continue the session of this name, or start it (e.g. ci-42)" },
} as const satisfies ArgsDef;

/** What a headless command prints and how long it may take. */
export const headlessArgs = {
  output: { type: "enum", options: [...OUTPUT_FORMATS], default: "text", description: "What stdout carries" },
  timeout: { type: "string", valueHint: "duration", description: "Stop the whole command after this long, e.g. 90s, 10m, or 60 (seconds)" },
  quiet: { type: "boolean", description: "Print nothing on stderr but errors" },
  "include-partial-messages": {
    type: "boolean",
    description: "With --output stream-json: also print each piece of an answer as it streams in (assistant_delta lines)",
  },
  "output-last-message": { type: "string", alias: "o", valueHint: "file", description: "Also write the final answer to this file (when the run succeeds)" },
} as const satisfies ArgsDef;

/** `--verbose` of a headless command, which also means more progress. */
export const verboseArg = {
  verbose: { type: "boolean", description: "Show every tool result, model turn, mailbox move and retry; stack traces with errors" },
} as const satisfies ArgsDef;
