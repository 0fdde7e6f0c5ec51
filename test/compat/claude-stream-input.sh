#!/usr/bin/env bash
# As the Claude Agent SDK drives `claude`: user messages as JSON lines on stdin,
# one turn each, in one session.
set -euo pipefail
{
  echo '{"type":"user","message":{"role":"user","content":"first question"}}'
  echo '{"type":"user","message":{"role":"user","content":[{"type":"text","text":"second question"}]}}'
} | agent -p --input-format stream-json --output-format stream-json --verbose > events.jsonl
jq -s -e '[.[] | select(.type == "system" and .subtype == "init")] | length == 1' events.jsonl >/dev/null
jq -s -e '[.[] | .session_id] | unique | length == 1' events.jsonl >/dev/null
tail -1 events.jsonl | jq -e '.type == "result" and .num_turns == 2' >/dev/null
jq -r 'select(.type == "assistant") | .message.content[0].text' events.jsonl
