package sshserver

import (
	"bytes"
	"fmt"
	"regexp"
	"runtime/pprof"
	"snaked/internal/testkit"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// connGoroutines counts the goroutines carrying the server's connection
// label (the control loop, x/crypto's, reader, writer, keepalive) and names
// each by its outermost frame in this module or in x/crypto.
func connGoroutines(t *testing.T) (int, map[string]int) {
	t.Helper()
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
		t.Fatal(err)
	}
	head := regexp.MustCompile(`^(\d+) @`)
	frame := regexp.MustCompile(`^#\s+0x[0-9a-f]+\s+(\S+)`)
	total, owners := 0, map[string]int{}
	for _, rec := range strings.Split(b.String(), "\n\n") {
		lines := strings.Split(strings.TrimSpace(rec), "\n")
		m := head.FindStringSubmatch(lines[0])
		if m == nil || len(lines) < 2 || !strings.Contains(lines[1], `"snaked":"conn"`) {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		total += n
		// The owner is our outermost-but-one frame, else x/crypto's entry.
		owner := "?"
		for _, l := range lines[2:] {
			f := frame.FindStringSubmatch(l)
			if f == nil {
				continue
			}
			fn := f[1][:strings.LastIndex(f[1], "+")]
			if strings.HasPrefix(fn, "snaked/") || strings.HasPrefix(fn, "golang.org/x/crypto/") {
				owner = fn
			}
		}
		owners[owner] += n
	}
	return total, owners
}

// TestGoroutinesPerSession connects players and spectators and counts the
// daemon's goroutines per session: x/crypto's three (read loop, kex loop,
// mux loop) plus ours (control loop, reader, writer).
func TestGoroutinesPerSession(t *testing.T) {
	cfg := testConfig(t)
	cfg.KeepAlive = time.Hour // on, but no ping in flight during the count
	h := start(t, cfg, testWorld(t, 0))
	if n, _ := connGoroutines(t); n != 0 {
		t.Fatalf("%d connection goroutines before any connection", n)
	}
	const players, watchers = 8, 2
	for i := range players {
		play(t, h.dial(fmt.Sprintf("gp%d", i)), 80, 24).waitScreen("playing")
	}
	for range watchers {
		tm := play(t, h.dial("watch"), 80, 24)
		if !testkit.Eventually(10*time.Second, func() bool { return tm.bytes() > 500 }) {
			t.Fatal("no frames for the spectator")
		}
	}
	var n int
	var owners map[string]int
	testkit.Eventually(5*time.Second, func() bool {
		n, owners = connGoroutines(t)
		return n == 6*(players+watchers)
	})
	var list []string
	for k, v := range owners {
		list = append(list, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(list)
	t.Logf("%d sessions: %d connection goroutines (%.1f per session): %s",
		players+watchers, n, float64(n)/float64(players+watchers), strings.Join(list, " "))
	if n != 6*(players+watchers) {
		t.Errorf("%d goroutines for %d sessions, want 6 per session", n, players+watchers)
	}
}
