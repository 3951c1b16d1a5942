#!/usr/bin/env bash
# The whole test suite beside a CPU burner on every core, as CI runs it (CI=true: nothing skips).
# Checks that no test depends on an idle machine: readiness waits, timeouts and timing-sensitive
# assertions must hold when every core is also busy with something else.
#
#   scripts/stress-suite.sh [vitest arguments…]      e.g. scripts/stress-suite.sh test/e2e
#
# BURNERS (default: the number of cores) sets how many busy loops run beside the suite. The script
# prints the load before and after, the suite's duration and exit code, and exits with that code.
set -uo pipefail
cd "$(dirname "$0")/.."

burners=${BURNERS:-$(nproc)}
pids=()
stop_burners() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  wait "${pids[@]}" 2>/dev/null
  pids=()
}
trap stop_burners EXIT INT TERM

for _ in $(seq 1 "$burners"); do
  # A busy loop that never yields: one core's worth of competition each.
  node -e 'for (;;) {}' &
  pids+=("$!")
done
echo "stress-suite: ${burners} CPU burner(s) on $(nproc) core(s); load before: $(cut -d' ' -f1-3 /proc/loadavg)"

start=$(date +%s)
CI=true npx vitest run "$@"
code=$?
end=$(date +%s)

echo "stress-suite: load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
stop_burners
echo "stress-suite: suite exit code ${code} after $((end - start)) s"
exit "$code"
