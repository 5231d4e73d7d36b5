//go:build unix

package game

import "syscall"

// cpuNanos is the CPU time (user + system) this process has used. On a
// shared, loaded machine it is steadier than wall time.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
