//go:build unix

package cpuclock

import "syscall"

// Process returns the CPU time (user + system) the whole process has
// used, in nanoseconds, or -1 when it cannot be read: the figure for
// work spread over goroutines (a server's sessions), or done where other
// threads (the GC's workers) are meant to count.
func Process() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
