#!/usr/bin/env bash
# As people keep a conversation going with `claude -p`: a chosen --session-id,
# then --resume, and --fork-session to branch off without changing the original.
set -euo pipefail
id=5f0c8f7e-3c1a-4d2b-9e8f-0a1b2c3d4e5f
[ "$(agent -p "remember 7" --session-id "$id" --output-format json | jq -r .session_id)" = "$id" ]
[ "$(agent -p "remember 8" --session-id "$id" --output-format json | jq -r .session_id)" = "$id" ]
forked=$(agent -p --resume "$id" --fork-session "which numbers?" --output-format json | jq -r .session_id)
[ "$forked" != "$id" ]
[ "$(agent -p -r "$id" "and now?" --output-format json | jq -r .session_id)" = "$id" ]
echo forked
