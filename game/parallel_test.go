package game_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"snaked/game"
	"snaked/internal/cluster/wire"
)

// raceOn is set when the race detector is on (it slows the crowd 20 times).
var raceOn bool

// crowd is a seeded world of bots and people in a small, dense world, fed
// the same script whatever its worker count.
type crowd struct {
	w   *game.World
	e   *wire.Encoder
	rng *rand.Rand
	ids []game.ID
	buf []byte
}

const (
	crowdW, crowdH = 192, 96
	crowdPeople    = 160
	crowdTarget    = 560 // people and bots: 9 words of 64 slots, so that parts hold at most two
)

func newCrowd(t testing.TB, workers int) *crowd {
	return newCrowdWith(t, workers, nil)
}

// newCrowdWith is newCrowd with its config changed by set (when not nil).
func newCrowdWith(t testing.TB, workers int, set func(*game.Config)) *crowd {
	t.Helper()
	cfg := game.Config{W: crowdW, H: crowdH, MaxSnakes: crowdTarget + 40, Bots: 40, BotTarget: crowdTarget,
		Seed: 21, StartLen: 6, DashCooldown: 12, Workers: workers,
		ParallelFrom: 1} // every pass on the workers, however few snakes move
	if set != nil {
		set(&cfg)
	}
	w, err := game.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	c := &crowd{w: w, rng: rand.New(rand.NewPCG(21, 22))}
	for k := 0; k < crowdPeople; k++ {
		id, err := w.Join(fmt.Sprintf("p%d", k))
		if err != nil {
			t.Fatal(err)
		}
		c.ids = append(c.ids, id)
	}
	c.e = wire.NewEncoder(w)
	return c
}

// step plays one tick of the script (people turning, dashing, respawning,
// now and then one leaving and one joining), steps the world and encodes
// its delta into c.buf.
func (c *crowd) step(t testing.TB) {
	v := c.w.Acquire()
	for _, id := range c.ids {
		s, ok := v.Snake(id)
		r := c.rng.IntN(64)
		switch {
		case !ok:
		case !s.Alive:
			if v.Tick >= s.DeathTick+5 {
				c.w.Respawn(id)
			}
		case r < 8:
			c.w.Turn(id, game.Dir(1+r%4))
		case r < 12:
			c.w.Dash(id)
		}
	}
	v.Release()
	if c.rng.IntN(10) == 0 {
		k := c.rng.IntN(len(c.ids))
		c.w.Leave(c.ids[k])
		id, err := c.w.Join("")
		if err != nil {
			t.Fatal(err)
		}
		c.ids[k] = id
	}
	c.w.Step(c.w.Feed().Tick() + 1)
	var err error
	if c.buf, err = c.e.AppendDelta(c.buf[:0]); err != nil {
		t.Fatal(err)
	}
}

// TestWorkersOneAnswer steps worlds that differ only in their worker count
// through the same script and checks that every tick's delta, as the wire
// encodes it, is the same bytes, and the published views the same. The world is small and crowded, so that
// snakes of different parts (64 slots each) kill each other, meet
// head-on and dash, also across the wrap edges; the test counts those
// and fails if any kind is missing.
func TestWorkersOneAnswer(t *testing.T) {
	ticks := 1500
	if testing.Short() || raceOn {
		ticks = 120
	}
	workers := []int{1, 2, 3, 8}
	cs := make([]*crowd, len(workers))
	for k, n := range workers {
		cs[k] = newCrowd(t, n)
	}
	part := func(slot int) int { return slot / 64 } // W=2's parts are a word or two, W=8's one or none
	edge := func(p game.Point) bool {
		return p.X < 3 || p.X >= crowdW-3 || p.Y < 3 || p.Y >= crowdH-3
	}
	var crossKills, crossHeadOn, edgeDeaths, dashes, edgeDashes int
	f := cs[0].w.Feed()
	for tick := 0; tick < ticks; tick++ {
		d0 := f.Deaths()
		for k, c := range cs {
			c.step(t)
			if k > 0 && !bytes.Equal(c.buf, cs[0].buf) {
				t.Fatalf("tick %d: the delta with %d workers differs from the one with 1 (%d bytes against %d)",
					f.Tick(), workers[k], len(c.buf), len(cs[0].buf))
			}
		}
		v0 := cs[0].w.Acquire()
		for k, c := range cs[1:] {
			v := c.w.Acquire()
			if d := viewDiff(v0, v); d != "" {
				t.Fatalf("tick %d: the view with %d workers differs from the one with 1 in %s", f.Tick(), workers[k+1], d)
			}
			v.Release()
		}
		v0.Release()
		for k := d0; k < f.Deaths(); k++ {
			r := f.Death(k)
			switch {
			case r.KillerSlot >= 0 && part(r.KillerSlot) != part(r.VictimSlot):
				crossKills++
			case r.HeadOn && r.Other != "":
				crossHeadOn++ // a part apart or not: counted for presence
			}
			if edge(r.At) {
				edgeDeaths++
			}
		}
		for slot := 0; slot < f.Slots(); slot++ {
			if r := f.Record(slot); r.Alive && r.DashReadyAt == f.Tick()+12 {
				dashes++
				if edge(r.Head) {
					edgeDashes++
				}
			}
		}
	}
	t.Logf("%d ticks, %d deaths: %d kills across parts, %d head-ons, %d deaths at a wrap edge; %d dashes, %d at an edge",
		ticks, f.Deaths(), crossKills, crossHeadOn, edgeDeaths, dashes, edgeDashes)
	if crossKills == 0 || crossHeadOn == 0 || edgeDeaths == 0 || dashes == 0 || edgeDashes == 0 {
		t.Fatal("the script did not exercise every case: want kills across parts, head-ons, deaths and dashes at the wrap edges")
	}
}

