// What `agent init` writes. The config is a starting point that is valid as it
// stands, with the keys most projects set next commented out.

export const CONFIG_TEMPLATE = `// The project's settings for agent, committed with it: JSON with comments.
// Every key is optional and docs/configuration.md lists them all. Precedence: flags >
// environment > .agent/config.local.json (yours, not committed) > this file >
// ~/.config/agent/config.json > defaults. Never put an API key here: use OPENAI_API_KEY.
{
  // "model": "gpt-4o-mini",
  // "baseUrl": "https://api.openai.com/v1",
  "permissionMode": "default",
  "permissions": {
    // A tool name, or a tool and a pattern: "shell(npm test*)", "write_file(src/**)".
    "allow": [],
    // Deny rules win over every allow rule and every mode.
    "deny": ["read_file(.env)", "read_file(.env.*)", "write_file(.env)", "write_file(.env.*)", "edit_file(.env)", "edit_file(.env.*)"]
  }
  // "hooks": { "PostToolUse": [{ "matcher": "write_file|edit_file", "command": "npm run lint --silent >&2" }] },
  // "shell": { "timeoutMs": 120000, "deny": [] },
  // "maxTurns": 50
}
`;

export const AGENTS_TEMPLATE = `# AGENTS.md

Instructions for the coding agents working in this repository: \`agent\` puts this
file in the system prompt of the Lead and of every teammate. Keep it short and true.

## Project

<!-- What this project is, in two or three sentences. -->

## Build and test

<!-- The exact commands, e.g.: -->
<!-- - install: \`npm ci\` -->
<!-- - test: \`npm test\` -->

## Conventions

<!-- Code style, naming, where things go, what not to touch. -->
`;
