#!/usr/bin/env bash
# `npm run test:load`: the whole suite while busy loops keep every core loaded
# (3 a core, so a load of ~6-7 on CI's 2 cores on top of the suite's own), the
# way to prove that a timing-sensitive test waits for its event instead of a
# time. Deadlines in the tests scale with the load they find
# (test/support/deadline.ts). Extra arguments go to `bun test` (a file, a -t).
set -euo pipefail
cd "$(dirname "$0")/.."

cores=$(node -p 'require("node:os").availableParallelism()')
loops=$((cores * 3))
pids=()
stop_loops() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap stop_loops EXIT INT TERM

npm run typecheck
npm run build
echo "test:load: $loops busy loops on $cores cores" >&2
for _ in $(seq "$loops"); do
  node -e 'for (;;) {}' &
  pids+=("$!")
done
bun test --timeout 120000 --parallel --timings=test/timings.json "$@"