// TestUnindexedSameWorld steps an indexed world and unindexed ones on 1
// and 2 workers through the crowd's script: the deltas are the same
// bytes, the views the same pixels, records, board and deaths, and the
// unindexed views carry no render index.
func TestUnindexedSameWorld(t *testing.T) {
	ticks := testTicks(400, 80)
	cs := beside(t, func(c *game.Config) { c.Unindexed = true })
	for tick := 0; tick < ticks; tick++ {
		stepSame(t, cs, tick, "unindexed")
		v0 := cs[0].w.Acquire()
		for k, c := range cs[1:] {
			v := c.w.Acquire()
			if len(v0.FreshAt) == 0 && tick > 1 {
				t.Fatalf("tick %d: the indexed view carries no cell index", v0.Tick)
			}
			if d := worldDiff(v0, v); d != "" {
				t.Fatalf("tick %d: the unindexed view (crowd %d) differs from the indexed one in %s", v.Tick, k+1, d)
			}
			v.Release()
		}
		v0.Release()
	}
}

// beside returns a crowd and, beside it, two whose config set changes,
// on 1 and 2 workers.
func beside(t *testing.T, set func(*game.Config)) []*crowd {
	return []*crowd{newCrowdWith(t, 1, nil), newCrowdWith(t, 1, set), newCrowdWith(t, 2, set)}
}

// testTicks returns full, or short under -short or the race detector.
func testTicks(full, short int) int {
	if testing.Short() || raceOn {
		return short
	}
	return full
}

// stepSame steps each crowd once and fails when a crowd's delta differs
// from the first one's, or a view of the others (what names their worlds)
// carries any of the render index.
func stepSame(t *testing.T, cs []*crowd, tick int, what string) {
	t.Helper()
	for k, c := range cs {
		c.step(t)
		if k > 0 && !bytes.Equal(c.buf, cs[0].buf) {
			t.Fatalf("tick %d: the %s world's delta (crowd %d) differs from the first one's", tick, what, k)
		}
		if v := c.w.Acquire(); k > 0 && len(v.Dirty)+len(v.Fresh)+len(v.FreshX)+len(v.FreshAt)+len(v.FreshBlk)+len(v.FreshPix) != 0 {
			t.Fatalf("tick %d: a view of the %s world (crowd %d) carries a render index", v.Tick, what, k)
		} else {
			v.Release()
		}
	}
}

