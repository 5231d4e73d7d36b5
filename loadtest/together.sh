#!/usr/bin/env bash
# Usage: loadtest/together.sh BIN_A BIN_B [ROUNDS] [N] [RAMP] [DURATION]
#
# Compares two daemon builds side by side in time: each round starts both
# daemons at once, each with a swarm of N sessions of its own (default
# 1250, 30 s ramp, 40 s window) and a world sized for N+100 (the density
# of a 2,500-session run of loadtest/profile.sh), and prints both
# daemons' CPU per frame delivered and their ratio B/A. A neighbour's
# burst on a shared machine then hits both runs alike, where ab.sh's
# alternating runs see it in one and not the other; the price is half
# the sessions each, and two daemons and two swarms sharing the cores
# (read ratios, not absolute figures). Rounds swap which build starts
# first. Reports are kept in $AB_OUT (default a temporary directory).
#
# BIN_B "floor" runs the transport floor (bin/loadtest -floor, frames of
# $FRAME bytes, default 430: a crowd's mean at these densities) beside
# the daemon BIN_A: the daemon's CPU against the floor's with both under
# the same minute's noise, where run.sh measures the floor after the daemon.
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2p' "$0" >&2
  exit 2
fi
. "$(dirname "$0")/lib.sh"
if [ "$2" = floor ]; then
  builds together.sh "$1" "$1"
  b=floor
else
  builds together.sh "$1" "$2" # before the cd: the paths may be relative
fi
cd "$(dirname "$0")/.."
rounds=${3:-3}
n=${4:-1250}
ramp=${5:-30s}
dur=${6:-40s}
${GO:-go} build -o bin/loadtest ./cmd/loadtest
out=${AB_OUT:-$(mktemp -d)}
mkdir -p "$out"
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do stop_process "$p" "together.sh: daemon"; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start BIN NAME: starts a daemon (or the floor), sets port/metrics/pid.
start() {
  port=$(bin/loadtest -free-port)
  if [ "$1" = floor ]; then
    bin/loadtest -floor -listen "127.0.0.1:$port" -frame "${FRAME:-430}" >"$tmp/$2.log" 2>&1 &
    metrics=()
  else
    mport=$(bin/loadtest -free-port)
    mkdir -m 700 -p "$tmp/$2"
    "$1" -addr "127.0.0.1:$port" -state-dir "$tmp/$2" -metrics-addr "127.0.0.1:$mport" \
      -max-sessions $((n + 100)) -shutdown-grace 1s >"$tmp/$2.log" 2>&1 &
    metrics=(-metrics "http://127.0.0.1:$mport/metrics")
  fi
  pid=$!
  pids+=("$pid")
  wait_listen "$port" "$pid" "$tmp/$2.log" together.sh || exit 1
}

per_frame() { grep -E '^server CPU us per frame delivered' "$1" | awk '{print $NF}'; }
# per_frame_swarm REPORT: the server's CPU a frame from the swarm's side
# alone (its CPU share over the window, over the frames the swarm got:
# gaps counted and not): what the floor, which has no metrics, reports.
per_frame_swarm() {
  awk '/^ramp \/ window s/ {w = $NF}
    /^server CPU % of a core/ {c = $NF}
    /^frame gap ms/ {if (match($0, /n=[0-9]+/)) f += substr($0, RSTART + 2, RLENGTH - 2)}
    /^gaps not counted/ {f += $NF}
    END {if (f > 0) printf "%.1f", c / 100 * w * 1e6 / f; else print "-"}' "$1"
}

for r in $(seq 1 "$rounds"); do
  order=(A B)
  if [ $((r % 2)) = 0 ]; then order=(B A); fi
  swarms=()
  for k in "${order[@]}"; do
    bin=$a
    if [ "$k" = B ]; then bin=$b; fi
    start "$bin" "$k.$r"
    bin/loadtest -addr "127.0.0.1:$port" -n "$n" -ramp "$ramp" -duration "$dur" \
      -server-pid "$pid" "${metrics[@]}" >"$out/$k.$r.txt" 2>&1 &
    swarms+=($!)
  done
  for s in "${swarms[@]}"; do wait "$s" || true; done
  for p in "${pids[@]}"; do stop_process "$p" "together.sh: daemon"; done
  pids=()
  if [ "$b" = floor ]; then
    ca=$(per_frame_swarm "$out/A.$r.txt")
    cb=$(per_frame_swarm "$out/B.$r.txt")
  else
    ca=$(per_frame "$out/A.$r.txt")
    cb=$(per_frame "$out/B.$r.txt")
  fi
  if [ "$b" = floor ]; then
    echo "round $r $(date -u +%T) us a frame delivered daemon $ca floor $cb ratio daemon/floor $(awk -v x="$ca" -v y="$cb" 'BEGIN{printf "%.2f", x/y}')"
  else
    echo "round $r $(date -u +%T) us a frame delivered A $ca B $cb ratio B/A $(awk -v x="$ca" -v y="$cb" 'BEGIN{printf "%.3f", y/x}')"
  fi
done
echo "together.sh: reports in $out"
