#!/usr/bin/env bash
# `--disallowedTools Bash`: the model is not offered the tool at all.
set -euo pipefail
agent -p "hello" --disallowedTools "Bash" --output-format json | jq -e '.is_error == false' >/dev/null
