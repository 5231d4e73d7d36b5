//go:build linux

package cluster

import (
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"snaked/game"
	"snaked/internal/cpuclock"
)

// BenchmarkFollowRegions runs a world of 10,000 bots (2048x1250, as
// package wire's BenchmarkRegions) with its publisher on an embedded NATS
// on loopback and two followers: one on the whole deltas, one on regions
// with a free camera whose regions' margins make a tenth of the world
// (650x398 pixels). Each op is a round: Step, then Ticked, then the wait
// (polling every 100 us) until both followers have the tick; ns/op is all
// of it, not a cost of following. It reports the bytes each
// follower received a tick (full-bytes/tick, regions-bytes/tick and their
// ratio, regions-%; stream headers included, snapshots after the first
// ticks not), the regions followed, and Ticked's time on the thread that
// calls it (ticked-cpu-us: the delta, its regional form and their
// publishing).
func BenchmarkFollowRegions(b *testing.B) {
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
	sim, gf, gr := conn("sim"), conn("gwfull"), conn("gwreg")
	defer sim.Close()
	defer gf.Close()
	defer gr.Close()
	w, err := game.New(game.Config{W: 2048, H: 1250, MaxSnakes: 10000, Bots: 10000, StartLen: 8, Seed: 7})
	if err != nil {
		b.Fatal(err)
	}
	tick := uint64(0)
	for range 200 {
		tick++
		w.Step(tick)
	}
	pub, err := NewPublisher(sim, w, "bench", 9)
	if err != nil {
		b.Fatal(err)
	}
	defer pub.Close()
	full, err := NewFollower(gf, "bench", "gwfull", 0, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer full.Close()
	reg, err := NewRegionFollower(gr, "bench", "gwreg", 0, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer reg.Close()
	reg.SetCameras(func(dst []game.Camera) []game.Camera {
		return append(dst, game.Camera{At: game.Point{X: 1024, Y: 625}, Cols: 600, Rows: 175})
	})
	at := func(f interface{ Acquire() *game.View }) bool {
		v := f.Acquire()
		defer v.Release()
		return v.Tick == tick
	}
	round := func() time.Duration {
		tick++
		w.Step(tick)
		c0 := time.Duration(cpuclock.Thread())
		if err := pub.Ticked(); err != nil {
			b.Fatal(err)
		}
		c := time.Duration(cpuclock.Thread()) - c0
		for end := time.Now().Add(10 * time.Second); !(full.Synced() && reg.Synced() && at(full) && at(reg)); time.Sleep(100 * time.Microsecond) {
			if time.Now().After(end) {
				b.Fatalf("tick %d: the followers did not follow: %+v %+v", tick, full.Stats(), reg.Stats())
			}
		}
		return c
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for range 30 { // the snapshots, the regions
		round()
	}
	f0, r0 := full.Stats().Bytes, reg.Stats().Bytes
	var cpu time.Duration
	b.ResetTimer()
	for range b.N {
		cpu += round()
	}
	b.StopTimer()
	fb, rb := float64(full.Stats().Bytes-f0)/float64(b.N), float64(reg.Stats().Bytes-r0)/float64(b.N)
	b.ReportMetric(fb, "full-bytes/tick")
	b.ReportMetric(rb, "regions-bytes/tick")
	b.ReportMetric(100*rb/fb, "regions-%")
	b.ReportMetric(float64(reg.Followed()), "regions")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "ticked-cpu-us")
}
