package wire

import (
	"fmt"
	"runtime"
	"snaked/internal/cpuclock"
	"testing"
	"time"
)

// regionSizes are the region sizes the regions benchmarks compare.
var regionSizes = [][2]int{{128, 64}, {256, 128}, {512, 256}}

// BenchmarkRegions measures, on BenchmarkDelta's world of 10,000 bots
// (2048x1250), what a follower whose cameras cover a tenth of the world
// (a 648x395 rectangle at its middle) receives and spends each tick on
// the regional form against the whole delta, for each region size:
//
//   - follow: an op is one of 100 recorded ticks (the first 10 after
//     each pair of new replicas untimed: their view buffers are copied
//     whole at first) applied side by side: Replica.Apply of its whole
//     delta, and Replica.ApplyRegions of its global message and the
//     messages of the regions the rectangle touches. full-cpu-ns/tick
//     and regions-cpu-ns/tick are the CPU time of the benchmark's
//     (locked) thread in each, which leaves out other processes, and
//     cpu-% the second's share of the first; full-bytes/tick and
//     regions-bytes/tick what each receives (bytes-% the share),
//     global-bytes/tick the global message, regions the regions
//     followed, area-% their share of the world, msgs/tick the regional
//     messages a tick. The two replicas take the ticks by turns, so each
//     starts its tick with the caches as the other left them: the whole
//     replica's tick evicts what the regional one would have kept, as a
//     gateway's other work between ticks would.
//   - apart: the same, but each replica takes its 90 timed ticks in a
//     row, one replica's then the other's (which first, by turns): each
//     starts its tick with its own last tick's data still cached, as on
//     a core doing nothing else between ticks.
//   - encode=full and encode=split: what the simulation pays to write
//     each tick's delta (Step, then AppendDelta, or AppendDeltaSplit,
//     which writes the delta and its regional form); enc-ns the encoding
//     alone (enc-cpu-ns in the thread's CPU time), subjects/tick the
//     messages published (the delta, the global message, the regions').
func BenchmarkRegions(b *testing.B) {
	c := benchCase{bots: true, n: 10000, area: 1}
	for _, sz := range regionSizes {
		rw, rh := sz[0], sz[1]
		b.Run(fmt.Sprintf("region=%dx%d", rw, rh), func(b *testing.B) {
			w, _ := benchWorld(b, c)
			e := NewEncoder(w)
			s, err := NewSplit(e, rw, rh)
			if err != nil {
				b.Fatal(err)
			}
			g := s.Regions()
			chunks, err := Snapshot(w, 1<<20)
			if err != nil {
				b.Fatal(err)
			}
			// the camera rectangle: a tenth of the world, at its middle
			cw, ch := 648, 395
			x0, y0 := (g.W-cw)/2, (g.H-ch)/2
			follow := map[int]bool{}
			for y := y0; y < y0+ch; y++ {
				for x := x0; x < x0+cw; x++ {
					follow[g.At(x, y)] = true
				}
			}
			area := 0
			for r := range follow {
				_, _, fw, fh := g.Rect(r)
				area += fw * fh
			}
			const ticks, warm = 100, 10
			full := make([][]byte, ticks)
			global := make([][]byte, ticks)
			regions := make([][][]byte, ticks)
			var fullBytes, regBytes, globalBytes, msgs int
			for k := range ticks {
				w.Step(w.Feed().Tick() + 1)
				d, err := e.AppendDeltaSplit(nil, s)
				if err != nil {
					b.Fatal(err)
				}
				full[k], global[k] = d, append([]byte(nil), s.Global()...)
				fullBytes += len(d)
				globalBytes += len(global[k])
				regBytes += len(global[k])
				msgs++
				for _, r := range s.Changed() {
					if follow[int(r)] {
						m := append([]byte(nil), s.Region(int(r))...)
						regions[k] = append(regions[k], m)
						regBytes += len(m)
						msgs++
					}
				}
			}
			newReplica := func(regional bool) *Replica {
				r, err := NewReplica(chunks)
				if err != nil {
					b.Fatal(err)
				}
				if regional {
					if err := r.FollowRegions(rw, rh); err != nil {
						b.Fatal(err)
					}
					for k := range follow {
						r.Follow(k)
					}
				}
				return r
			}
			// follow: each op is one recorded tick applied to a replica
			// on the whole deltas and to one on regions, in an order
			// that alternates, each timed by the thread's CPU clock;
			// every ticks-warm ops, two fresh replicas take the first
			// warm ticks untimed (their view buffers are copied whole
			// at first).
			// follow alternates the two replicas tick by tick, so each
			// starts its tick from what the other left in the caches;
			// apart alternates them every ticks-warm ticks, so each
			// keeps its own (see the doc comment above).
			for _, apart := range []bool{false, true} {
				name := "follow"
				if apart {
					name = "apart"
				}
				b.Run(name, func(b *testing.B) {
					if cpuclock.Thread() < 0 {
						b.Skip("no thread CPU clock here")
					}
					var whole, reg *Replica
					var cw, cr int64
					cost := cpuclock.Cost() // a reading of the clock
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					// one applies tick k to the whole replica (which false)
					// or the regional one, and adds its CPU time
					one := func(which bool, k int) {
						c0 := cpuclock.Thread()
						var err error
						if !which {
							err = whole.Apply(full[k])
							cw += cpuclock.Thread() - c0 - cost
						} else {
							err = reg.ApplyRegions(global[k], regions[k])
							cr += cpuclock.Thread() - c0 - cost
						}
						if err != nil {
							b.Fatal(err)
						}
					}
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						k := warm + i%(ticks-warm)
						if k == warm {
							b.StopTimer()
							whole, reg = newReplica(false), newReplica(true)
							for j := range warm {
								if err := whole.Apply(full[j]); err != nil {
									b.Fatal(err)
								}
								if err := reg.ApplyRegions(global[j], regions[j]); err != nil {
									b.Fatal(err)
								}
							}
							b.StartTimer()
							if apart {
								// the whole round at once: one replica's
								// ticks, then the other's, first by turns
								n := min(ticks-warm, b.N-i)
								first := i/(ticks-warm)%2 == 1
								for _, which := range [2]bool{first, !first} {
									for j := range n {
										one(which, warm+j)
									}
								}
								i += n - 1
								continue
							}
						}
						for j := range 2 {
							one((i+j)%2 == 1, k)
						}
					}
					b.ReportMetric(float64(cw)/float64(b.N), "full-cpu-ns/tick")
					b.ReportMetric(float64(cr)/float64(b.N), "regions-cpu-ns/tick")
					b.ReportMetric(100*float64(cr)/float64(cw), "cpu-%")
					b.ReportMetric(float64(fullBytes)/ticks, "full-bytes/tick")
					b.ReportMetric(float64(regBytes)/ticks, "regions-bytes/tick")
					b.ReportMetric(100*float64(regBytes)/float64(fullBytes), "bytes-%")
					b.ReportMetric(float64(globalBytes)/ticks, "global-bytes/tick")
					b.ReportMetric(float64(len(follow)), "regions")
					b.ReportMetric(100*float64(area)/float64(g.W*g.H), "area-%")
					b.ReportMetric(float64(msgs)/ticks, "msgs/tick")
				})
			}
			for _, split := range []bool{false, true} {
				name := "encode=full"
				if split {
					name = "encode=split"
				}
				b.Run(name, func(b *testing.B) {
					w, _ := benchWorld(b, c)
					e := NewEncoder(w)
					s, err := NewSplit(e, rw, rh)
					if err != nil {
						b.Fatal(err)
					}
					buf := make([]byte, 0, 1<<20)
					var enc time.Duration
					var cpu int64
					subjects := 0
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						w.Step(w.Feed().Tick() + 1)
						c0 := cpuclock.Thread()
						t0 := time.Now()
						if split {
							buf, err = e.AppendDeltaSplit(buf[:0], s)
							subjects += 2 + len(s.Changed())
						} else {
							buf, err = e.AppendDelta(buf[:0])
							subjects++
						}
						enc += time.Since(t0)
						cpu += cpuclock.Thread() - c0
						if err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(enc)/float64(b.N), "enc-ns")
					b.ReportMetric(float64(cpu)/float64(b.N), "enc-cpu-ns")
					b.ReportMetric(float64(subjects)/float64(b.N), "subjects/tick")
				})
			}
		})
	}
}
