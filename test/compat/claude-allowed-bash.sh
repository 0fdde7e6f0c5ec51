#!/usr/bin/env bash
# `--allowedTools Bash` as claude -p users give it: every command runs, what it
# writes too (inside the sandbox: the workspace only). `--allow shell`, ours,
# still asks for what a line writes, so headless the write is denied.
set -euo pipefail
agent -p "save a greeting" --allowedTools Bash --output-format json > bash.json
jq -e '.is_error == false and (.permission_denials | length) == 0' bash.json >/dev/null
cat s.txt
# The sandbox still bounds the shell: nothing lands outside the workspace.
test ! -e ../outside.txt
agent -p "save another" --allow shell --output-format json > shell.json
jq -r '.permission_denials[0].tool_input.command' shell.json
test ! -e t.txt
