//go:build !unix

package cpuclock

// Process returns -1: the process's CPU time is read on Unix only.
func Process() int64 { return -1 }
