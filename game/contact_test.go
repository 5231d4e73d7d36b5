package game

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// The window a newcomer is judged by: an 80x24 terminal's playfield.
const screenW, screenH = 80, 44

// contactCase is one world for the time-to-first-contact measurement.
type contactCase struct {
	name string
	cfg  Config
}

// contactResult is one newcomer's experience.
type contactResult struct {
	ticks  int     // ticks from its first tick alive until another head was on its screen; cap if never
	onScr  float64 // mean number of other snakes with a pixel on its screen, over the watched ticks
	joined bool    // it got a spawn at all
}

// onScreen reports whether p lies in the screenW x screenH window centred
// on c (x in c.X-40..c.X+39, y in c.Y-22..c.Y+21), on the torus.
func onScreen(v *View, c, p Point) bool {
	dx := wrap(p.X-c.X+screenW/2, v.W)
	dy := wrap(p.Y-c.Y+screenH/2, v.H)
	return dx < screenW && dy < screenH
}

// contactRun builds a world from cfg, steps it warm ticks, joins one player
// driven by the benchmarks' script and follows it for at most capT ticks
// after its spawn.
func contactRun(tb testing.TB, cfg Config, warm, capT, watch int) contactResult {
	w, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	for k := 0; k < warm; k++ {
		w.Step(w.tick + 1)
	}
	id, err := w.Join("me")
	if err != nil {
		tb.Fatal(err)
	}
	p := &players{ids: []ID{id}, rng: rand.New(rand.NewPCG(cfg.Seed, 99))}
	res := contactResult{ticks: capT}
	seen := make(map[int]bool)
	spawned, watched, sum := -1, 0, 0
	for k := 0; spawned < 0 && k < 50 || spawned >= 0 && k-spawned < capT; k++ {
		p.act(w)
		w.Step(w.tick + 1)
		v := w.Acquire()
		me, ok := v.Snake(id)
		if ok && me.Alive && spawned < 0 {
			spawned = k
			res.joined = true
		}
		if spawned >= 0 && ok && me.Alive {
			if res.ticks == capT {
				for i := range v.Snakes {
					s := &v.Snakes[i]
					if i != id.Slot() && s.Alive && onScreen(v, v.Heads[id.Slot()], v.Heads[i]) {
						res.ticks = k - spawned
						break
					}
				}
			}
			if watched < watch {
				clear(seen)
				for y := -screenH / 2; y < screenH/2; y++ {
					for x := -screenW / 2; x < screenW/2; x++ {
						if px := v.At(v.Heads[id.Slot()].X+x, v.Heads[id.Slot()].Y+y); px.Kind() >= Body && px.Slot() != id.Slot() {
							seen[px.Slot()] = true
						}
					}
				}
				sum += len(seen)
				watched++
			}
		}
		v.Release()
		if res.ticks < capT && watched >= watch {
			break
		}
	}
	if watched > 0 {
		res.onScr = float64(sum) / float64(watched)
	}
	return res
}

// quantile returns the q-quantile (nearest rank) of sorted xs.
func quantile(xs []int, q float64) int {
	if len(xs) == 0 {
		return 0
	}
	k := int(q*float64(len(xs))+0.5) - 1
	return xs[max(0, min(k, len(xs)-1))]
}

// contactFigures sum up the newcomers of seeds 1..n of one world.
type contactFigures struct {
	ticks    []int   // ticks to first contact, sorted (capT: never)
	atSpawn  int     // seeds with another head on screen at once
	never    int     // seeds with no contact within capT
	onScr    float64 // other snakes on screen over the watched ticks: the mean over seeds
	onScrMid float64 // and the median
}

// measureContact runs contactRun for seeds 1..n of c.
func measureContact(tb testing.TB, c contactCase, n, warm, capT, watch int) contactFigures {
	var f contactFigures
	var scr []float64
	for seed := 1; seed <= n; seed++ {
		cfg := c.cfg
		cfg.Seed = uint64(seed)
		r := contactRun(tb, cfg, warm, capT, watch)
		if !r.joined {
			tb.Fatalf("%s seed %d: the player never spawned", c.name, seed)
		}
		f.ticks = append(f.ticks, r.ticks)
		scr = append(scr, r.onScr)
		switch r.ticks {
		case 0:
			f.atSpawn++
		case capT:
			f.never++
		}
	}
	slices.Sort(f.ticks)
	slices.Sort(scr)
	for _, s := range scr {
		f.onScr += s
	}
	f.onScr /= float64(len(scr))
	f.onScrMid = scr[len(scr)/2]
	return f
}

// TestContactTime checks that a newcomer to a quiet server (one player,
// bots at the automatic target) sees another snake's head on its 80x24
// screen within 10 s in at least 4 of 5 seeds, on the default world for
// 3,000 players and on a small one. BenchmarkContactTime measures the
// same over as many seeds as it runs.
func TestContactTime(t *testing.T) {
	const n, capT = 5, 10 * TicksPerSecond
	for _, c := range contactCases() {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() {
				t.Skip("short")
			}
			f := measureContact(t, c, n, 300, capT, 300)
			if quantile(f.ticks, 0.8) == capT { // two or more of five never met anyone
				t.Fatalf("no contact within %d ticks in %v", capT, f.ticks)
			}
		})
	}
}

// BenchmarkContactTime measures what TestContactTime checks, one seed an
// op (seeds 1..N: -benchtime 100x is 100 seeds): one op builds the world,
// steps it 300 ticks, joins the newcomer and follows it for at most 600
// ticks (60 s). The metrics are over the N newcomers: ticks to the first
// other head on screen (median, p90 and worst; 600 when it never came),
// the share that had one at spawn and the share that never did, and the
// number of other snakes with a pixel on the newcomer's screen over its
// first 300 ticks (the mean and median over seeds of each newcomer's
// mean).
func BenchmarkContactTime(b *testing.B) {
	const capT = 600
	for _, c := range contactCases() {
		b.Run(c.name, func(b *testing.B) {
			f := measureContact(b, c, b.N, 300, capT, 300)
			n := float64(b.N)
			b.ReportMetric(float64(quantile(f.ticks, 0.5)), "median-ticks")
			b.ReportMetric(float64(quantile(f.ticks, 0.9)), "p90-ticks")
			b.ReportMetric(float64(f.ticks[len(f.ticks)-1]), "max-ticks")
			b.ReportMetric(100*float64(f.atSpawn)/n, "at-spawn-%")
			b.ReportMetric(100*float64(f.never)/n, "never-%")
			b.ReportMetric(f.onScr, "on-screen")
			b.ReportMetric(f.onScrMid, "on-screen-median")
		})
	}
}

// contactCases are the worlds TestContactTime and BenchmarkContactTime
// measure: the daemon's defaults (floor of 16 bots) with the automatic
// size and bot target.
func contactCases() []contactCase {
	var cs []contactCase
	for _, capacity := range []int{3000, 100} {
		w, h := AutoSize(capacity)
		cs = append(cs, contactCase{
			name: fmt.Sprintf("capacity=%d/%dx%d/target=%d", capacity, w, h, AutoBotTarget(w, h)),
			cfg:  Config{W: w, H: h, MaxSnakes: capacity + max(16, AutoBotTarget(w, h)), Bots: 16, BotTarget: AutoBotTarget(w, h)},
		})
	}
	return cs
}
