package game

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The geometry BenchmarkGroups judges coverage by: the regions a
// simulation publishes a world of AutoSize(100000) in (cluster.Regions,
// 384x192 pixels), the margin a regions follower adds around a camera
// (its regionEnter) and a camera's playfield on an 80x24 terminal.
const (
	groupRegionW, groupRegionH = 384, 192
	groupEnter                 = 24
)

// groupResult is what one run of BenchmarkGroups saw.
type groupResult struct {
	regions, covered float64 // the world's regions; those the people's cameras needed, mean over the samples
	onScreen         float64 // other live heads on a live person's screen, mean over people and samples
	spawns, early    int     // people's lives started; those ended within earlyTicks
	deaths, kills    int     // people's deaths, and the kills people made
	lengthSum, lives int     // lengths at death or at the end, over the lives measured
	personTicks      int     // ticks people were in the world, summed over them
}

// earlyTicks is how soon a death after a spawn counts as a spawn death.
const earlyTicks = 10 * TicksPerSecond

// groupRun runs a world of AutoSize(25000) filled with bots, into which
// n people come one a tick, all in one JoinNear group when grouped (one
// gateway's players with -spawn-near-gateway), driven by the benchmarks'
// script, for ticks ticks after the warm-up. Every 50 ticks after the
// last has come it samples the regions their cameras cover (with the
// follower's margin) and the heads on their screens.
func groupRun(tb testing.TB, grouped bool, n, ticks int) groupResult {
	W, H := AutoSize(25000)
	w, err := New(Config{W: W, H: H, MaxSnakes: 25000 + n, Bots: 16, BotTarget: 25000, Seed: 7, StartLen: benchPlayerLen})
	if err != nil {
		tb.Fatal(err)
	}
	for t := 0; t < 200; t++ {
		w.Step(w.tick + 1)
	}
	g := 0
	if grouped {
		g = 1
	}
	p := &players{rng: rand.New(rand.NewPCG(7, 8))}
	rw, rh := (W+groupRegionW-1)/groupRegionW, (H+groupRegionH-1)/groupRegionH
	var r groupResult
	r.regions = float64(rw * rh)
	need := make([]bool, rw*rh)
	alive := map[ID]uint64{} // live people by the tick of their spawn
	samples, seen, looks := 0, 0, 0
	for t := 0; t < ticks; t++ {
		if len(p.ids) < n {
			id, _, err := w.JoinNear(fmt.Sprintf("p%d", len(p.ids)), g)
			if err != nil {
				tb.Fatal(err)
			}
			p.ids = append(p.ids, id)
		}
		p.act(w)
		w.Step(w.tick + 1)
		r.personTicks += len(p.ids)
		v := w.Acquire()
		for _, id := range p.ids {
			s, ok := v.Snake(id)
			if !ok {
				continue
			}
			at, was := alive[id]
			switch {
			case s.Alive && !was:
				alive[id] = v.Tick
				r.spawns++
			case !s.Alive && was:
				delete(alive, id)
				r.deaths++
				r.lengthSum += s.Length
				r.lives++
				if s.DeathTick < at+earlyTicks {
					r.early++
				}
			}
		}
		for _, k := range v.Kills {
			if k.Tick == v.Tick && k.KillerSlot >= 0 && !k.KillerBot {
				r.kills++
			}
		}
		if len(p.ids) == n && t%50 == 0 {
			clear(need)
			for _, id := range p.ids {
				s, ok := v.Snake(id)
				if !ok || !s.Alive {
					continue
				}
				h := v.Heads[id.Slot()]
				markRegions(need, rw, rh, W, H, h)
				seen += w.near.scan(h.X, h.Y, screenW/2, screenH/2, true) - 1
				looks++
			}
			for _, x := range need {
				if x {
					r.covered++
				}
			}
			samples++
		}
		v.Release()
	}
	v := w.Acquire()
	for id := range alive {
		if s, ok := v.Snake(id); ok {
			r.lengthSum += s.Length
			r.lives++
		}
	}
	v.Release()
	r.covered /= float64(max(samples, 1))
	r.onScreen = float64(seen) / float64(max(looks, 1))
	return r
}

// markRegions marks in need (rw x rh regions of a W x H world) the
// regions within groupEnter pixels of the playfield of a camera on head.
func markRegions(need []bool, rw, rh, W, H int, head Point) {
	x0, x1 := head.X-screenW/2-groupEnter, head.X+screenW/2+groupEnter
	y0, y1 := head.Y-screenH/2-groupEnter, head.Y+screenH/2+groupEnter
	for y := floorDiv(y0, groupRegionH); y <= floorDiv(y1, groupRegionH); y++ {
		for x := floorDiv(x0, groupRegionW); x <= floorDiv(x1, groupRegionW); x++ {
			rx, ry := wrap(x*groupRegionW, W)/groupRegionW, wrap(y*groupRegionH, H)/groupRegionH
			need[ry*rw+rx] = true
		}
	}
}

func floorDiv(a, b int) int {
	if a < 0 {
		return -((-a + b - 1) / b)
	}
	return a / b
}

// BenchmarkGroups measures what -spawn-near-gateway does, in a world of
// AutoSize(25000) (a quarter of the 100,000-player world, 128 regions)
// filled with bots, into which one gateway's players come one a tick and
// play the benchmarks' script for 5 minutes: 625 of them (2.5 % of the
// snakes, as a gateway of 2,500 in 100,000), 156 and 39. It reports the
// share of the world's regions their cameras need (covered, the mean of
// samples after the last has come), and the game as they have it: other
// heads on their screens, the share of lives that end within 10 s of the
// spawn, deaths and kills a person-minute, and the mean length of a life.
// One op is one run of a world.
func BenchmarkGroups(b *testing.B) {
	const ticks = 3000
	for _, c := range []struct {
		n       int
		grouped bool
	}{{625, false}, {625, true}, {156, false}, {156, true}, {39, false}, {39, true}} {
		n, grouped := c.n, c.grouped
		b.Run(fmt.Sprintf("people=%d/grouped=%v", n, grouped), func(b *testing.B) {
			var r groupResult
			for i := 0; i < b.N; i++ {
				r = groupRun(b, grouped, n, ticks)
			}
			minutes := float64(r.personTicks) / (60 * TicksPerSecond)
			b.ReportMetric(100*r.covered/r.regions, "covered-%")
			b.ReportMetric(r.onScreen, "heads-on-screen")
			b.ReportMetric(100*float64(r.early)/float64(max(r.spawns, 1)), "early-deaths-%")
			b.ReportMetric(float64(r.deaths)/minutes, "deaths/min")
			b.ReportMetric(float64(r.kills)/minutes, "kills/min")
			b.ReportMetric(float64(r.lengthSum)/float64(max(r.lives, 1)), "life-len")
		})
	}
}
