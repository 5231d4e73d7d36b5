//go:build !unix

package cpuclock

import "testing"

// TestProcess: off Unix the process's clock reads -1.
func TestProcess(t *testing.T) {
	if p := Process(); p != -1 {
		t.Fatalf("Process = %d, want -1 off Unix", p)
	}
}