// TestLazyPixels steps a world of views with pixels and ones that carry
// them only when asked for (Config.LazyPixels) on 1 and 2 workers, and
// asks now and then: after single ticks, runs of ticks and long gaps
// (a buffer brought up to date by replaying the steps since its pixels,
// or copied whole). Each view of a lazy world shows the same tick,
// records and deaths as the other world's, carries no render index, has
// pixels only when asked for, and then the same ones; an ask is served at
// once unless the buffer with pixels is held or was the newest, and then
// on the first tick it is free; WantPixels says whether the newest view
// lacks them.
func TestLazyPixels(t *testing.T) {
	ticks := testTicks(400, 120)
	cs := beside(t, func(c *game.Config) { c.LazyPixels = true })
	for k, c := range cs[1:] {
		c.step(t)
		if v := c.w.Acquire(); !v.NoPixels || v.Pix != nil {
			t.Fatalf("crowd %d: a view never asked for pixels has NoPixels %v and %d of them", k+1, v.NoPixels, len(v.Pix))
		} else {
			v.Release()
		}
	}
	cs[0].step(t)
	ask := func(tick int) bool { // after tick: a whole copy, a run, replays of a few steps
		return tick%37 == 0 || (tick >= 60 && tick < 66) || tick%50 == 7 || tick%50 == 10
	}
	var held *game.View // a view with pixels of crowd 1, held for up to 30 ticks: the pool grows
	asked, copies, waits := 0, 0, 0
	wanted := make([]bool, len(cs)) // asked, and no pixels since
	busy := make([]bool, len(cs))   // the buffer with pixels is held, or the newest, at this tick's publish
	for tick := 0; tick < ticks; tick++ {
		if ask(tick) {
			asked++
			for k, c := range cs {
				v := c.w.Acquire()
				lacks := v.NoPixels
				v.Release()
				if got := c.w.WantPixels(); got != (k > 0 && lacks) {
					t.Fatalf("tick %d: crowd %d's WantPixels says %v, its newest view NoPixels %v", tick, k, got, lacks)
				}
				wanted[k] = wanted[k] || lacks
			}
		}
		for k, c := range cs[1:] {
			v := c.w.Acquire()
			busy[k+1] = !v.NoPixels || k == 0 && held != nil
			v.Release()
		}
		stepSame(t, cs, tick, "lazy")
		v0 := cs[0].w.Acquire()
		for k, c := range cs[1:] {
			v := c.w.Acquire()
			switch {
			case !v.NoPixels && !wanted[k+1]:
				t.Fatalf("tick %d: crowd %d's view has pixels nobody asked for", v.Tick, k+1)
			case v.NoPixels && wanted[k+1] && !busy[k+1]:
				t.Fatalf("tick %d: crowd %d's view has no pixels, asked for with the buffer with pixels free", v.Tick, k+1)
			case v.NoPixels && wanted[k+1]:
				waits++
			}
			wanted[k+1] = wanted[k+1] && v.NoPixels
			d := recordsDiff(v0, v)
			if d == "" && !v.NoPixels && !slices.Equal(v0.Pix, v.Pix) {
				d = "Pix"
			}
			if d != "" {
				t.Fatalf("tick %d: the lazy view (crowd %d) differs from the other's in %s", v.Tick, k+1, d)
			}
			if !v.NoPixels && k == 0 {
				copies++
				if held == nil && tick > 100 {
					held = v // released below, 1 to 30 ticks on
					continue
				}
			}
			v.Release()
		}
		v0.Release()
		if held != nil && tick%30 == 0 {
			held.Release()
			held = nil
		}
	}
	if held != nil {
		held.Release()
	}
	if asked < 10 || copies < 10 || waits == 0 {
		t.Fatalf("asked for pixels %d times, %d views had them, %d waited", asked, copies, waits)
	}
}

// TestLazyPixelsReady asks a lazy world for pixels, holding the view that
// carries them: the steps asked allocate no pixels (the buffer with pixels
// is made with the world; a buffer's first pixels written on a step fault
// in fresh memory, most of a second at 100,000 snakes), and while the view
// is held asks wait, then are served on the first step after its release.
func TestLazyPixelsReady(t *testing.T) {
	const W, H = 1024, 512 // a buffer's pixels: 2 MB
	w, err := game.New(game.Config{W: W, H: H, MaxSnakes: 300, Bots: 200, Seed: 2, LazyPixels: true})
	if err != nil {
		t.Fatal(err)
	}
	tick := uint64(0)
	step := func() {
		tick++
		w.Step(tick)
	}
	var ms runtime.MemStats
	allocated := func() uint64 {
		runtime.ReadMemStats(&ms)
		return ms.TotalAlloc
	}
	var held *game.View
	for k := range 3 {
		for range 3 {
			step()
		}
		before := allocated()
		w.WantPixels()
		step()
		if n := allocated() - before; n >= W*H*4/4 {
			t.Fatalf("ask %d: the step asked for pixels allocated %d bytes", k, n)
		}
		v := w.Acquire()
		if v.NoPixels != (k > 0) {
			t.Fatalf("ask %d, the view with pixels held %v: the view has NoPixels %v", k, held != nil, v.NoPixels)
		}
		if k == 0 {
			held = v
		} else {
			v.Release()
		}
	}
	held.Release()
	step() // asked before, not served yet
	v := w.Acquire()
	defer v.Release()
	if v.NoPixels || !slices.Equal(v.Pix, w.Feed().Pixels()) {
		t.Fatalf("the buffer with pixels free again: NoPixels %v, or pixels not the world's", v.NoPixels)
	}
}

