import type { PermissionMode } from "../../src/config/config.ts";

/**
 * Command lines and tool calls × rules × mode, with the decision expected:
 * `allow` (runs without asking), `ask` (a person is asked; headless, that is a
 * denial), `deny` (refused without asking). Every bypass issue 23 lists is a
 * row, with more of the same class. The workspace has `dir/` and `sub/` in it.
 */
export type RuleCall =
  | string
  | { tool: "write_file" | "edit_file" | "read_file"; path: string }
  | { mcp: string; readOnly?: boolean; args: Record<string, unknown> };

export interface RuleCase {
  call: RuleCall;
  mode: PermissionMode;
  allow?: string[];
  deny?: string[];
  expect: "allow" | "ask" | "deny";
}

const GIT_STATUS = ["shell(git status*)"];
const NPM_TEST = ["shell(npm test*)"];
const NO_ENV = ["write_file(.env)"];
const NO_RM = ["shell(rm*)"];

export const RULE_TABLE: RuleCase[] = [
  // Leading assignments are part of the command: only the safe list may be left out of an allow rule.
  { call: "git status", mode: "default", allow: GIT_STATUS, expect: "allow" },
  { call: "LANG=C git status", mode: "default", allow: GIT_STATUS, expect: "allow" },
  { call: "LC_ALL=C TZ=UTC NO_COLOR=1 CI=1 git status --short", mode: "default", allow: GIT_STATUS, expect: "allow" },
  { call: 'GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0="touch X" git status', mode: "default", allow: GIT_STATUS, expect: "ask" },
  { call: "GIT_DIR=/tmp/evil/.git git status", mode: "default", allow: GIT_STATUS, expect: "ask" },
  { call: "PATH=./evil:$PATH git status", mode: "default", allow: GIT_STATUS, expect: "ask" },
  { call: "LD_PRELOAD=./evil.so git status", mode: "acceptEdits", allow: GIT_STATUS, expect: "ask" },
  { call: "LANG=C GIT_PAGER='touch X' git status", mode: "default", allow: GIT_STATUS, expect: "ask" },
  { call: "env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=x git status", mode: "default", allow: GIT_STATUS, expect: "ask" },
  { call: "env -i LANG=C git status", mode: "default", allow: GIT_STATUS, expect: "allow" },
  { call: "GIT_SSH_COMMAND=x sh -c 'git status'", mode: "default", allow: GIT_STATUS, expect: "ask" },
  { call: "export GIT_DIR=/tmp/evil; git status", mode: "default", allow: GIT_STATUS, expect: "ask" },
  { call: "GIT_PAGER=cat git status", mode: "default", allow: ["shell(GIT_PAGER=cat git status*)"], expect: "allow" },
  { call: "GIT_PAGER=cat git status", mode: "default", allow: ["shell(*git status*)"], expect: "ask" },
  { call: "npm test", mode: "default", allow: NPM_TEST, expect: "allow" },
  { call: "PATH=./evil:$PATH npm test", mode: "default", allow: NPM_TEST, expect: "ask" },
  { call: "NODE_OPTIONS=--require=./evil.js npm test", mode: "default", allow: NPM_TEST, expect: "ask" },
  { call: "npm_config_script_shell=./evil.sh npm test", mode: "default", allow: NPM_TEST, expect: "ask" },
  // Options that name a program must be named too.
  { call: "npm test --script-shell=./evil.sh", mode: "default", allow: NPM_TEST, expect: "ask" },
  { call: "npm test --script-shell ./evil.sh", mode: "default", allow: NPM_TEST, expect: "ask" },
  { call: "npm test --prefix ../other", mode: "default", allow: NPM_TEST, expect: "ask" },
  { call: "npm test --userconfig ./evil.npmrc", mode: "default", allow: NPM_TEST, expect: "ask" },
  { call: "npm test -- --coverage", mode: "default", allow: NPM_TEST, expect: "allow" },
  { call: "sudo npm test", mode: "default", allow: NPM_TEST, expect: "ask" },
  { call: "xargs npm test < files.txt", mode: "default", allow: NPM_TEST, expect: "ask" },
  { call: "git -c core.fsmonitor='touch X' status", mode: "default", allow: ["shell(git*)"], expect: "ask" },
  { call: "git -C ../other status", mode: "default", allow: ["shell(git*)"], expect: "ask" },
  { call: "git fetch --upload-pack='touch X' origin", mode: "default", allow: ["shell(git fetch*)"], expect: "ask" },
  { call: "git rebase -x 'touch X' main", mode: "default", allow: ["shell(git rebase*)"], expect: "ask" },
  { call: "git log --oneline", mode: "default", allow: ["shell(git*)"], expect: "allow" },
  { call: "git -c color.ui=never log", mode: "default", allow: ["shell(git -c color.ui=never log*)"], expect: "allow" },
  { call: "find . -name '*.tmp' -exec rm {} +", mode: "acceptEdits", allow: ["shell(find*)", "shell(rm*)"], expect: "ask" },
  { call: "find . -name '*.ts'", mode: "default", allow: ["shell(find*)"], expect: "allow" },
  { call: "tar -xf a.tar --to-command='sh -c x'", mode: "acceptEdits", allow: ["shell(tar*)"], expect: "ask" },
  { call: "rsync -e 'sh -c x' a b", mode: "acceptEdits", allow: ["shell(rsync*)"], expect: "ask" },
  { call: "node --require ./evil.js test.js", mode: "default", allow: ["shell(node test.js*)", "shell(node*)"], expect: "ask" },
  { call: "./evil/git status", mode: "default", allow: GIT_STATUS, expect: "ask" },
  { call: "/usr/bin/git status", mode: "default", allow: GIT_STATUS, expect: "ask" },
  { call: "./gradlew build", mode: "default", allow: ["shell(./gradlew build*)"], expect: "allow" },
  { call: "/usr/bin/git push --force", mode: "bypassPermissions", deny: ["shell(git push*)"], expect: "deny" },
  { call: "git {-c,core.fsmonitor=x} status", mode: "default", allow: ["shell(git*)"], expect: "ask" },
  { call: "git $'-c' core.fsmonitor=x status", mode: "default", allow: ["shell(git*)"], expect: "ask" },
  { call: "git log $REF", mode: "default", allow: ["shell(git log*)"], expect: "ask" },
  { call: "npm test --script_shell=./evil.sh", mode: "default", allow: NPM_TEST, expect: "ask" },
  { call: "GIT_SSH_COMMAND=x git push", mode: "bypassPermissions", deny: ["shell(git push*)"], expect: "deny" },
  { call: "git --no-pager push origin main", mode: "bypassPermissions", deny: ["shell(git push*)"], expect: "deny" },
  { call: "git -C . --bare push", mode: "bypassPermissions", deny: ["shell(git push*)"], expect: "deny" },
  { call: "npm -w pkg publish", mode: "bypassPermissions", deny: ["shell(npm publish*)"], expect: "deny" },

  // Path rules name the edit family: write_file, edit_file, edit, and every shell write.
  { call: { tool: "edit_file", path: ".env" }, mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: { tool: "write_file", path: ".env" }, mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: { tool: "edit_file", path: "./sub/../.env" }, mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: { tool: "write_file", path: ".env" }, mode: "bypassPermissions", deny: ["edit_file(.env)"], expect: "deny" },
  { call: { tool: "edit_file", path: ".env" }, mode: "bypassPermissions", deny: ["edit(.env)"], expect: "deny" },
  { call: { tool: "read_file", path: ".env" }, mode: "bypassPermissions", deny: NO_ENV, expect: "allow" },
  { call: { tool: "edit_file", path: "src/a.ts" }, mode: "default", allow: ["write_file(src/**)"], expect: "allow" },
  { call: { tool: "write_file", path: "src/a.ts" }, mode: "default", allow: ["edit(src/**)"], expect: "allow" },
  { call: { tool: "write_file", path: "lib/a.ts" }, mode: "default", allow: ["edit(src/**)"], expect: "ask" },
  { call: "echo KEY=x > .env", mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: "echo KEY=x | tee -a .env", mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: "cp evil.txt .env", mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: "cp dir/.env .", mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: "cp -t . dir/.env", mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: "mv evil.txt .env", mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: "mv .env gone.txt", mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: "sed -i 's/a/b/' .env", mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: "rm -f .env", mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: "ln -sf /tmp/x .env", mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: "dd if=x of=.env", mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: "curl -o .env http://example.com/x", mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: "curl -sSLo .env http://example.com/x", mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: "wget -qO .env http://example.com/x", mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: "wget -qO- http://example.com/x | head", mode: "bypassPermissions", deny: NO_ENV, expect: "allow" },
  { call: "gzip .env", mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: "gunzip -f .env.gz", mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: "gzip -c .env > backup.gz", mode: "bypassPermissions", deny: NO_ENV, expect: "allow" },
  { call: "sort -o .env x.txt", mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: "sudo tee .env < x", mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: "cd sub && echo x > ../.env", mode: "bypassPermissions", deny: NO_ENV, expect: "ask" },
  { call: "echo x > $TARGET", mode: "bypassPermissions", deny: NO_ENV, expect: "ask" },
  { call: "xargs rm < list.txt", mode: "bypassPermissions", deny: NO_ENV, expect: "ask" },
  { call: "tar xf evil.tar", mode: "bypassPermissions", deny: NO_ENV, expect: "ask" },
  { call: "rm -f *.env", mode: "bypassPermissions", deny: NO_ENV, expect: "ask" },
  { call: "python3 -c 'open(\".env\", \"w\")'", mode: "bypassPermissions", deny: NO_ENV, expect: "ask" },
  { call: "echo 'echo x > .env' | sh", mode: "bypassPermissions", deny: NO_ENV, expect: "ask" },
  { call: "sh -c 'echo x > .env'", mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: "PATH=./bin:$PATH make", mode: "bypassPermissions", deny: NO_ENV, expect: "allow" },
  { call: "cp a.txt b.txt && sed -i s/a/b/ b.txt", mode: "bypassPermissions", deny: NO_ENV, expect: "allow" },
  { call: "echo x > notes.txt", mode: "default", allow: ["shell(echo*)", "edit(*.txt)"], expect: "allow" },
  { call: "echo x > .env", mode: "acceptEdits", deny: ["edit"], allow: ["shell(echo*)"], expect: "deny" },
  { call: { mcp: "mcp__fs__write_file", args: { path: ".env", content: "x" } }, mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: { mcp: "mcp__fs__move", args: { source: "a.txt", destination: ".env" } }, mode: "bypassPermissions", deny: NO_ENV, expect: "deny" },
  { call: { mcp: "mcp__fs__write_file", args: { path: "notes.txt", content: "x" } }, mode: "bypassPermissions", deny: NO_ENV, expect: "allow" },

  // With a deny rule on shell, what the line runs must be visible, or a person decides.
  { call: "$(echo touch) x", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "`echo touch` x", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "$CMD x", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "echo 'rm -rf x' | sh", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "echo 'rm -rf x' | bash -s", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "sh <<'EOF'\nrm -rf x\nEOF", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "bash <<< 'rm -rf x'", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "python3 -c 'import shutil; shutil.rmtree(\"x\")'", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "echo 'import os' | python3", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "node -e 'require(\"fs\").rmSync(\"x\")'", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "perl -e 'unlink \"x\"'", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "ruby -e 'File.delete(\"x\")'", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "perl -ne 'unlink \"x\"' list.txt", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "python3 -uc 'import os'", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: 'bash -c "$SCRIPT"', mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: 'eval "$X"', mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "echo 'rm -rf x' > a.sh; sh a.sh", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "echo 'rm -rf x' > a.sh && . ./a.sh", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "echo 'unterminated", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "$(echo rm) -rf x", mode: "default", allow: ["shell"], deny: NO_RM, expect: "ask" },
  { call: "$(echo touch) x", mode: "plan", deny: NO_RM, expect: "deny" },
  { call: "sh -c 'rm -rf x'", mode: "bypassPermissions", deny: NO_RM, expect: "deny" },
  { call: "eval 'rm -rf x'", mode: "bypassPermissions", deny: NO_RM, expect: "deny" },
  { call: "{rm,-rf,x}", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "/bin/r? -rf x", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "alias r='rm -rf'", mode: "bypassPermissions", deny: NO_RM, expect: "deny" },
  { call: "source <(echo 'rm -rf x')", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "bash <(echo 'rm -rf x')", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "printf 'rm -rf x' | xargs -0 bash -c", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "PATH=./evil:$PATH ls", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "PATH=./evil:$PATH; ls", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "export PATH=./evil:$PATH && ls", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "export NODE_ENV=test && npm test", mode: "bypassPermissions", deny: NO_RM, expect: "allow" },
  { call: "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='rm -rf x' git log", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "git -c core.pager='rm -rf x' log", mode: "bypassPermissions", deny: NO_RM, expect: "ask" },
  { call: "NODE_ENV=test npm test", mode: "bypassPermissions", deny: NO_RM, expect: "allow" },
  { call: "GIT_PAGER=cat git log", mode: "bypassPermissions", allow: ["shell(GIT_PAGER=cat git log*)"], deny: NO_RM, expect: "allow" },
  { call: "GIT_PAGER=cat git log", mode: "bypassPermissions", allow: ["shell"], deny: NO_RM, expect: "ask" },
  { call: "git status && npm test", mode: "bypassPermissions", deny: NO_RM, expect: "allow" },
  { call: "sh build.sh", mode: "bypassPermissions", deny: NO_RM, expect: "allow" },
  { call: "python3 -m pytest", mode: "bypassPermissions", deny: NO_RM, expect: "allow" },
  { call: "$(echo touch) x", mode: "bypassPermissions", expect: "allow" },
  { call: "python3 -c 'print(1)'", mode: "default", allow: ["shell(python3*)"], expect: "ask" },

  // MCP annotations are hints; patterns on MCP tools match the arguments' canonical JSON.
  { call: { mcp: "mcp__fs__read", readOnly: true, args: { path: "a.txt" } }, mode: "plan", expect: "deny" },
  { call: { mcp: "mcp__fs__read", readOnly: true, args: { path: "a.txt" } }, mode: "plan", allow: ["mcp__fs__read"], expect: "allow" },
  { call: { mcp: "mcp__fs__read", readOnly: true, args: { path: "a.txt" } }, mode: "plan", allow: ["mcp__fs"], expect: "allow" },
  { call: { mcp: "mcp__fs__read", readOnly: true, args: { path: "a.txt" } }, mode: "default", expect: "allow" },
  { call: { mcp: "mcp__db__query", args: { sql: "DROP TABLE users" } }, mode: "bypassPermissions", deny: ["mcp__db__query(*DROP*)"], expect: "deny" },
  { call: { mcp: "mcp__db__query", args: { sql: "SELECT 1" } }, mode: "bypassPermissions", deny: ["mcp__db__query(*DROP*)"], expect: "allow" },
  { call: { mcp: "mcp__db__query", args: { sql: "select 1", db: "prod" } }, mode: "default", deny: ['mcp__db__*(*"db":"prod"*)'], expect: "deny" },
  { call: { mcp: "mcp__fs__write", args: { path: "src/a.ts", content: "x" } }, mode: "default", allow: ['mcp__fs__write({"content":*,"path":"src/*)'], expect: "allow" },
  { call: { mcp: "mcp__fs__write", args: { path: "lib/a.ts", content: 'x","path":"src/' } }, mode: "default", allow: ['mcp__fs__write({"content":*,"path":"src/*)'], expect: "ask" },
  { call: { mcp: "mcp__fs__write", args: { path: "a.txt" } }, mode: "default", expect: "ask" },
];
