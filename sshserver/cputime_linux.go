//go:build linux

package sshserver

import "golang.org/x/sys/unix"

// threadCPU returns the CPU time the calling thread has used, in
// nanoseconds, or -1 when it cannot be read.
func threadCPU() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return -1
	}
	return ts.Nano()
}
