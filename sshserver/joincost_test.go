//go:build linux

package sshserver

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"snaked/game"
	"snaked/internal/cpuclock"
	"snaked/internal/testkit"
)

// BenchmarkJoinScreen measures a session waiting on the join screen (a
// bubbletea program) against one waiting in play, idle alike: 200
// sessions (user root, so each gets the join screen) sit for two seconds,
// type a name and sit in play for two seconds. It reports this process's
// CPU per session per second in each phase (join-us/s, play-us/s) and the
// goroutines per session (join-goroutines, play-goroutines). The clients
// run in this process too: they receive almost nothing on the join screen
// but every frame in play, so the play figures include their reading. A
// scenario, not a loop: run it with -benchtime 1x.
func BenchmarkJoinScreen(b *testing.B) {
	const n = 200
	for range b.N {
		joinScreenCost(b, n)
	}
}

func joinScreenCost(b *testing.B, n int) {
	cfg := testConfig(b)
	cfg.IdleTimeout = 0
	cfg.MaxSessions, cfg.MaxPerIP = n+10, n+10
	gc := game.DefaultConfig()
	gc.W, gc.H, gc.MaxSnakes, gc.Bots, gc.Seed = 1024, 256, n+16, 16, 7
	w, err := game.New(gc)
	if err != nil {
		b.Fatal(err)
	}
	h := start(b, cfg, w)
	g0 := runtime.NumGoroutine()
	tms := make([]*term, n)
	for i := range tms {
		tms[i] = play(b, h.dial("root"), 80, 24)
	}
	for _, tm := range tms {
		tm.waitScreen("Pick a nickname")
	}
	time.Sleep(time.Second) // settle
	gJoin := float64(runtime.NumGoroutine()-g0) / float64(n)
	const d = 2 * time.Second
	c0 := cpuclock.Process()
	time.Sleep(d)
	join := time.Duration(cpuclock.Process() - c0)
	for i, tm := range tms {
		tm.send(fmt.Sprintf("p%d\r", i))
	}
	if !testkit.Eventually(20*time.Second, func() bool { return int(h.srv.players.Load()) == n }) {
		b.Fatalf("%d of %d joined", h.srv.players.Load(), n)
	}
	time.Sleep(time.Second)
	gPlay := float64(runtime.NumGoroutine()-g0) / float64(n)
	c0 = cpuclock.Process()
	time.Sleep(d)
	playCPU := time.Duration(cpuclock.Process() - c0)
	per := func(c time.Duration) float64 { return float64(c.Microseconds()) / d.Seconds() / float64(n) }
	b.ReportMetric(per(join), "join-us/s")
	b.ReportMetric(per(playCPU), "play-us/s")
	b.ReportMetric(gJoin, "join-goroutines")
	b.ReportMetric(gPlay, "play-goroutines")
}
