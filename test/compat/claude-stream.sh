#!/usr/bin/env bash
# As people script `claude -p --output-format stream-json --verbose`: the init
# line's tools, each tool call as an assistant tool_use and its result as a user
# tool_result, then one result line.
set -euo pipefail
agent -p "list the files" --output-format stream-json --verbose --include-partial-messages --allowedTools "Bash(ls:*)" > events.jsonl
head -1 events.jsonl | jq -e '.type == "system" and .subtype == "init" and (.tools | any(. == "shell")) and (.mcp_servers | type) == "array" and .permissionMode != null and (.session_id | length) > 0 and (.cwd | length) > 0' >/dev/null
id=$(jq -r 'select(.type == "assistant") | .message.content[] | select(.type == "tool_use") | .id' events.jsonl)
jq -s -e --arg id "$id" 'any(.[] | select(.type == "user") | .message.content[]; .type == "tool_result" and .tool_use_id == $id)' events.jsonl >/dev/null
tail -1 events.jsonl | jq -e '.type == "result" and .num_turns == 2' >/dev/null
# The answer's pieces as they streamed, joined, are the answer.
jq -s -e '([.[] | select(.type == "stream_event") | .event.delta.text] | join("")) == (.[-1].result)' events.jsonl >/dev/null
jq -r 'select(.type == "assistant") | .message.content[] | select(.type == "text") | .text' events.jsonl
