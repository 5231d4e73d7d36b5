#!/usr/bin/env bash
# Usage: loadtest/scale.sh [N] [RAMP] [DURATION]   (make scale)
#
# One world for 100,000 players, on this machine: a simulation sized for
# 100,000 sessions and filled with 100,000 snakes (bots standing in for
# players; -sim-workers WORKERS, default 2), two SSH gateways (gateway 1
# follows the regions its sessions show, gateway 2 the whole deltas) with
# a swarm of N sessions (default 200) dealt over them, FOLLOWERS headless
# region followers (default 6, CAMERAS cameras each, default 60) standing
# for other gateways (each keeps a replica of the whole world's size, about
# 400 MB here, so this machine holds a few; NATS's bytes out to 40
# gateways is read from their bytes each), and a gateway that
# joins once the ramp is over (its resync), once the machine has settled
# (SETTLE, below). loadtest/cluster.sh runs it all
# and reports the simulation's tick (the round, its step and its encoding and
# publishing, p50/p99), each
# gateway's bytes in and CPU, the embedded NATS's bytes out, the late
# gateway's time to live and the sessions' frame gaps. Under 5 minutes with
# the defaults (RAMP 20s, DURATION 40s); everything on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-200}
RAMP=${2:-20s}
DURATION=${3:-40s}
export MAX_SESSIONS=${MAX_SESSIONS:-100000}
export SIM_ARGS="-bot-target ${SNAKES:-100000} -sim-workers ${WORKERS:-2} ${SIM_ARGS:-}"
export GATEWAY_ARGS="-follow regions;-follow full"
export FOLLOWERS=${FOLLOWERS:-6}
export CAMERAS=${CAMERAS:-60}
export LATE=1
export LIVE_WAIT=${LIVE_WAIT:-120}
# The simulation first: in a deployment it has a machine of its own; here
# the gateways, followers and swarm run at niceness 19 on what it leaves
# (at 10 they took enough of it to add 15-75 ms to the step's p99:
# docs/SCALING.md).
export NICE=${NICE:-19}
export OUT=${OUT:-$(mktemp -d /tmp/snaked-scale.XXXXXX)}
# A run right after another starts while the last one's processes (each
# follower's replica is about 400 MB) still end: wait at most SETTLE
# seconds (default 60) for the 1-minute load to fall below 2.
settle=${SETTLE:-60}
for _ in $(seq 1 $((settle / 5))); do
  awk '{ exit !($1 < 2.0) }' /proc/loadavg && break
  sleep 5
done
exec loadtest/cluster.sh "$N" "$RAMP" "$DURATION"
