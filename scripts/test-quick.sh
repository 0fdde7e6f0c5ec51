#!/usr/bin/env bash
# `npm run test:quick`: the inner loop — typecheck, build, and every test but
# the slow ones: the end-to-end runs of the compiled binary (test/e2e), the
# PostgreSQL store's files (each starts a cluster), the real SDKs and CLIs
# (test/compat) and the attacks replayed on the binary (test/security). Before
# a commit that touches those, and always before pushing, run `npm test`.
set -euo pipefail
cd "$(dirname "$0")/.."
npm run typecheck
npm run build
dirs=()
for dir in test/*/; do
  case "$dir" in
    test/e2e/|test/postgres/|test/compat/|test/security/|test/fixtures/|test/support/) ;;
    *) dirs+=("$dir") ;;
  esac
done
bun test --timeout 120000 "${dirs[@]}" "$@"