// TestTurnsWhileWorkersStep has people turn and dash from other goroutines
// while a world steps on 2 workers with every pass on them: under the race
// detector (make test), input racing the step fails it: Turn checking
// turns against World.dirs, which the workers write, instead of heading,
// drain's copy made under the lock Turn takes, does.
func TestTurnsWhileWorkersStep(t *testing.T) {
	c := newCrowd(t, 2)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Go(func() {
			for n := 0; n < 1_000_000; n++ {
				select {
				case <-stop:
					return
				default:
				}
				id := c.ids[(n*7+g)%len(c.ids)]
				c.w.Turn(id, game.Dir(1+n%4))
				if n%16 == 0 {
					c.w.Dash(id)
				}
			}
		})
	}
	for range 60 {
		c.w.Step(c.w.Feed().Tick() + 1)
	}
	close(stop)
	wg.Wait()
}

// viewDiff names the first of a view's fields (but its Serial) in which a
// and b differ, or returns "".
func viewDiff(a, b *game.View) string {
	switch {
	case !slices.Equal(a.Dirty, b.Dirty):
		return "Dirty"
	case !slices.Equal(a.Fresh, b.Fresh):
		return "Fresh"
	case !slices.Equal(a.FreshX, b.FreshX):
		return "FreshX"
	case !slices.Equal(a.FreshAt, b.FreshAt):
		return "FreshAt"
	case !slices.Equal(a.FreshBlk, b.FreshBlk):
		return "FreshBlk"
	case !slices.Equal(a.FreshPix, b.FreshPix):
		return "FreshPix"
	}
	return worldDiff(a, b)
}

// worldDiff is viewDiff without the render index (View.Dirty to
// FreshPix): the fields in which the world shows.
func worldDiff(a, b *game.View) string {
	if a.Tick == b.Tick && !slices.Equal(a.Pix, b.Pix) {
		return "Pix"
	}
	return recordsDiff(a, b)
}

// recordsDiff is worldDiff without the pixels.
func recordsDiff(a, b *game.View) string {
	switch {
	case a.Tick != b.Tick:
		return "Tick"
	case !slices.Equal(a.Snakes, b.Snakes):
		return "Snakes"
	case !slices.Equal(a.Shield, b.Shield):
		return "Shield"
	case !slices.Equal(a.Top, b.Top):
		return "Top"
	case !slices.Equal(a.Kills, b.Kills):
		return "Kills"
	case a.Players != b.Players || a.Bots != b.Bots || a.Best != b.Best:
		return "Players, Bots or Best"
	}
	return ""
}

// TestWorkersEnd checks that Close ends a world's workers, and that a
// world dropped without Close has them end once it is collected.
func TestWorkersEnd(t *testing.T) {
	// wait returns once at most n goroutines run, collecting garbage
	// while it waits when gc is set; false after 5 s.
	wait := func(n int, gc bool) bool {
		for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > n; {
			if time.Now().After(deadline) {
				return false
			}
			if gc {
				runtime.GC()
			}
			time.Sleep(time.Millisecond)
		}
		return true
	}
	runtime.GC() // let other tests' worlds and goroutines go
	time.Sleep(10 * time.Millisecond)
	base := runtime.NumGoroutine()
	run := func(close bool) {
		w, err := game.New(game.Config{W: 256, H: 128, MaxSnakes: 300, Bots: 300, Seed: 5, Workers: 4})
		if err != nil {
			t.Fatal(err)
		}
		for tick := uint64(1); tick <= 20; tick++ {
			w.Step(tick)
		}
		if n := runtime.NumGoroutine(); n != base+3 {
			t.Fatalf("%d goroutines while stepping on 4 workers, want %d", n, base+3)
		}
		if close {
			w.Close()
			w.Close()
			if !wait(base, false) {
				t.Fatalf("%d goroutines after Close, want %d", runtime.NumGoroutine(), base)
			}
			w.Step(21) // on the caller alone
			runtime.KeepAlive(w)
		}
	}
	run(true)
	run(false)
	if !wait(base, true) {
		t.Fatalf("%d goroutines after the world was dropped, want %d", runtime.NumGoroutine(), base)
	}
	w, err := game.New(game.Config{W: 256, H: 128, MaxSnakes: 300, Bots: 300, Seed: 5, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.Step(1)
	if n := runtime.NumGoroutine(); n != base {
		t.Fatalf("%d goroutines stepping on 1 worker, want %d", n, base)
	}
}
