//go:build linux

package sshserver

import (
	"flag"
	"fmt"
	"runtime"
	"testing"
	"time"

	"snaked/game"
	"snaked/internal/testkit"
)

// joinCostN turns TestJoinScreenCost into a measurement of that many
// sessions (docs/BENCHMARKS.md): go test -run TestJoinScreenCost -v ./sshserver/ -args -joincost 200
var joinCostN = flag.Int("joincost", 0, "sessions for TestJoinScreenCost's measurement (0: skip it)")

// TestJoinScreenCost measures a session waiting on the join screen (a
// bubbletea program) against one waiting in play, idle alike: n sessions
// (user root, so each gets the join screen) sit for two seconds, type a
// name and sit in play for two seconds. It logs this process's CPU per
// session per second in each phase and the goroutines per session. The
// clients run in this process too: they receive almost nothing on the join
// screen but every frame in play, so the play figure includes their
// reading. It asserts nothing; without -joincost it does not run.
func TestJoinScreenCost(t *testing.T) {
	n := *joinCostN
	if n == 0 {
		t.Skip("a measurement: -joincost N")
	}
	cfg := testConfig(t)
	cfg.IdleTimeout = 0
	cfg.MaxSessions, cfg.MaxPerIP = n+10, n+10
	gc := game.DefaultConfig()
	gc.W, gc.H, gc.MaxSnakes, gc.Bots, gc.Seed = 1024, 256, n+16, 16, 7
	w, err := game.New(gc)
	if err != nil {
		t.Fatal(err)
	}
	h := start(t, cfg, w)
	g0 := runtime.NumGoroutine()
	tms := make([]*term, n)
	for i := range tms {
		tms[i] = play(t, h.dial("root"), 80, 24)
	}
	for _, tm := range tms {
		tm.waitScreen("Pick a nickname")
	}
	time.Sleep(time.Second) // settle
	gJoin := float64(runtime.NumGoroutine()-g0) / float64(n)
	const d = 2 * time.Second
	c0 := cpuTime()
	time.Sleep(d)
	join := cpuTime() - c0
	for i, tm := range tms {
		tm.send(fmt.Sprintf("p%d\r", i))
	}
	if !testkit.Eventually(20*time.Second, func() bool { return int(h.srv.players.Load()) == n }) {
		t.Fatalf("%d of %d joined", h.srv.players.Load(), n)
	}
	time.Sleep(time.Second)
	gPlay := float64(runtime.NumGoroutine()-g0) / float64(n)
	c0 = cpuTime()
	time.Sleep(d)
	playCPU := cpuTime() - c0
	per := func(c time.Duration) float64 { return float64(c.Microseconds()) / d.Seconds() / float64(n) }
	t.Logf("%d sessions: join screen %.0f us CPU per session per second, %.2f goroutines per session (clients included); play %.0f us, %.2f goroutines",
		n, per(join), gJoin, per(playCPU), gPlay)
}
