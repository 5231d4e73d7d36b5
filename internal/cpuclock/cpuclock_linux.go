//go:build linux

package cpuclock

import "golang.org/x/sys/unix"

// Thread returns the CPU time the calling thread has used, in
// nanoseconds, or -1 when it cannot be read. The kernel brings the
// thread's clock up to date on the read.
func Thread() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return -1
	}
	return ts.Nano()
}
