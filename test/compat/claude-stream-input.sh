#!/usr/bin/env bash
# As the Claude Agent SDK drives `claude`: user messages as JSON lines on stdin,
# one turn each, in one session; the driver waits for each turn's result line
# before it writes the next message.
set -euo pipefail
coproc AGENT { agent -p --input-format stream-json --output-format stream-json --verbose; }
pid=$AGENT_PID
out=${AGENT[0]}
in=${AGENT[1]}
echo '{"type":"user","message":{"role":"user","content":"first question"}}' >&"$in"
while IFS= read -r line <&"$out"; do
  echo "$line" >> events.jsonl
  [ "$(jq -r .type <<<"$line")" = result ] && break
done
echo '{"type":"user","message":{"role":"user","content":[{"type":"text","text":"second question"}]}}' >&"$in"
eval "exec $in>&-"
cat <&"$out" >> events.jsonl
wait "$pid"
jq -s -e '[.[] | select(.type == "system" and .subtype == "init")] | length == 1' events.jsonl >/dev/null
jq -s -e '[.[] | .session_id] | unique | length == 1' events.jsonl >/dev/null
# A result per turn, then the whole command's.
jq -s -e '[.[] | select(.type == "result") | .num_turns] == [1, 1, 2]' events.jsonl >/dev/null
jq -r 'select(.type == "assistant") | .message.content[0].text' events.jsonl
