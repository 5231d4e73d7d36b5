package game

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// TestStepAllocs checks that Step allocates nothing once a world has warmed
// up: bots and scripted players (steering, dashing, dying, respawning), a
// reader holding views, fruit, spawns, and people leaving and joining so
// that bots come (up to the target) and go (stepping aside). The body
// rings, change logs and view buffers are sized during the warm-up and then
// reused: a snake outgrowing its ring trades it for a longer free one, and
// a spawn gives a long ring back, so rings are only allocated while the
// number of long snakes alive at once still reaches new highs (here, in
// the first few hundred ticks). The players who come and go have empty
// names, so Join and Leave themselves allocate nothing either.
// It runs on one worker, and on two with every pass on the workers.
func TestStepAllocs(t *testing.T) {
	for _, workers := range []int{1, 2} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) { stepAllocs(t, workers) })
	}
}

func stepAllocs(t *testing.T, workers int) {
	w, err := New(Config{W: 512, H: 256, MaxSnakes: 600, Bots: 50, BotTarget: 400, Seed: 9, StartLen: 12, Workers: workers, ParallelFrom: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	p := &players{rng: rand.New(rand.NewPCG(9, 10))}
	for k := 0; k < 250; k++ {
		id, err := w.Join(fmt.Sprintf("p%d", k))
		if err != nil {
			t.Fatal(err)
		}
		p.ids = append(p.ids, id)
	}
	var held *View
	var gone []ID // players who left, by index into p.ids
	minBots, maxBots := 1<<30, 0
	tick := func() {
		// every 100 ticks, 40 people leave (bots fill in at a few a
		// tick); 50 ticks later 40 join (surplus bots step aside)
		switch w.tick % 100 {
		case 0:
			for k := 0; k < 40; k++ {
				w.Leave(p.ids[len(p.ids)-1])
				p.ids = p.ids[:len(p.ids)-1]
				gone = append(gone, 0)
			}
		case 50:
			for range gone {
				id, err := w.Join("")
				if err != nil {
					t.Fatal(err)
				}
				p.ids = append(p.ids, id)
			}
			gone = gone[:0]
		}
		p.act(w)
		if held != nil {
			held.Release()
		}
		held = w.Acquire() // a reader a tick behind, as renderers are
		minBots, maxBots = min(minBots, held.Bots), max(maxBots, held.Bots)
		w.Step(w.tick + 1)
	}
	for k := 0; k < 3000; k++ {
		tick()
	}
	// The count is the process's (runtime.MemStats has no other), and a
	// race-enabled test binary on a busy machine was seen to count a few
	// allocations of its own once in a while (7 in one window, in about
	// one run of eight of the whole package under -race, never alone).
	// So the measured ticks are three windows: Step allocating in steady
	// state shows in every one of them; a one-off elsewhere in one.
	const windows, n = 3, 100
	minBots, maxBots = 1<<30, 0
	var counts [windows]uint64
	for i := range counts {
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		for k := 0; k < n; k++ {
			tick()
		}
		runtime.ReadMemStats(&b)
		counts[i] = b.Mallocs - a.Mallocs
	}
	held.Release()
	if slices.Min(counts[:]) != 0 {
		t.Fatalf("allocations in each of %d windows of %d warmed-up ticks: %v, want 0", windows, n, counts)
	}
	if slices.Max(counts[:]) != 0 {
		t.Logf("allocations in windows of %d ticks: %v (not Step's: another window had none)", n, counts)
	}
	// surplus bots step aside only as they die here (every bot is in a
	// player's sight), so the bots go more slowly than they come
	if maxBots-minBots < 10 {
		t.Fatalf("bots stayed within %d..%d: they should come and go with the people", minBots, maxBots)
	}
	v := w.Acquire()
	defer v.Release()
	if v.Players+v.Bots > 600 || v.Bots < 50 {
		t.Fatalf("players %d bots %d", v.Players, v.Bots)
	}
	t.Logf("bots between %d and %d in the measured ticks", minBots, maxBots)
}
