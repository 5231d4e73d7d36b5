#!/usr/bin/env bash
# Usage: loadtest/cluster.sh [N] [RAMP] [DURATION]
#
# A cluster under one swarm: a simulation with an embedded NATS on loopback
# and GATEWAYS gateways (default 2) on free loopback ports, each with its
# metrics endpoint, all in temporary state directories. Once every gateway
# says snaked_cluster_live 1, one swarm of N sessions (default 1000, ramped
# over RAMP, default 20s, measured for DURATION, default 30s) is dealt evenly
# over the gateways (-addr gw1,gw2,...), with "-q -check 0.02" as
# gateway.sh runs it; the swarm measures the simulation (-server-pid,
# -metrics: its tick). The report goes to OUT/cluster.json, .txt and .html.
# Each process's CPU (% of a core) from swarm start to swarm end, its RSS at
# the end and its peak RSS, and each gateway's frames and bytes sent over
# the run (from its metrics) are printed and kept in OUT/procs.txt; the
# daemons' logs and their last scrapes are kept in OUT too. Everything
# listens and dials on loopback only; every process started is stopped on
# exit.
#
# Environment: OUT (default: a new directory under /tmp), SNAKED_BIN,
# LOADTEST_ARGS (added to "-q -check 0.02"), GATEWAYS (default 2),
# NATS_ADDR (default 127.0.0.1:4312; must be free), GATEWAY_PORTS (the
# gateways' SSH ports, comma-separated; default: free ports the kernel picks),
# MAX_SESSIONS (the processes' -max-sessions, which sizes the world; default
# N+100, at least 3000), SIM_ARGS (more flags for the simulation),
# SIM_ENV (its environment's additions, such as GOGC=100),
# GATEWAY_ARGS (more flags for each gateway, ";" between gateways: the
# first part goes to gateway 1, and so on), FOLLOWERS and CAMERAS (bin/loadtest
# -followers FOLLOWERS -cameras CAMERAS on the embedded NATS beside the
# swarm: headless region followers standing for more gateways; the swarm
# starts once they have their replicas, and they stop with it), LATE (1: a
# gateway on the whole deltas starts once the swarm's ramp is over; the time
# until it is live is its resync; when it is not live by the swarm's end, it
# has LATE_WAIT more seconds, default 40, with the swarm and the followers
# stopped), LIVE_WAIT (seconds a process may take to
# come up; default 20), NICE (the niceness of every process but the
# simulation, default 0: with 10 the simulation runs first, as on a machine
# of its own, and the others share what it leaves).
set -euo pipefail
cd "$(dirname "$0")/.."
. loadtest/lib.sh

N=${1:-1000}
RAMP=${2:-20s}
DURATION=${3:-30s}
GO=${GO:-go}
GATEWAYS=${GATEWAYS:-2}
NATS_ADDR=${NATS_ADDR:-127.0.0.1:4312}
OUT=${OUT:-$(mktemp -d /tmp/snaked-cluster.XXXXXX)}
mkdir -p "$OUT"

case "$NATS_ADDR" in
  127.*:* | localhost:*) ;;
  *) echo "cluster.sh: NATS_ADDR must be on loopback (127.x.y.z:PORT), not $NATS_ADDR" >&2; exit 2 ;;
esac
if ! [[ $GATEWAYS =~ ^[1-9][0-9]?$ ]]; then
  echo "cluster.sh: GATEWAYS must be 1..99, not $GATEWAYS" >&2
  exit 2
fi

$GO build -o bin/loadtest ./cmd/loadtest
if [ -z "${SNAKED_BIN:-}" ]; then
  $GO build -o bin/snaked ./cmd/snaked
  SNAKED_BIN=bin/snaked
fi

