//go:build linux

package sshserver

import (
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// threadCPU returns the CPU time the calling thread has used, in
// nanoseconds, or -1 when it cannot be read.
func threadCPU() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return -1
	}
	return ts.Nano()
}

// clockCost is what two threadCPU calls in a row read, the least of a few
// tries: the reading's own cost (a system call each; about 1.3 us for the
// pair on the virtual machine of docs/BENCHMARKS.md), which a
// sample takes off.
var clockCost = sync.OnceValue(func() int64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	least := int64(-1)
	for range 16 {
		a := threadCPU()
		b := threadCPU()
		if d := b - a; a >= 0 && d >= 0 && (least < 0 || d < least) {
			least = d
		}
	}
	return max(least, 0)
})
