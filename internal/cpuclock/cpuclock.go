// Package cpuclock reads CPU clocks for measurements: the calling
// thread's, which with the goroutine locked to its thread
// (runtime.LockOSThread) times one goroutine's work, leaving out the time
// other processes and this process's other threads take (on a shared
// machine, steadier than wall time), and the whole process's.
package cpuclock

import (
	"runtime"
	"sync"
	"time"
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

// ThreadOrWall returns Thread's reading where the thread's clock can be
// read and the wall clock's nanoseconds elsewhere: for a benchmark that
// compares stretches of one locked goroutine's work by their differences,
// steadier on Linux and still a figure on other systems.
func ThreadOrWall() int64 {
	if c := Thread(); c >= 0 {
		return c
	}
	return time.Now().UnixNano()
}
