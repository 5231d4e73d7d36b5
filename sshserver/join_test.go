package sshserver

import (
	"bytes"
	"runtime/pprof"
	"snaked/internal/testkit"
	"strings"
	"testing"
	"time"
)

// charmGoroutines counts the connection goroutines (pprof label
// "snaked":"conn") running code of the charm stack, the join screen
// program's.
func charmGoroutines(t *testing.T) int {
	t.Helper()
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, rec := range strings.Split(b.String(), "\n\n") {
		if strings.Contains(rec, `"snaked":"conn"`) && strings.Contains(rec, "github.com/charmbracelet/") {
			n++
		}
	}
	return n
}

// TestJoinHandoff: the join screen is a bubbletea program that the
// session feeds with the keys it decodes. A name typed with Enter and an
// arrow key in one write: the arrow steers the new snake (no keystroke is
// lost to the program that is ending), the program's goroutines are gone
// once play shows, and the terminal is out of the program's hands.
func TestJoinHandoff(t *testing.T) {
	h := start(t, testConfig(t), testWorld(t, 0))
	tm := play(t, h.dial("root"), 80, 24)
	tm.waitScreen("Pick a nickname")
	if !testkit.Eventually(2*time.Second, func() bool { return charmGoroutines(t) > 0 }) {
		t.Fatal("no goroutine of the join screen program while it shows")
	}
	on := charmGoroutines(t)
	tm.send("carl\r\x1b[A")
	tm.waitScreen("1 playing")
	if !testkit.Eventually(3*time.Second, func() bool { _, ok := testkit.SnakeNamed(h.w, "carl"); return ok }) {
		t.Fatal("carl did not join")
	}
	s := h.sessionOf("root")
	if s == nil {
		t.Fatal("no session")
	}
	if !testkit.Eventually(3*time.Second, s.steered.Load) {
		t.Fatal("the arrow typed right after Enter did not steer the snake")
	}
	if !testkit.Eventually(2*time.Second, func() bool { return charmGoroutines(t) == 0 }) {
		t.Fatalf("%d goroutines of the join screen program outlived it (%d while it showed)", charmGoroutines(t), on)
	}
	t.Logf("join screen program: %d goroutines while it shows, 0 after", on)
	tm.mu.Lock()
	alt := tm.vt.AltScreen()
	tm.mu.Unlock()
	if !alt {
		t.Error("play is not on the alternate screen after the join screen left its own")
	}
}

// TestJoinScreenResize: a window change on the join screen repaints it
// whole, centred on the new size, with nothing left of the old layout.
func TestJoinScreenResize(t *testing.T) {
	h := start(t, testConfig(t), testWorld(t, 0))
	tm := play(t, h.dial("root"), 80, 24)
	tm.waitScreen("Pick a nickname")
	tm.mu.Lock()
	tm.vt.Resize(100, 30)
	tm.mu.Unlock()
	if err := tm.sess.WindowChange(30, 100); err != nil {
		t.Fatal(err)
	}
	want := strings.Repeat(" ", (100-42)/2) + "│ Pick a nickname:"
	if !testkit.Eventually(5*time.Second, func() bool {
		s := tm.screen()
		return strings.Contains(s, want) && !strings.Contains(s, "?")
	}) {
		t.Fatalf("the join screen was not redrawn for 100x30 (want a row starting %q, no unknown cells):\n%s", want, tm.screen())
	}
}
