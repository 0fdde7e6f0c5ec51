import type { ArgsDef } from "citty";

// The names `claude -p` and `codex exec` scripts use, accepted by `agent run`
// beside our own (docs/compat.md). Our names stay the documented ones; these
// are read into the same settings by runtime-args.ts and compat-tools.ts.

export const INPUT_FORMATS = ["text", "stream-json"] as const;
export type InputFormat = (typeof INPUT_FORMATS)[number];

export const compatArgs = {
  print: { type: "boolean", alias: "p", description: "claude -p: accepted and implied (`agent -p PROMPT` is `agent run PROMPT`)" },
  "output-format": {
    type: "enum",
    options: ["text", "json", "stream-json"],
    description: "claude -p's --output: json is the same result object; stream-json prints Claude Code's event shapes (docs/compat.md)",
  },
  "input-format": {
    type: "enum",
    options: [...INPUT_FORMATS],
    description: "stream-json: read user messages as JSON lines from stdin, one Lead turn each, until EOF (docs/compat.md)",
  },
  allowedTools: {
    type: "string",
    alias: "allowed-tools",
    valueHint: "tools",
    description: "claude -p: allow rules, comma- or space-separated, Claude's tool names mapped to ours (Bash(git diff:*) is shell(git diff*)); may be repeated",
  },
  disallowedTools: {
    type: "string",
    alias: "disallowed-tools",
    valueHint: "tools",
    description: "claude -p: deny rules like --deny; a tool named without a pattern is removed from the model's list; may be repeated",
  },
  "system-prompt": { type: "string", valueHint: "text", description: "The Lead's system prompt in place of the built-in one (project instructions still follow it)" },
  "json-schema": {
    type: "string",
    valueHint: "json",
    description: "claude -p: the final answer must be JSON valid against this JSON Schema; one corrective turn, then structured_output in the result",
  },
  "output-schema": { type: "string", valueHint: "file", description: "codex exec: --json-schema read from a file" },
  "session-id": { type: "string", valueHint: "uuid", description: "claude -p: this session when it exists (as --resume), else a new one with this id" },
  "fork-session": { type: "boolean", description: "With -c or --resume: a new session starting from a copy of that one's Lead conversation; the original stays as it was" },
  "full-auto": {
    type: "boolean",
    description: "codex exec: --permission-mode bypassPermissions in the workspace-write sandbox (deny rules still apply)",
  },
  "dangerously-skip-permissions": { type: "boolean", description: "claude -p: --permission-mode bypassPermissions (deny rules still apply)" },
  "dangerously-bypass-approvals-and-sandbox": {
    type: "boolean",
    alias: "yolo",
    description: "codex exec: --permission-mode bypassPermissions --sandbox danger-full-access (deny rules still apply)",
  },
  "skip-git-repo-check": { type: "boolean", description: "codex exec: accepted; agent runs outside a git repository anyway" },
  json: { type: "boolean", description: "codex exec --json: print JSON lines in codex exec's event shapes (thread.started, item.completed, turn.completed)" },
  "add-dir": { type: "string", valueHint: "dir", description: "claude -p: another directory the file tools and the sandboxed shell may use besides the workspace; may be repeated" },
  "permission-prompt-tool": {
    type: "string",
    valueHint: "stdio",
    description: "Claude Agent SDK: stdio asks the SDK (its canUseTool) over stdin/stdout what a person would be asked; needs --input-format stream-json",
  },
  "setting-sources": { type: "string", valueHint: "sources", description: "Claude Agent SDK: accepted; which config files are read is ours (docs/compat.md)" },
  "await-initialize": { type: "boolean", description: "Claude Agent SDK: accepted; the initialize request is always read first" },
  "allow-dangerously-skip-permissions": { type: "boolean", description: "Claude Agent SDK: accepted; --permission-mode bypassPermissions needs no second flag here" },
} as const satisfies ArgsDef;

export interface CompatValues {
  print?: boolean;
  "output-format"?: string;
  "input-format"?: string;
  allowedTools?: string;
  disallowedTools?: string;
  "system-prompt"?: string;
  "json-schema"?: string;
  "output-schema"?: string;
  "session-id"?: string;
  "fork-session"?: boolean;
  json?: boolean;
  "add-dir"?: string;
  "full-auto"?: boolean;
  "dangerously-skip-permissions"?: boolean;
  "dangerously-bypass-approvals-and-sandbox"?: boolean;
  "skip-git-repo-check"?: boolean;
  "permission-prompt-tool"?: string;
  "setting-sources"?: string;
  "await-initialize"?: boolean;
  "allow-dangerously-skip-permissions"?: boolean;
}
