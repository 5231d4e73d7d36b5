//go:build !unix

package game

func cpuNanos() int64 { return 0 }
