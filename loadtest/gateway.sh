#!/usr/bin/env bash
# Usage: loadtest/gateway.sh [N] [RAMP] [DURATION] [ROUNDS]
#
# A gateway against the single process, side by side: ROUNDS rounds (default
# 3), each a swarm of N sessions (default 1000) against the single daemon,
# then the same swarm against a gateway of a simulation with an embedded
# NATS on loopback (the same default world). Each run's report goes to
# OUT/single-R.json and OUT/gateway-R.json (and .txt); the simulation's CPU
# over each gateway run is printed and kept in OUT/sim-R.txt. 2 % of the
# sessions are checked players, which also time their turns (key to frame).
#
# Environment: OUT (default: a new directory under /tmp), SNAKED_BIN,
# LOADTEST_ARGS (added to "-q -check 0.02"), NATS_ADDR (default
# 127.0.0.1:4311; must be free).
set -euo pipefail
cd "$(dirname "$0")/.."
. loadtest/lib.sh

N=${1:-1000}
RAMP=${2:-20s}
DURATION=${3:-30s}
ROUNDS=${4:-3}
GO=${GO:-go}
NATS_ADDR=${NATS_ADDR:-127.0.0.1:4311}
OUT=${OUT:-$(mktemp -d /tmp/snaked-gateway.XXXXXX)}
mkdir -p "$OUT"

if [ -z "${SNAKED_BIN:-}" ]; then
  $GO build -o bin/snaked ./cmd/snaked
  SNAKED_BIN=bin/snaked
fi
export SNAKED_BIN COMPARE=0

sim=""
state=""
cleanup() {
  stop_process "$sim" "gateway.sh: simulation"
  if [ -n "$state" ]; then rm -rf "$state"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

hz=$(getconf CLK_TCK)

for r in $(seq 1 "$ROUNDS"); do
  echo "gateway.sh: round $r, single, $(date -u +%T) UTC, load $(cut -d' ' -f1 /proc/loadavg)" >&2
  JSON="$OUT/single-$r.json" LOADTEST_ARGS="-q -check 0.02 ${LOADTEST_ARGS:-}" \
    ./loadtest/run.sh "$N" "$RAMP" "$DURATION" >"$OUT/single-$r.txt" 2>&1

  echo "gateway.sh: round $r, gateway, $(date -u +%T) UTC, load $(cut -d' ' -f1 /proc/loadavg)" >&2
  state=$(mktemp -d)
  "$SNAKED_BIN" -role sim -nats-embed "$NATS_ADDR" -state-dir "$state" -max-sessions 3000 >"$OUT/sim-$r.log" 2>&1 &
  sim=$!
  for _ in $(seq 1 100); do
    grep -q '^nats ' "$OUT/sim-$r.log" && break
    sleep 0.1
  done
  c0=$(ticks "$sim"); t0=$(date +%s.%N)
  JSON="$OUT/gateway-$r.json" SNAKED_ARGS="-role gateway -nats nats://$NATS_ADDR" \
    LOADTEST_ARGS="-q -check 0.02 ${LOADTEST_ARGS:-}" \
    ./loadtest/run.sh "$N" "$RAMP" "$DURATION" >"$OUT/gateway-$r.txt" 2>&1
  c1=$(ticks "$sim"); t1=$(date +%s.%N)
  awk -v c="$((c1 - c0))" -v hz="$hz" -v t0="$t0" -v t1="$t1" \
    'BEGIN { printf "simulation CPU over the gateway run (ramp, window, teardown): %.1f %% of a core\n", 100 * c / hz / (t1 - t0) }' |
    tee "$OUT/sim-$r.txt"
  kill -TERM "$sim"
  wait "$sim" 2>/dev/null || true
  sim=""
  rm -rf "$state"
  state=""
done
echo "gateway.sh: reports in $OUT" >&2
