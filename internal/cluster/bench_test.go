package cluster

import (
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"snaked/game"
	"snaked/internal/testkit"
)

// BenchmarkSimRound times the simulation's rounds (Step, then Ticked: the
// delta encoded and published, snapshot requests served) on the default
// world (2048x512) with 2,500 bots, an embedded NATS server on loopback and
// one follower, the rounds started every 10 ms (the daemon's are 100 ms
// apart; 10 ms keeps the benchmark short and still leaves the other work
// room between rounds). In "asked" a second client asks for a snapshot
// before every tenth round, as gateways that keep falling behind would
// (a real one asks about once a second while it resyncs, so every tenth
// round of 100 ms is already a crowd of them). It reports the rounds'
// median, p99 and longest (round-p50-us, round-p99-us, round-max-us) and
// the snapshots written per round.
func BenchmarkSimRound(b *testing.B) {
	for _, asked := range []bool{false, true} {
		name := "quiet"
		if asked {
			name = "asked"
		}
		b.Run(name, func(b *testing.B) {
			ns, err := Embed("127.0.0.1:0", Auth{})
			if err != nil {
				b.Fatal(err)
			}
			defer ns.Shutdown()
			quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
			conn := func(name string) *nats.Conn {
				nc, err := Connect(Options{URL: ns.ClientURL(), Name: name, Log: quiet, Prefix: "bench", Gateway: name})
				if err != nil {
					b.Fatal(err)
				}
				return nc
			}
			sim, gw, asker := conn("sim"), conn("gw"), conn("asker")
			defer sim.Close()
			defer gw.Close()
			defer asker.Close()
			gc := game.DefaultConfig()
			gc.Bots, gc.MaxSnakes = 2500, 3000
			w, err := game.New(gc)
			if err != nil {
				b.Fatal(err)
			}
			tick := uint64(0)
			for range 100 {
				tick++
				w.Step(tick)
			}
			pub, err := NewPublisher(sim, w, "bench", 1)
			if err != nil {
				b.Fatal(err)
			}
			defer pub.Close()
			f, err := NewFollower(gw, "bench", "gw", 0, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			round := func() time.Duration {
				tick++
				t0 := time.Now()
				w.Step(tick)
				if err := pub.Ticked(); err != nil {
					b.Fatal(err)
				}
				return time.Since(t0)
			}
			if !testkit.Eventually(10*time.Second, func() bool { round(); return f.Synced() }) {
				b.Fatal("the follower never synced")
			}
			// the asker's inbox takes the snapshots and drops them
			inbox := asker.NewInbox()
			sub, err := asker.Subscribe(inbox, func(*nats.Msg) {})
			if err != nil {
				b.Fatal(err)
			}
			defer sub.Unsubscribe()
			if err := sub.SetPendingLimits(-1, -1); err != nil {
				b.Fatal(err)
			}
			snaps := pub.Stats().Snapshots
			rounds := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			const period = 10 * time.Millisecond
			next := time.Now()
			for i := range b.N {
				if asked && i%10 == 0 {
					if err := asker.PublishRequest("bench.gw.asker.snapshot", inbox, nil); err != nil {
						b.Fatal(err)
					}
				}
				time.Sleep(time.Until(next))
				next = next.Add(period)
				rounds = append(rounds, round())
			}
			b.StopTimer()
			slices.Sort(rounds)
			q := func(p float64) float64 { return float64(rounds[int(p*float64(len(rounds)-1))].Microseconds()) }
			b.ReportMetric(q(0.5), "round-p50-us")
			b.ReportMetric(q(0.99), "round-p99-us")
			b.ReportMetric(q(1), "round-max-us")
			b.ReportMetric(float64(pub.Stats().Snapshots-snaps)/float64(b.N), "snapshots/round")
		})
	}
}
