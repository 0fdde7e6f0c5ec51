#!/usr/bin/env bash
# As people script `codex exec --json`: JSON lines, the last message in a file.
set -euo pipefail
agent exec --json --full-auto --skip-git-repo-check -o last.txt "run ls" > events.jsonl
head -1 events.jsonl | jq -e '.type == "thread.started" and (.thread_id | length) > 0' >/dev/null
jq -s -e 'map(.type) | any(. == "turn.started")' events.jsonl >/dev/null
jq -s -e 'any(.[]; .type == "item.completed" and .item.type == "command_execution" and .item.status == "completed")' events.jsonl >/dev/null
tail -1 events.jsonl | jq -e '.type == "turn.completed" and (.usage.input_tokens | type) == "number"' >/dev/null
jq -r 'select(.type == "item.completed" and .item.type == "agent_message") | .item.text' events.jsonl
cat last.txt
# codex exec resume --last: the same thread.
thread=$(head -1 events.jsonl | jq -r .thread_id)
agent exec resume --last --json "and again" | head -1 | jq -e --arg t "$thread" '.thread_id == $t' >/dev/null