# secs DURATION: a Go duration (1m30s, 20s, 500ms) in whole seconds, rounded up.
secs() {
  awk -v d="$1" 'BEGIN {
    t = 0
    while (d != "") {
      if (!match(d, /^[0-9.]+/)) { exit 1 }
      v = substr(d, 1, RLENGTH); d = substr(d, RLENGTH + 1)
      if (d ~ /^ms/) { t += v / 1000; d = substr(d, 3) }
      else if (d ~ /^h/) { t += v * 3600; d = substr(d, 2) }
      else if (d ~ /^m/) { t += v * 60; d = substr(d, 2) }
      else if (d ~ /^s/) { t += v; d = substr(d, 2) }
      else { exit 1 }
    }
    printf "%d\n", (t == int(t)) ? t : int(t) + 1
  }'
}
ramp_s=$(secs "$RAMP") || { echo "cluster.sh: bad RAMP $RAMP" >&2; exit 2; }
dur_s=$(secs "$DURATION") || { echo "cluster.sh: bad DURATION $DURATION" >&2; exit 2; }
# The swarm gets the ramp, the window and two minutes for dials, handshakes
# and teardown; past that it is stopped.
swarm_limit=$((ramp_s + dur_s + 120))

tmp=$(mktemp -d)
sim=""
swarm=""
gws=()
stop() { stop_process "$1" "cluster.sh: $2"; }
cleanup() {
  stop "$swarm" swarm
  stop "${follow:-}" followers
  stop "${late:-}" "late gateway"
  for i in "${!gws[@]}"; do stop "${gws[$i]}" "gateway $((i + 1))"; done
  stop "$sim" simulation
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rss() { awk '$1 == "VmRSS:" {print $2}' "/proc/$1/status"; } # KiB
hwm() { awk '$1 == "VmHWM:" {print $2}' "/proc/$1/status"; } # peak RSS, KiB
hz=$(getconf CLK_TCK)
# metric FILE NAME: the sum of every sample of NAME (all label sets) in a scrape.
metric() {
  awk -v n="$2" '$1 == n || index($1, n "{") == 1 { s += $NF; f = 1 } END { if (f) printf "%.0f\n", s; else print 0 }' "$1"
}
scrape() { curl -fsS --max-time 5 "http://$1/metrics" >"$2" 2>/dev/null || : >"$2"; }
free_port() { bin/loadtest -free-port; }

# NATS_ADDR must be free: nothing may accept there.
if (exec 3<>"/dev/tcp/${NATS_ADDR%:*}/${NATS_ADDR##*:}") 2>/dev/null; then
  echo "cluster.sh: something already listens on $NATS_ADDR; set NATS_ADDR" >&2
  exit 1
fi

# Room for the swarm, never less than the default 3000: the world's size
# (and so its density) follows the simulation's -max-sessions, as in run.sh.
cap=${MAX_SESSIONS:-$((N + 100 > 3000 ? N + 100 : 3000))}
live_wait=${LIVE_WAIT:-20}
niceness=${NICE:-0}
IFS=';' read -r -a gw_args <<<"${GATEWAY_ARGS:-}"

mkdir -m 700 "$tmp/sim"
sim_maddr="127.0.0.1:$(free_port)"
${SIM_ENV:+env $SIM_ENV} "$SNAKED_BIN" -role sim -nats-embed "$NATS_ADDR" -state-dir "$tmp/sim" -max-sessions "$cap" \
  -metrics-addr "$sim_maddr" -shutdown-grace 1s ${SIM_ARGS:-} >"$OUT/sim.log" 2>&1 &
sim=$!
# Wait (at most LIVE_WAIT s) for the embedded NATS.
for i in $(seq 1 $((live_wait * 10))); do
  if ! kill -0 "$sim" 2>/dev/null; then
    echo "cluster.sh: the simulation exited at start:" >&2
    cat "$OUT/sim.log" >&2
    sim=""
    exit 1
  fi
  grep -q '^nats ' "$OUT/sim.log" && break
  if [ "$i" = $((live_wait * 10)) ]; then
    echo "cluster.sh: the simulation's NATS did not start within $live_wait s" >&2
    exit 1
  fi
  sleep 0.1
done

IFS=, read -r -a fixed_ports <<<"${GATEWAY_PORTS:-}"
addrs=()
maddrs=()
for i in $(seq 1 "$GATEWAYS"); do
  port=${fixed_ports[$((i - 1))]:-$(free_port)}
  addrs+=("127.0.0.1:$port")
  maddrs+=("127.0.0.1:$(free_port)")
  mkdir -m 700 "$tmp/gw$i"
  # -max-per-ip stays at its default 64, the swarm's -per-addr default (as
  # run.sh leaves it): with the sessions dealt over the gateways each
  # source address carries fewer than that on any one of them.
  nice -n "$niceness" "$SNAKED_BIN" -role gateway -nats "nats://$NATS_ADDR" -addr "${addrs[$((i - 1))]}" \
    -state-dir "$tmp/gw$i" -metrics-addr "${maddrs[$((i - 1))]}" -max-sessions "$cap" \
    -shutdown-grace 1s ${gw_args[$((i - 1))]:-} >"$OUT/gw$i.log" 2>&1 &
  gws+=($!)
done

# Wait (at most LIVE_WAIT s) until every gateway hears ticks from the simulation.
for i in $(seq 1 "$GATEWAYS"); do
  g=${gws[$((i - 1))]}
  for j in $(seq 1 $((live_wait * 5))); do
    if ! kill -0 "$g" 2>/dev/null; then
      echo "cluster.sh: gateway $i exited at start:" >&2
      cat "$OUT/gw$i.log" >&2
      exit 1
    fi
    if curl -fsS --max-time 1 "http://${maddrs[$((i - 1))]}/metrics" 2>/dev/null | grep -q '^snaked_cluster_live 1$'; then
      break
    fi
    if [ "$j" = $((live_wait * 5)) ]; then
      echo "cluster.sh: gateway $i (${addrs[$((i - 1))]}) not live within $live_wait s" >&2
      cat "$OUT/gw$i.log" >&2
      exit 1
    fi
    sleep 0.2
  done
done

addr_list=$(IFS=,; echo "${addrs[*]}")
args=(-addr "$addr_list" -n "$N" -ramp "$RAMP" -duration "$DURATION"
  -server-pid "$sim" -metrics "http://$sim_maddr/metrics"
  -json "$OUT/cluster.json" -report "$OUT/cluster.html")
echo "cluster.sh: $(date -u '+%F %T') UTC, load $(cut -d' ' -f1-3 /proc/loadavg), sim pid $sim, gateways ${gws[*]} on $addr_list" >&2
echo "cluster.sh: bin/loadtest ${args[*]} -q -check 0.02 ${LOADTEST_ARGS:-}" >&2

follow=""
f_ticks=0 f0=0
if [ "${FOLLOWERS:-0}" -gt 0 ]; then
  # The followers build their replicas first (at most LIVE_WAIT s), then
  # the swarm starts; their window ends with the swarm's (see below).
  nice -n "$niceness" bin/loadtest -followers "$FOLLOWERS" -cameras "${CAMERAS:-60}" -nats "nats://$NATS_ADDR" \
    -duration "$((ramp_s + dur_s + 60))s" >"$OUT/followers.txt" 2>"$OUT/followers.log" &
  follow=$!
  for _ in $(seq 1 $((live_wait * 2))); do
    if grep -q '^followers ready$' "$OUT/followers.txt" || ! kill -0 "$follow" 2>/dev/null; then break; fi
    sleep 0.5
  done
  grep -q '^followers ready$' "$OUT/followers.txt" ||
    echo "cluster.sh: the followers were not ready within ${live_wait} s (see $OUT/followers.log); the swarm starts anyway" >&2
  f0=$(ticks "$follow" 2>/dev/null || echo 0)
  f_ticks=$f0
fi
late="" late_maddr="" late_t0="" late_live=""
for i in $(seq 1 "$GATEWAYS"); do scrape "${maddrs[$((i - 1))]}" "$OUT/gw$i.before.prom"; done
scrape "$sim_maddr" "$OUT/sim.before.prom"
s0=$(ticks "$sim")
g0=()
for g in "${gws[@]}"; do g0+=("$(ticks "$g")"); done
t0=$(date +%s.%N)
# shellcheck disable=SC2086
nice -n "$niceness" bin/loadtest "${args[@]}" -q -check 0.02 ${LOADTEST_ARGS:-} >"$OUT/cluster.txt" 2>"$OUT/swarm.err" &
swarm=$!
# Sample the swarm's CPU and RSS while it runs (the last sample stands for
# its whole life); stop it past its limit.
w_ticks=0
w_rss=0
w_hwm=0
for k in $(seq 1 $((swarm_limit * 2))); do
  kill -0 "$swarm" 2>/dev/null || break
  if x=$(ticks "$swarm" 2>/dev/null) && r=$(rss "$swarm" 2>/dev/null) && h=$(hwm "$swarm" 2>/dev/null); then
    w_ticks=$x w_rss=${r:-0} w_hwm=${h:-0}
  fi
  if [ -n "$follow" ] && x=$(ticks "$follow" 2>/dev/null); then f_ticks=$x; fi
  if [ "${LATE:-0}" = 1 ] && [ -z "$late" ] && [ "$k" -ge $((ramp_s * 2)) ]; then
    late_maddr="127.0.0.1:$(free_port)"
    mkdir -m 700 "$tmp/late"
    nice -n "$niceness" "$SNAKED_BIN" -role gateway -nats "nats://$NATS_ADDR" -addr "127.0.0.1:$(free_port)" \
      -state-dir "$tmp/late" -metrics-addr "$late_maddr" -max-sessions "$cap" \
      -shutdown-grace 1s >"$OUT/late.log" 2>&1 &
    late=$!
    late_t0=$(date +%s.%N)
  fi
  if [ -n "$late" ] && [ -z "$late_live" ] &&
    curl -fsS --max-time 1 "http://$late_maddr/metrics" 2>/dev/null | grep -q '^snaked_cluster_live 1$'; then
    late_live=$(awk -v a="$late_t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  fi
  sleep 0.5
done
rc=0
if kill -0 "$swarm" 2>/dev/null; then
  echo "cluster.sh: the swarm ran past ${swarm_limit} s; stopping it" >&2
  stop "$swarm" swarm
  rc=1
else
  wait "$swarm" || rc=$?
fi
swarm=""
t1=$(date +%s.%N)
s1=$(ticks "$sim")
g1=()
for g in "${gws[@]}"; do g1+=("$(ticks "$g")"); done
for i in $(seq 1 "$GATEWAYS"); do scrape "${maddrs[$((i - 1))]}" "$OUT/gw$i.after.prom"; done
scrape "$sim_maddr" "$OUT/sim.after.prom"
if [ -n "$follow" ]; then
  # The followers' window ends with the swarm's (they report what they
  # took in until then).
  kill -INT "$follow" 2>/dev/null || true
  wait "$follow" || echo "cluster.sh: the followers failed (see $OUT/followers.log)" >&2
  follow=""
fi
# A late gateway not live yet gets LATE_WAIT more seconds with the swarm and
# the followers stopped: whether it only wanted the CPU they took.
late_after=""
if [ -n "$late" ] && [ -z "$late_live" ]; then
  t_end=$(date +%s.%N)
  for _ in $(seq 1 $((${LATE_WAIT:-40} * 2))); do
    if curl -fsS --max-time 1 "http://$late_maddr/metrics" 2>/dev/null | grep -q '^snaked_cluster_live 1$'; then
      late_live=$(awk -v a="$late_t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
      late_after=$(awk -v a="$t_end" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
      break
    fi
    sleep 0.5
  done
fi
if [ -n "$late" ]; then scrape "$late_maddr" "$OUT/late.prom"; fi

cat "$OUT/cluster.txt"
if [ -s "$OUT/swarm.err" ]; then
  echo "cluster.sh: the swarm's stderr:" >&2
  cat "$OUT/swarm.err" >&2
fi

# quantile BEFORE AFTER NAME Q: the Q quantile (0..1) of histogram NAME
# over the run, from its buckets' counts after minus before, interpolated
# within the bucket (seconds).
quantile() {
  awk -v n="$3_bucket" -v q="$4" '
    index($1, n "{") == 1 && match($1, /le="[^"]*"/) {
      le = substr($1, RSTART + 4, RLENGTH - 5)
      if (FILENAME == ARGV[1]) { b[le] = $NF } else { a[le] = $NF; les[++k] = le }
    }
    END {
      total = a["+Inf"] - b["+Inf"]
      if (total <= 0) { print "-"; exit }
      prev = 0; lo = 0
      for (i = 1; i <= k; i++) {
        c = a[les[i]] - b[les[i]]
        if (c >= q * total) {
          if (les[i] == "+Inf") { printf "> %.3f\n", lo; exit }
          f = (c > prev) ? (q * total - prev) / (c - prev) : 1
          printf "%.4f\n", lo + f * (les[i] - lo); exit
        }
        prev = c; lo = les[i]
      }
    }' "$1" "$2"
}
ms() { awk -v s="$1" 'BEGIN { if (s ~ /^[0-9.]+$/) printf "%.1f", 1000 * s; else print s }'; }
cpu() { awk -v c="$1" -v hz="$hz" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.1f", 100 * c / hz / (t1 - t0) }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }
{
  printf 'processes from swarm start to swarm end (%.1f s): CPU %% of a core, RSS at the end / peak MiB\n' \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
  printf '  %-12s %6s %%  %5s / %5s MiB\n' simulation "$(cpu $((s1 - s0)))" "$(mib "$(rss "$sim")")" "$(mib "$(hwm "$sim")")"
  for i in $(seq 1 "$GATEWAYS"); do
    g=${gws[$((i - 1))]}
    printf '  %-12s %6s %%  %5s / %5s MiB  (%s)\n' "gateway $i" "$(cpu $((g1[i - 1] - g0[i - 1])))" \
      "$(mib "$(rss "$g")")" "$(mib "$(hwm "$g")")" "${addrs[$((i - 1))]}"
  done
  printf '  %-12s %6s %%  %5s / %5s MiB  (its whole life, sampled every 0.5 s)\n' swarm "$(cpu "$w_ticks")" "$(mib "$w_rss")" "$(mib "$w_hwm")"
  if [ "${FOLLOWERS:-0}" -gt 0 ]; then
    printf '  %-12s %6s %%  (%s followers, from their window'"'"'s start)\n' followers "$(cpu $((f_ticks - f0)))" "$FOLLOWERS"
    echo "  $(grep -v '^followers ready$' "$OUT/followers.txt" || tail -1 "$OUT/followers.log")"
  fi
  sb="$OUT/sim.before.prom" sa="$OUT/sim.after.prom"
  secs_run=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
  printf 'simulation: %s snakes; round p50 %s p99 %s ms; step p50 %s p99 %s ms; encode and publish p50 %s p99 %s ms; ticks dropped %d; sent p50 %s p99 %s ms, %d waits for the sender; %d snakes expired with a gateway silent past its lease\n' \
    "$(awk '$1 == "snaked_world_players" || $1 == "snaked_world_bots" { s += $2 } END { print s + 0 }' "$sa")" \
    "$(ms "$(quantile "$sb" "$sa" snaked_cluster_round_seconds 0.5)")" "$(ms "$(quantile "$sb" "$sa" snaked_cluster_round_seconds 0.99)")" \
    "$(ms "$(quantile "$sb" "$sa" snaked_tick_seconds 0.5)")" "$(ms "$(quantile "$sb" "$sa" snaked_tick_seconds 0.99)")" \
    "$(ms "$(quantile "$sb" "$sa" snaked_cluster_publish_seconds 0.5)")" "$(ms "$(quantile "$sb" "$sa" snaked_cluster_publish_seconds 0.99)")" \
    $(($(metric "$sa" snaked_ticks_dropped_total) - $(metric "$sb" snaked_ticks_dropped_total))) \
    "$(ms "$(quantile "$sb" "$sa" snaked_cluster_send_seconds 0.5)")" "$(ms "$(quantile "$sb" "$sa" snaked_cluster_send_seconds 0.99)")" \
    $(($(metric "$sa" snaked_cluster_send_waits_total) - $(metric "$sb" snaked_cluster_send_waits_total))) \
    $(($(metric "$sa" snaked_cluster_expired_total) - $(metric "$sb" snaked_cluster_expired_total)))
  printf 'NATS: %.0f KB/s out to its clients, %.0f KB/s in; deltas published %.0f KB/s; consumers cut off %d\n' \
    "$(awk -v x=$(($(metric "$sa" snaked_nats_out_bytes_total) - $(metric "$sb" snaked_nats_out_bytes_total))) -v t="$secs_run" 'BEGIN { print x / t / 1000 }')" \
    "$(awk -v x=$(($(metric "$sa" snaked_nats_in_bytes_total) - $(metric "$sb" snaked_nats_in_bytes_total))) -v t="$secs_run" 'BEGIN { print x / t / 1000 }')" \
    "$(awk -v x=$(($(metric "$sa" snaked_cluster_delta_bytes_total) - $(metric "$sb" snaked_cluster_delta_bytes_total))) -v t="$secs_run" 'BEGIN { print x / t / 1000 }')" \
    $(($(metric "$sa" snaked_nats_slow_consumers_total) - $(metric "$sb" snaked_nats_slow_consumers_total)))
  if [ "${LATE:-0}" = 1 ]; then
    printf 'late gateway (whole deltas, started after the ramp): live after %s s%s; %s snapshots taken, %s gaps\n' \
      "${late_live:-not within the window and ${LATE_WAIT:-40} s after it}" \
      "${late_after:+ (${late_after} s after the swarm and the followers stopped)}" \
      "$(metric "$OUT/late.prom" snaked_cluster_snapshots_total)" "$(metric "$OUT/late.prom" snaked_cluster_gaps_total)"
  fi
  echo "gateways' own counters over the run (metrics before the swarm and after it): frames, bytes, bytes/frame, frames skipped, rejections, players who joined again, heartbeats past the lease"
  for i in $(seq 1 "$GATEWAYS"); do
    b="$OUT/gw$i.before.prom" a="$OUT/gw$i.after.prom"
    f=$(($(metric "$a" snaked_frames_total) - $(metric "$b" snaked_frames_total)))
    by=$(($(metric "$a" snaked_bytes_sent_total) - $(metric "$b" snaked_bytes_sent_total)))
    sk=$(($(metric "$a" snaked_frames_skipped_total) - $(metric "$b" snaked_frames_skipped_total)))
    rj=$(($(metric "$a" snaked_rejections_total) - $(metric "$b" snaked_rejections_total)))
    fb=$(($(metric "$a" snaked_follow_bytes_total) - $(metric "$b" snaked_follow_bytes_total)))
    gp=$(($(metric "$a" snaked_cluster_gaps_total) - $(metric "$b" snaked_cluster_gaps_total)))
    rn=$(($(metric "$a" snaked_rejoins_total) - $(metric "$b" snaked_rejoins_total)))
    hl=$(($(metric "$a" snaked_cluster_heartbeats_late_total) - $(metric "$b" snaked_cluster_heartbeats_late_total)))
    printf '  gateway %d: %d frames, %d bytes, %s bytes/frame, %d skipped, %d rejections, %d rejoined, %d heartbeats late; the world in: %.0f KB/s, %d gaps, %d messages (%d ticks) queued at the end\n' "$i" "$f" "$by" \
      "$(awk -v b="$by" -v f="$f" 'BEGIN { if (f > 0) printf "%.0f", b / f; else print "-" }')" "$sk" "$rj" "$rn" "$hl" \
      "$(awk -v x="$fb" -v t="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" 'BEGIN { print x / t / 1000 }')" "$gp" \
      "$(metric "$a" snaked_cluster_queued_messages)" "$(metric "$a" snaked_cluster_behind_ticks)"
  done
} | tee "$OUT/procs.txt"

for i in $(seq 1 "$GATEWAYS"); do
  kill -0 "${gws[$((i - 1))]}" 2>/dev/null || echo "cluster.sh: gateway $i is gone (see $OUT/gw$i.log)" >&2
done
kill -0 "$sim" 2>/dev/null || echo "cluster.sh: the simulation is gone (see $OUT/sim.log)" >&2
echo "cluster.sh: reports in $OUT" >&2
exit "$rc"
