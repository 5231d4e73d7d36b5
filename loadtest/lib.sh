# Shell helpers the load scripts share (run.sh, gateway.sh, cluster.sh):
# source it, do not run it.

# stop_process PID WHO: SIGTERM, wait at most 15 s, then SIGKILL (saying
# so on stderr as WHO); nothing when PID is empty or already gone.
stop_process() {
  local p=$1
  if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
    kill -TERM "$p" 2>/dev/null || true
    for _ in $(seq 1 150); do
      kill -0 "$p" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$p" 2>/dev/null; then
      echo "$2 (pid $p) did not stop in 15 s; killing it" >&2
      kill -KILL "$p" 2>/dev/null || true
    fi
    wait "$p" 2>/dev/null || true
  fi
}

# ticks PID: its CPU time so far (utime + stime), in clock ticks of CLK_TCK.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# wait_listen PORT PID LOG WHO: waits (at most 10 s) until 127.0.0.1:PORT
# accepts connections; if process PID exits first or the time runs out, it
# says so on stderr as WHO (with LOG, the process's output, when it exited)
# and returns 1.
wait_listen() {
  local i
  for i in $(seq 1 100); do
    if ! kill -0 "$2" 2>/dev/null; then
      echo "$4: the server exited at start:" >&2
      cat "$3" >&2
      return 1
    fi
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  echo "$4: the server did not listen on 127.0.0.1:$1 within 10 s" >&2
  return 1
}

# builds WHO BIN_A BIN_B: sets a and b to the two daemon builds' absolute
# paths for a comparison (ab.sh, together.sh), or says on stderr as WHO
# which one is not an executable and exits 2.
builds() {
  a=$(realpath "$2")
  b=$(realpath "$3")
  local bin
  for bin in "$a" "$b"; do
    if [ ! -x "$bin" ]; then
      echo "$1: $bin is not an executable" >&2
      exit 2
    fi
  done
}
