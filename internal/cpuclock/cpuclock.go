// Package cpuclock reads the calling thread's CPU clock: with the
// goroutine locked to its thread (runtime.LockOSThread) it times one
// goroutine's work, leaving out the time other processes and this
// process's other threads take, which on a shared machine makes it
// steadier than wall time.
package cpuclock

import (
	"runtime"
	"sync"
)

// Cost is what two Thread calls in a row read, the least of a few tries:
// the reading's own cost (a system call each), which a sample takes off;
// 0 where Thread cannot read.
var Cost = sync.OnceValue(func() int64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	least := int64(-1)
	for range 16 {
		a := Thread()
		b := Thread()
		if d := b - a; a >= 0 && d >= 0 && (least < 0 || d < least) {
			least = d
		}
	}
	return max(least, 0)
})
