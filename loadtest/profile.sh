#!/usr/bin/env bash
# Profile the daemon under a swarm: loadtest/profile.sh [N] [OUTDIR]
# Starts bin/snaked on free loopback ports, runs N sessions (30 s ramp, 25 s
# window), takes a 10 s CPU profile and a heap profile from the daemon's
# pprof endpoint 38 s in, prints the swarm's report and stops everything.
# Read the profiles with: go tool pprof -top bin/snaked OUTDIR/cpu.prof
set -eu
n=${1:-2500}
out=${2:-.}
cd "$(dirname "$0")/.."
make -s build
st=$(mktemp -d)
port=$(bin/loadtest -free-port)
mport=$(bin/loadtest -free-port)
bin/snaked -addr 127.0.0.1:"$port" -state-dir "$st/state" -max-sessions $((n + 100)) \
  -metrics-addr 127.0.0.1:"$mport" >"$st/daemon.out" 2>"$st/daemon.err" &
dpid=$!
cleanup() { kill -TERM "$dpid" 2>/dev/null || true; sleep 7; kill -9 "$dpid" 2>/dev/null || true; rm -rf "$st"; }
trap cleanup EXIT
sleep 1
bin/loadtest -addr 127.0.0.1:"$port" -n "$n" -ramp 30s -duration 25s -server-pid "$dpid" \
  -metrics "http://127.0.0.1:$mport/metrics" -q >"$st/swarm.out" 2>&1 &
spid=$!
sleep 38
curl -s -o "$out/cpu.prof" "http://127.0.0.1:$mport/debug/pprof/profile?seconds=10"
curl -s -o "$out/heap.prof" "http://127.0.0.1:$mport/debug/pprof/heap?gc=1"
wait "$spid" || true
cat "$st/swarm.out"
