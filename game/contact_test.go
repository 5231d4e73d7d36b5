package game

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// contactSeeds turns TestContactTime into the measurement reported in
// docs/BENCHMARKS.md: go test -run TestContactTime -contact 100 -v ./game/
var contactSeeds = flag.Int("contact", 0, "seeds per world for TestContactTime's measurement (0: the quick check)")

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
					if i != id.Slot() && s.Alive && onScreen(v, me.Head, s.Head) {
						res.ticks = k - spawned
						break
					}
				}
			}
			if watched < watch {
				clear(seen)
				for y := -screenH / 2; y < screenH/2; y++ {
					for x := -screenW / 2; x < screenW/2; x++ {
						if px := v.At(me.Head.X+x, me.Head.Y+y); px.Kind() >= Body && px.Slot() != id.Slot() {
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

// measureContact runs contactRun for seeds 1..n of c and logs the median
// and p90 of the ticks to first contact and the mean number of snakes on
// the newcomer's screen. It returns the sorted ticks.
func measureContact(t *testing.T, c contactCase, n, warm, capT, watch int) []int {
	var ticks []int
	var scr []float64
	censored := 0
	for seed := 1; seed <= n; seed++ {
		cfg := c.cfg
		cfg.Seed = uint64(seed)
		r := contactRun(t, cfg, warm, capT, watch)
		if !r.joined {
			t.Fatalf("%s seed %d: the player never spawned", c.name, seed)
		}
		ticks = append(ticks, r.ticks)
		scr = append(scr, r.onScr)
		if r.ticks == capT {
			censored++
		}
	}
	slices.Sort(ticks)
	slices.Sort(scr)
	mean := 0.0
	for _, s := range scr {
		mean += s
	}
	mean /= float64(len(scr))
	atOnce := 0
	for _, k := range ticks {
		if k == 0 {
			atOnce++
		}
	}
	t.Logf("%s: %d seeds: first contact median %d ticks, p90 %d, max %d (at spawn: %d; never within %d: %d); other snakes on screen over the first %d ticks: mean %.2f, median %.2f",
		c.name, n, quantile(ticks, 0.5), quantile(ticks, 0.9), ticks[len(ticks)-1], atOnce, capT, censored, watch, mean, scr[len(scr)/2])
	return ticks
}

// TestContactTime checks that a newcomer to a quiet server (one player,
// bots at the automatic target) sees another snake's head on its 80x24
// screen within 10 s in at least 4 of 5 seeds, on the default world for
// 3,000 players and on a small one. With -contact N it measures N seeds
// per world instead and logs the figures in docs/BENCHMARKS.md.
func TestContactTime(t *testing.T) {
	n, capT := *contactSeeds, 600
	if n == 0 {
		n, capT = 5, 10*TicksPerSecond
	}
	for _, c := range contactCases() {
		t.Run(c.name, func(t *testing.T) {
			if *contactSeeds == 0 && testing.Short() {
				t.Skip("short")
			}
			ticks := measureContact(t, c, n, 300, capT, 300)
			if *contactSeeds == 0 {
				if quantile(ticks, 0.8) == capT { // two or more of five never met anyone
					t.Fatalf("no contact within %d ticks in %v", capT, ticks)
				}
			}
		})
	}
}

// contactCases are the worlds TestContactTime measures: the daemon's
// defaults (floor of 16 bots) with the automatic size and bot target.
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
