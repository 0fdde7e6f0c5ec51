#!/usr/bin/env bash
# `npm run test:quick`: the inner loop — typecheck, build, and every test but
# the slow ones: the end-to-end runs of the compiled binary (test/e2e), the
# PostgreSQL store's files (each starts a cluster), the real SDKs and CLIs
# (test/compat), the attacks replayed on the binary (test/security) and the
# crash suites (*crash*.test.ts: hundreds of kill -9s). Before a commit that
# touches those, and always before pushing, run `npm test`.
set -euo pipefail
cd "$(dirname "$0")/.."
npm run typecheck
npm run build
mapfile -t files < <(find test -name '*.test.ts' \
  -not -path 'test/e2e/*' -not -path 'test/postgres/*' -not -path 'test/compat/*' -not -path 'test/security/*' \
  -not -name '*crash*' | sort)
bun test --timeout 120000 --parallel --timings=test/timings.json "${files[@]}" "$@"
