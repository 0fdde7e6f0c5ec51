#!/usr/bin/env bash
# As people ask `claude -p` for a structured answer: --json-schema, then
# .structured_output.
set -euo pipefail
schema='{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}'
out=$(agent -p "how many files?" --output-format json --json-schema "$schema")
echo "$out" | jq -e '.subtype == "success" and .structured_output.count == 3' >/dev/null
echo "$out" | jq -c '.structured_output'
