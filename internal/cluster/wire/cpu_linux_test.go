//go:build linux

package wire

import (
	"syscall"
	"unsafe"
)

// threadNanos is the CPU time of the calling OS thread (the caller locks
// its goroutine to it): on a shared machine it leaves out the time other
// processes and this process's other threads (GC workers) take.
func threadNanos() int64 {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}
