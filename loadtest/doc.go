// Package loadtest owns the scripted SSH swarm that sizes a snaked server:
// clients that connect the way OpenSSH does and play like people, the
// measurements of what those players feel (handshake time, frame gaps,
// bytes per second, disconnects, screen sanity), the CPU and memory of the
// swarm and of the daemon under test, and a bare SSH "transport floor"
// server that the daemon's cost is compared against in the same run.
// It talks to the daemon only over SSH, like any player; the method is in
// docs/BENCHMARKS.md, "Sessions per core".
package loadtest
