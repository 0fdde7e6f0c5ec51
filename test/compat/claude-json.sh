#!/usr/bin/env bash
# As people script `claude -p`: the JSON result's numbers and text, read with jq.
set -euo pipefail
out=$(agent -p "say hi" --output-format json --max-turns 3)
echo "$out" | jq -e '.type == "result" and .subtype == "success" and .is_error == false' >/dev/null
echo "$out" | jq -e '(.num_turns | type) == "number" and (.total_cost_usd | type) == "number"' >/dev/null
echo "$out" | jq -e '(.duration_ms | type) == "number" and (.duration_api_ms | type) == "number"' >/dev/null
echo "$out" | jq -e '(.session_id | type) == "string" and (.usage.input_tokens | type) == "number"' >/dev/null
echo "$out" | jq -r '.num_turns, (.total_cost_usd | type), .result'
