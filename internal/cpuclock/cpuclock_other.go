//go:build !linux

package cpuclock

// Thread returns -1: the thread's CPU time is read on Linux only.
func Thread() int64 { return -1 }
