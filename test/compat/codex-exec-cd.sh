#!/usr/bin/env bash
# As people script `codex exec -C DIR` / `--cd DIR`: the working root named, the script elsewhere.
set -euo pipefail
repo=$PWD
elsewhere=$(mktemp -d)
trap 'rm -rf "$elsewhere"' EXIT
cd "$elsewhere"
agent exec -C "$repo" --full-auto --skip-git-repo-check "run ls"
agent exec --cd "$repo" --skip-git-repo-check "read a.txt"
