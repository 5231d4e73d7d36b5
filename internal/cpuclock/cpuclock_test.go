package cpuclock

import (
	"runtime"
	"testing"
)

// TestThread: on Linux the thread's clock advances with the thread's
// work (a millisecond of spinning reads at least a millisecond) and the
// cost of a reading is positive and small; elsewhere it reads -1 and the
// cost is 0.
func TestThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0 := Thread()
	if runtime.GOOS != "linux" {
		if c0 != -1 || Cost() != 0 {
			t.Fatalf("Thread = %d, Cost = %d off Linux, want -1 and 0", c0, Cost())
		}
		return
	}
	if c0 < 0 {
		t.Fatalf("Thread = %d", c0)
	}
	x := 0
	for i := 0; i < 20_000_000 && Thread()-c0 < 1_000_000; i++ {
		x += i
	}
	if d := Thread() - c0; d < 1_000_000 {
		t.Fatalf("after spinning, the thread's clock moved %d ns (x %d)", d, x)
	}
	if c := Cost(); c <= 0 || c >= 100_000 {
		t.Fatalf("Cost = %d ns, want (0, 100us)", c)
	}
}

// spin works on the calling thread until read has moved by at least d
// from c0 (or a bound of iterations passes) and returns how far it moved.
func spin(read func() int64, c0, d int64) int64 {
	x := 0
	for i := 0; i < 200_000_000 && read()-c0 < d; i++ {
		x += i
	}
	_ = x
	return read() - c0
}

// TestThreadOrWall: it advances with a locked goroutine's work; where
// the thread's clock reads, it reads the same clock as Thread (a reading
// between two of Thread's lies between them).
func TestThreadOrWall(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0 := ThreadOrWall()
	if d := spin(ThreadOrWall, c0, 1_000_000); d < 1_000_000 {
		t.Fatalf("after spinning, ThreadOrWall moved %d ns", d)
	}
	if Thread() < 0 {
		return
	}
	a := Thread()
	b := ThreadOrWall()
	c := Thread()
	if a > b || b > c {
		t.Fatalf("Thread %d, ThreadOrWall %d, Thread %d: not the thread's clock", a, b, c)
	}
}
