//go:build !linux

package sshserver

// threadCPU returns -1: the thread's CPU time is read on Linux only.
func threadCPU() int64 { return -1 }

// clockCost is 0: there is no reading to take off.
func clockCost() int64 { return 0 }
