// What `agent init` writes. The config is a starting point that is valid as it
// stands: every key in it is optional, and docs/configuration.md lists the rest.

export const CONFIG_TEMPLATE = `${JSON.stringify(
  {
    model: "gpt-4o-mini",
    permissionMode: "default",
    permissions: {
      allow: ["read_file", "glob"],
      deny: ["read_file(.env)", "read_file(.env.*)", "write_file(.env)", "write_file(.env.*)", "edit_file(.env)", "edit_file(.env.*)"],
    },
  },
  null,
  2,
)}\n`;

export const GITIGNORE_TEMPLATE = `# Written by \`agent init\`. The run-time state (sessions, histories, mailboxes,
# locks) and your personal settings stay out of git; config.json, skills/ and
# agents/ are the project's and are meant to be committed.
state/
config.local.json
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
