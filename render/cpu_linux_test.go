//go:build linux

package render

import "syscall"

// threadNanos is the CPU time (user + system) the calling OS thread has
// used; with runtime.LockOSThread it times one goroutine's work and is
// steadier than wall time on a shared, loaded machine.
func threadNanos() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
