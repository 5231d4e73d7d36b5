#!/usr/bin/env bash
# Usage: loadtest/ab.sh BIN_A BIN_B [PAIRS] [N] [RAMP] [DURATION]
#
# Compares two daemon builds on this machine: runs the swarm (run.sh, no
# floor run) against BIN_A, then BIN_B, PAIRS times (default 2), N sessions
# (default 2500, 30 s ramp, 40 s window), and prints each run's figures
# that tell builds apart: CPU per frame delivered, the render CPU per frame
# (the daemon's own samples on the thread's clock), frames skipped, bytes,
# gap and RSS. Alternating the builds spreads the machine's drift over
# both; one run in three or four on a shared 2-core machine is disturbed
# (many frames skipped): read medians, and pairs, not single runs. Each
# run's whole report is kept in $AB_OUT (default a temporary directory,
# named at the end).
#
# Example: git worktree add /tmp/old HEAD~3 && (cd /tmp/old && go build -o
# /tmp/snaked.old ./cmd/snaked) && go build -o /tmp/snaked.new ./cmd/snaked
# && loadtest/ab.sh /tmp/snaked.old /tmp/snaked.new 3
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2p' "$0" >&2
  exit 2
fi
. "$(dirname "$0")/lib.sh"
builds ab.sh "$1" "$2" # before the cd: the paths may be relative
cd "$(dirname "$0")/.."
pairs=${3:-2}
n=${4:-2500}
ramp=${5:-30s}
dur=${6:-40s}
out=${AB_OUT:-$(mktemp -d)}
mkdir -p "$out"
for i in $(seq 1 "$pairs"); do
  for side in A B; do
    bin=$a
    [ "$side" = B ] && bin=$b
    f="$out/$side.$i.txt"
    echo "== $side ($bin) run $i of $pairs, $(date -u +%T) UTC, load $(cut -d' ' -f1-3 /proc/loadavg)"
    if ! COMPARE=0 SNAKED_BIN="$bin" ./loadtest/run.sh "$n" "$ramp" "$dur" >"$f" 2>&1; then
      echo "ab.sh: run failed, see $f" >&2
    fi
    grep -E "server CPU %|us per frame delivered|render CPU us|frames sent|mean frame bytes|server RSS|frame gap ms p50.*players" "$f" || true
  done
done
echo "ab.sh: reports in $out"
