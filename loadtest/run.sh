#!/usr/bin/env bash
# Usage: loadtest/run.sh [N] [RAMP] [DURATION]     (make loadtest N=500 RAMP=10s DURATION=30s)
#
# Builds bin/snaked and bin/loadtest, starts a daemon on a free loopback
# port with a temporary state directory and its metrics endpoint on, runs
# the swarm against it (measuring the daemon by pid and metrics), then runs
# the same swarm against the transport floor at the measured mean frame
# size (-compare), prints the report and stops everything it started.
#
# Environment:
#   SNAKED_ARGS    extra daemon flags, e.g. "-world 400x200" for a crowd test
#   SNAKED_BIN     run this daemon binary instead of building bin/snaked
#                  (e.g. an older commit's, for a side-by-side comparison)
#   LOADTEST_ARGS  extra swarm flags, e.g. "-spectators 0.1 -check 0.02 -keys 1"
#   JSON           also write the report as JSON to this file
#   REPORT         also write the report as a self-contained HTML page with charts
#   VIEWERS        also serve the status page (-http-addr on a free port) and
#                  hold this many viewers on it (-viewers), e.g. VIEWERS=200
#   COMPARE=0      skip the floor run
#   DAEMON=floor   use the transport floor itself as the server under test
#                  (checks this script without the daemon)
set -euo pipefail
cd "$(dirname "$0")/.."
. loadtest/lib.sh

N=${1:-500}
RAMP=${2:-10s}
DURATION=${3:-30s}
GO=${GO:-go}

$GO build -o bin/loadtest ./cmd/loadtest
SNAKED=${SNAKED_BIN:-bin/snaked}
if [ "${DAEMON:-snaked}" != floor ] && [ -z "${SNAKED_BIN:-}" ]; then
  $GO build -o bin/snaked ./cmd/snaked
fi

tmp=$(mktemp -d)
pid=""
cleanup() {
  stop_process "$pid" "run.sh: daemon"
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port=$(bin/loadtest -free-port)
mport=$(bin/loadtest -free-port)
args=(-addr "127.0.0.1:$port" -n "$N" -ramp "$RAMP" -duration "$DURATION")

if [ "${DAEMON:-snaked}" = floor ]; then
  bin/loadtest -floor -listen "127.0.0.1:$port" -frame "${FRAME:-150}" >"$tmp/daemon.log" 2>&1 &
  pid=$!
else
  mkdir -m 700 "$tmp/state"
  # Room for the swarm, never less than the default 3000: the world's size
  # (and so its density) follows -max-sessions, and a load run measures the
  # default daemon's world unless SNAKED_ARGS says otherwise.
  cap=$((N + 100 > 3000 ? N + 100 : 3000))
  page=()
  if [ "${VIEWERS:-0}" -gt 0 ]; then
    hport=$(bin/loadtest -free-port)
    page=(-http-addr "127.0.0.1:$hport")
    args+=(-viewers "$VIEWERS" -viewers-url "http://127.0.0.1:$hport/")
  fi
  # shellcheck disable=SC2086
  "$SNAKED" -addr "127.0.0.1:$port" -state-dir "$tmp/state" \
    -metrics-addr "127.0.0.1:$mport" -max-sessions "$cap" -shutdown-grace 1s \
    "${page[@]}" ${SNAKED_ARGS:-} >"$tmp/daemon.log" 2>&1 &
  pid=$!
  args+=(-metrics "http://127.0.0.1:$mport/metrics")
fi

if ! wait_listen "$port" "$pid" "$tmp/daemon.log" run.sh; then
  exit 1
fi

args+=(-server-pid "$pid")
if [ "${COMPARE:-1}" != 0 ] && [ "${DAEMON:-snaked}" != floor ]; then
  args+=(-compare)
fi
if [ -n "${REPORT:-}" ]; then
  args+=(-report "$REPORT")
fi
if [ -n "${JSON:-}" ]; then
  args+=(-json "$JSON")
fi
echo "run.sh: bin/loadtest ${args[*]} ${LOADTEST_ARGS:-}" >&2
# shellcheck disable=SC2086
bin/loadtest "${args[@]}" ${LOADTEST_ARGS:-}
