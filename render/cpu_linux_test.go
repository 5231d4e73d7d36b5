//go:build linux

package render

import "golang.org/x/sys/unix"

// threadNanos is the CPU time (user + system) the calling OS thread has
// used; with runtime.LockOSThread it times one goroutine's work and is
// steadier than wall time on a shared, loaded machine. It reads the
// thread's CPU clock, which the kernel brings up to date on the read
// (getrusage's thread times can be a scheduler tick behind).
func threadNanos() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return ts.Nano()
}
