//go:build unix

package cpuclock

import "testing"

// TestProcess: the process's clock advances with the work of any of its
// threads (a millisecond of spinning reads at least a millisecond).
func TestProcess(t *testing.T) {
	p0 := Process()
	if p0 < 0 {
		t.Fatalf("Process = %d", p0)
	}
	if d := spin(Process, p0, 1_000_000); d < 1_000_000 {
		t.Fatalf("after spinning, the process's clock moved %d ns", d)
	}
}
