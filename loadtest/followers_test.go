package loadtest

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"snaked/game"
	"snaked/internal/cluster"
)

// TestFollow: headless followers on a simulation's stream take in its
// regions for their cameras, and a non-loopback NATS is refused.
func TestFollow(t *testing.T) {
	if _, err := Follow(context.Background(), FollowOptions{NATS: "nats://192.0.2.1:4222", N: 1, Cameras: 1}); err == nil {
		t.Error("a NATS URL off loopback was taken")
	}
	ns, err := cluster.Embed("127.0.0.1:0", cluster.Auth{})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Shutdown()
	nc, err := cluster.Connect(cluster.Options{URL: ns.ClientURL(), Name: "sim"})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	cfg := game.DefaultConfig()
	cfg.W, cfg.H, cfg.MaxSnakes, cfg.BotTarget, cfg.Seed = 2048, 1024, 1024, 400, 3
	w, err := game.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	pub, err := cluster.NewPublisher(nc, w, "", 7)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { // the simulation's clock, 20 ticks a second
		defer close(done)
		tk := time.NewTicker(50 * time.Millisecond)
		defer tk.Stop()
		for tick := uint64(1); ; tick++ {
			w.Step(tick)
			if err := pub.Ticked(); err != nil {
				t.Error(err)
			}
			select {
			case <-stop:
				return
			case <-tk.C:
			}
		}
	}()
	defer func() { close(stop); <-done }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var ready atomic.Int32
	r, err := Follow(ctx, FollowOptions{NATS: ns.ClientURL(), N: 2, Cameras: 2, Duration: time.Second, Seed: 1,
		Ready: func() { ready.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	if ready.Load() != 1 {
		t.Errorf("Ready called %d times, want once", ready.Load())
	}
	if r.Followers != 2 || r.Applied == 0 || r.Bytes == 0 {
		t.Errorf("followers took in nothing: %+v", r)
	}
	if r.Share <= 0 || r.Share >= 1 {
		t.Errorf("two 80x24 cameras on a 2048x1024 world follow %.2f of its regions", r.Share)
	}
	t.Log(r)
}

// TestFollowReportString: a report of no time and no followers reads as
// zeros, never NaN or Inf; a real one divides its bytes by both.
func TestFollowReportString(t *testing.T) {
	if s := (FollowReport{Bytes: 100}).String(); strings.Contains(s, "NaN") || strings.Contains(s, "Inf") || !strings.Contains(s, "0 B/s each (0.0 KB/s all)") {
		t.Fatalf("empty report: %q", s)
	}
	if s := (FollowReport{Followers: 2, Bytes: 8000, Seconds: 2}).String(); !strings.Contains(s, "2000 B/s each (4.0 KB/s all)") {
		t.Fatalf("report: %q", s)
	}
}
