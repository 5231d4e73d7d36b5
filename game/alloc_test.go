package game

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestStepAllocs checks that Step allocates nothing once a world has warmed
// up: bots and scripted players (steering, dashing, dying, respawning), a
// reader holding views, fruit, spawns. The body rings, change logs and view
// buffers are sized during the warm-up and then reused: a snake outgrowing
// its ring trades it for a longer free one, and a spawn gives a long ring
// back, so rings are only allocated while the number of long snakes alive
// at once still reaches new highs (here, in the first ~1,000 ticks).
func TestStepAllocs(t *testing.T) {
	w, err := New(Config{W: 512, H: 256, MaxSnakes: 500, Bots: 250, Seed: 9, StartLen: 12})
	if err != nil {
		t.Fatal(err)
	}
	p := &players{rng: rand.New(rand.NewPCG(9, 10))}
	for k := 0; k < 250; k++ {
		id, err := w.Join(fmt.Sprintf("p%d", k))
		if err != nil {
			t.Fatal(err)
		}
		p.ids = append(p.ids, id)
	}
	var held *View
	tick := func() {
		p.act(w)
		if held != nil {
			held.Release()
		}
		held = w.Acquire() // a reader a tick behind, as renderers are
		w.Step(w.tick + 1)
	}
	for k := 0; k < 3000; k++ {
		tick()
	}
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	const n = 300
	for k := 0; k < n; k++ {
		tick()
	}
	runtime.ReadMemStats(&b)
	held.Release()
	if d := b.Mallocs - a.Mallocs; d != 0 {
		t.Fatalf("%d allocations in %d warmed-up ticks, want 0", d, n)
	}
	v := w.Acquire()
	defer v.Release()
	if v.Players != 250 || v.Bots != 250 {
		t.Fatalf("players %d bots %d", v.Players, v.Bots)
	}
}
