#!/usr/bin/env bash
# As the Claude Agent SDK drives `claude`: no -p, an initialize control request
# first (answered by a control_response), then user messages as JSON lines on
# stdin, one turn each, in one session; the driver waits for each turn's result
# line before it writes the next message.
set -euo pipefail
coproc AGENT { agent --output-format stream-json --verbose --input-format stream-json; }
pid=$AGENT_PID
out=${AGENT[0]}
in=${AGENT[1]}
echo '{"request_id":"init_1","type":"control_request","request":{"subtype":"initialize","systemPrompt":["You are scripted."]}}' >&"$in"
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
jq -s -e '[.[] | select(.type != "control_response") | .session_id] | unique | length == 1' events.jsonl >/dev/null
jq -s -e '[.[] | select(.type == "control_response") | .response.request_id] == ["init_1"]' events.jsonl >/dev/null
# Exactly one result per turn, none more at EOF.
jq -s -e '[.[] | select(.type == "result") | .num_turns] == [1, 1]' events.jsonl >/dev/null
jq -r 'select(.type == "assistant") | .message.content[0].text' events.jsonl
