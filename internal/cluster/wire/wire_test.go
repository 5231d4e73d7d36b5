package wire

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"snaked/game"
)

// follower is a world stepped with bots and scripted players (some leaving
// and joining) and a replica following it from a snapshot.
type follower struct {
	w   *game.World
	p   *players
	e   *Encoder
	r   *Replica
	buf []byte
	rng *rand.Rand

	prevPix  []game.Pixel // the replica's pixels at prevTick
	prevTick uint64
}

func newFollowed(t testing.TB, seed uint64, w, h, people int, set ...func(*game.Config)) *follower {
	t.Helper()
	cfg := game.Config{W: w, H: h, MaxSnakes: people + 40, Bots: 8, BotTarget: people/2 + 20, Seed: seed, StartLen: 6}
	for _, f := range set {
		f(&cfg)
	}
	world, err := game.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := &follower{w: world, p: &players{rng: rand.New(rand.NewPCG(seed, 3))}, rng: rand.New(rand.NewPCG(seed, 4))}
	for k := 0; k < people; k++ {
		id, err := world.Join(fmt.Sprintf("p%d", k))
		if err != nil {
			t.Fatal(err)
		}
		f.p.ids = append(f.p.ids, id)
	}
	return f
}

// step steps the world once, with the script and some leaves and joins.
func (f *follower) step(t testing.TB) {
	t.Helper()
	f.p.act(f.w)
	if len(f.p.ids) > 0 && f.rng.IntN(20) == 0 {
		k := f.rng.IntN(len(f.p.ids))
		f.w.Leave(f.p.ids[k])
		f.p.ids = slices.Delete(f.p.ids, k, k+1)
	}
	if f.rng.IntN(20) == 0 {
		if id, err := f.w.Join(fmt.Sprintf("n%d", f.rng.IntN(1000))); err == nil {
			f.p.ids = append(f.p.ids, id)
		}
	}
	f.w.Step(f.w.Feed().Tick() + 1)
}

// follow takes a snapshot (in chunks of size chunk) and starts the replica.
func (f *follower) follow(t testing.TB, chunk int) {
	t.Helper()
	f.e = NewEncoder(f.w)
	chunks, err := Snapshot(f.w, chunk)
	if err != nil {
		t.Fatal(err)
	}
	f.rng.Shuffle(len(chunks), func(i, j int) { chunks[i], chunks[j] = chunks[j], chunks[i] })
	if f.r, err = NewReplica(chunks); err != nil {
		t.Fatal(err)
	}
	f.check(t)
}

// next steps the world (one time in eight, 2 to 4 times: a delta then
// spans several steps), sends the delta and checks the replica's view.
func (f *follower) next(t testing.TB) {
	t.Helper()
	f.steps(t)
	f.send(t)
	f.check(t)
}

// steps steps the world once, or one time in eight 2 to 4 times (a
// delta then spans several steps).
func (f *follower) steps(t testing.TB) {
	t.Helper()
	n := 1
	if f.rng.IntN(8) == 0 {
		n = 2 + f.rng.IntN(3)
	}
	for range n {
		f.step(t)
	}
}

// send has the replica apply the delta since the last one.
func (f *follower) send(t testing.TB) {
	t.Helper()
	var err error
	if f.buf, err = f.e.AppendDelta(f.buf[:0]); err != nil {
		t.Fatal(err)
	}
	if err := f.r.Apply(f.buf); err != nil {
		t.Fatalf("tick %d: %v", f.w.Feed().Tick(), err)
	}
}

// check compares the replica's newest view with the world's.
func (f *follower) check(t testing.TB) {
	t.Helper()
	wv, rv := f.w.Acquire(), f.r.Acquire()
	defer wv.Release()
	defer rv.Release()
	if err := sameView(wv, rv); err != nil {
		t.Fatalf("tick %d: %v", wv.Tick, err)
	}
	if f.prevPix != nil {
		if err := dirtyCovers(rv, f.prevPix, f.prevTick); err != nil {
			t.Fatalf("tick %d: %v", wv.Tick, err)
		}
	}
	f.prevPix = append(f.prevPix[:0], rv.Pix...)
	f.prevTick = rv.Tick
}

// sameView reports how b differs from a, Dirty aside.
func sameView(a, b *game.View) error { return sameViewPix(a, b, b.Pix) }

// sameViewPix is sameView with pix for b's pixels.
func sameViewPix(a, b *game.View, pix []game.Pixel) error {
	switch {
	case a.Tick != b.Tick || a.W != b.W || a.H != b.H:
		return fmt.Errorf("tick/size %d %dx%d, replica %d %dx%d", a.Tick, a.W, a.H, b.Tick, b.W, b.H)
	case !slices.Equal(a.Pix, pix):
		for i := range a.Pix {
			if a.Pix[i] != pix[i] {
				return fmt.Errorf("pixel %d: %x, replica %x", i, a.Pix[i], pix[i])
			}
		}
	case len(a.Snakes) != len(b.Snakes):
		return fmt.Errorf("%d slots, replica %d", len(a.Snakes), len(b.Snakes))
	case !slices.Equal(a.Heads, b.Heads):
		return fmt.Errorf("heads %v, replica %v", a.Heads, b.Heads)
	case a.Players != b.Players || a.Bots != b.Bots || a.Best != b.Best:
		return fmt.Errorf("counters %d %d %+v, replica %d %d %+v", a.Players, a.Bots, a.Best, b.Players, b.Bots, b.Best)
	case !slices.Equal(a.Top, b.Top):
		return fmt.Errorf("top %+v, replica %+v", a.Top, b.Top)
	case !slices.Equal(a.Kills, b.Kills):
		return fmt.Errorf("kills %+v, replica %+v", a.Kills, b.Kills)
	case !slices.Equal(a.Shield, b.Shield):
		return fmt.Errorf("shields %x, replica %x", a.Shield, b.Shield)
	}
	for i := range a.Snakes {
		if !reflect.DeepEqual(a.Snakes[i], b.Snakes[i]) {
			return fmt.Errorf("slot %d: %+v, replica %+v", i, a.Snakes[i], b.Snakes[i])
		}
		if a.Rank(i) != b.Rank(i) {
			return fmt.Errorf("slot %d: rank %d, replica %d", i, a.Rank(i), b.Rank(i))
		}
	}
	return nil
}

// dirtyCovers checks that v.Dirty marks, after tick from, every tile whose
// pixels differ from prev and every tile of a snake whose protection ended
// after from, and that v.Fresh marks only tiles dirty at v.Tick and, when
// from is the tick before, every tile that changed, and FreshX (when the
// view has it) every such pixel.
func dirtyCovers(v *game.View, prev []game.Pixel, from uint64) error {
	if len(v.FreshAt) > 0 {
		if err := freshXShape(v); err != nil {
			return err
		}
	}
	tw, fw := game.TilesW(v.W), game.FreshWords(v.W)
	tile := func(i int32, w int) int { return int(i)/w/game.TileH*tw + int(i)%w/game.TileW }
	fresh := func(i int) bool {
		tx, ty := i%v.W/game.TileW, i/v.W/game.TileH
		return v.Fresh[ty*fw+tx/64]>>(tx%64)&1 == 1
	}
	for i, d := range v.Dirty {
		tx, ty := i%tw, i/tw
		if v.Fresh[ty*fw+tx/64]>>(tx%64)&1 == 1 && d != v.Tick {
			return fmt.Errorf("tick %d: tile %d,%d is Fresh but has Dirty %d", v.Tick, tx, ty, d)
		}
	}
	for i := range v.Snakes {
		if v.Shielded(i) != (v.Tick < v.Snakes[i].ProtectedUntil) {
			return fmt.Errorf("tick %d: slot %d protected until %d, Shielded %v", v.Tick, i, v.Snakes[i].ProtectedUntil, v.Shielded(i))
		}
	}
	for i := range v.Pix {
		p := v.Pix[i]
		exp := false
		if k := p.Kind(); k >= game.Body && p.Slot() < len(v.Snakes) {
			s := &v.Snakes[p.Slot()]
			exp = s.Alive && s.ProtectedUntil > from && s.ProtectedUntil <= v.Tick
		}
		if (p != prev[i] || exp) && from == v.Tick-1 && !fresh(i) {
			return fmt.Errorf("pixel %d (%d,%d) changed after tick %d, the tick before, and its tile is not Fresh", i, i%v.W, i/v.W, from)
		}
		if (p != prev[i] || exp) && from == v.Tick-1 && len(v.FreshAt) > 0 && !inFreshX(v, i%v.W, i/v.W) {
			return fmt.Errorf("pixel %d (%d,%d) changed after tick %d, the tick before, and is not in FreshX", i, i%v.W, i/v.W, from)
		}
		if (p != prev[i] || exp) && v.Dirty[tile(int32(i), v.W)] <= from {
			return fmt.Errorf("pixel %d (%d,%d) changed after tick %d (%x -> %x, expired %v), its tile is not dirty (%d)",
				i, i%v.W, i/v.W, from, prev[i], p, exp, v.Dirty[tile(int32(i), v.W)])
		}
	}
	return nil
}

// TestReplicaFollows steps worlds for hundreds of ticks, a replica built
// from a snapshot following each through its deltas; after every tick the
// views are equal, and the replica's Dirty covers every change. Readers
// hold some views across ticks, so buffers are replayed over several
// deltas and, past the ring, copied whole.
func TestReplicaFollows(t *testing.T) {
	for _, c := range []struct {
		seed         uint64
		w, h, people int
		warm, ticks  int
		chunk        int
	}{
		{1, 128, 64, 10, 30, 400, 1 << 20},
		{2, 256, 64, 40, 120, 300, 512},
		{3, 64, 32, 4, 0, 300, MinChunk},
	} {
		t.Run(fmt.Sprint(c.seed), func(t *testing.T) {
			f := newFollowed(t, c.seed, c.w, c.h, c.people)
			for k := 0; k < c.warm; k++ {
				f.step(t)
			}
			f.follow(t, c.chunk)
			var held []*game.View
			for k := 0; k < c.ticks; k++ {
				f.next(t)
				switch {
				case k%37 == 5: // a slow reader pins a view for 20 ticks
					held = append(held, f.r.Acquire())
				case k%37 == 25 && len(held) > 0:
					held[0].Release()
					held = held[1:]
				}
			}
			for _, v := range held {
				v.Release()
			}
		})
	}
}

// TestReplicaQuiet: a replica that applies runs of deltas quietly (a
// follower behind the stream), publishing only the last of each run, by
// Apply or Publish, shows the world's view of that tick, its Dirty
// covering every change since the view before (runs shorter and longer
// than the steps Views keeps); its views stay at the tick before while a
// run is applied.
func TestReplicaQuiet(t *testing.T) {
	f := newFollowed(t, 9, 128, 64, 12)
	for range 40 {
		f.step(t)
	}
	f.follow(t, 1<<20)
	for k, n := range []int{1, 2, 3, 5, 15, 16, 17, 40, 1, 4, 2, 1} {
		byPublish := k%2 == 1 // the run's last delta quiet too, then Publish
		for j := range n {
			f.step(t)
			var err error
			if f.buf, err = f.e.AppendDelta(f.buf[:0]); err != nil {
				t.Fatal(err)
			}
			if j < n-1 || byPublish {
				err = f.r.ApplyQuiet(f.buf)
			} else {
				err = f.r.Apply(f.buf)
			}
			if err != nil {
				t.Fatalf("run %d, delta %d: %v", k, j, err)
			}
			if j < n-1 || byPublish {
				viewStays(t, f.r, f.prevTick, k, j)
			}
		}
		if byPublish != f.r.Publish() {
			t.Fatalf("run %d: Publish reported %v", k, !byPublish)
		}
		if f.r.Publish() {
			t.Fatalf("run %d: a second Publish published again", k)
		}
		f.check(t)
	}
}

// viewStays fails the test unless r's newest view is of tick, after the
// quiet apply of tick j of run k.
func viewStays(t *testing.T, r *Replica, tick uint64, k, j int) {
	t.Helper()
	v := r.Acquire()
	defer v.Release()
	if v.Tick != tick {
		t.Fatalf("run %d, tick %d: a quiet apply published tick %d (last view %d)", k, j, v.Tick, tick)
	}
}

// TestReplicaUnindex: a replica unindexed as it follows (a reader holding
// views made before, so that those buffers are replayed after) publishes
// the world's views, none of them with a render index.
func TestReplicaUnindex(t *testing.T) {
	f := newFollowed(t, 4, 128, 64, 10)
	for range 30 {
		f.step(t)
	}
	f.follow(t, 1<<20)
	var held []*game.View
	for k := range 100 {
		if k == 20 {
			f.r.Unindex()
		}
		n := 1 + k%3 // a delta of several steps, now and then
		for range n {
			f.step(t)
		}
		f.send(t)
		wv, rv := f.w.Acquire(), f.r.Acquire()
		if err := sameView(wv, rv); err != nil {
			t.Fatalf("tick %d: %v", wv.Tick, err)
		}
		index := len(rv.Dirty) + len(rv.Fresh) + len(rv.FreshX) + len(rv.FreshAt) + len(rv.FreshBlk) + len(rv.FreshPix)
		switch {
		case k < 20 && len(rv.Dirty) == 0:
			t.Fatalf("tick %d: the replica's view has no render index before Unindex", rv.Tick)
		case k >= 20 && index != 0:
			t.Fatalf("tick %d: the replica's view carries a render index after Unindex", rv.Tick)
		}
		wv.Release()
		switch {
		case k%7 == 3: // a reader holds views made before Unindex, and after
			held = append(held, rv)
		case len(held) > 0 && k%7 == 6:
			held[0].Release()
			held = held[1:]
			rv.Release()
		default:
			rv.Release()
		}
	}
	for _, v := range held {
		v.Release()
	}
}

// TestSnapshotChunks: chunks in any order make the replica; a missing,
// repeated or foreign chunk is an error.
func TestSnapshotChunks(t *testing.T) {
	f := newFollowed(t, 5, 256, 64, 30)
	for k := 0; k < 50; k++ {
		f.step(t)
	}
	chunks, err := Snapshot(f.w, 200)
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) < 3 {
		t.Fatalf("%d chunks", len(chunks))
	}
	for _, c := range chunks {
		if len(c) > 200 {
			t.Fatalf("chunk of %d bytes", len(c))
		}
	}
	rev := slices.Clone(chunks)
	slices.Reverse(rev)
	r, err := NewReplica(rev)
	if err != nil {
		t.Fatal(err)
	}
	wv, rv := f.w.Acquire(), r.Acquire()
	if err := sameView(wv, rv); err != nil {
		t.Fatal(err)
	}
	wv.Release()
	rv.Release()
	for k := range chunks {
		miss := slices.Delete(slices.Clone(chunks), k, k+1)
		if _, err := NewReplica(miss); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("chunk %d missing: %v", k, err)
		}
	}
	twice := slices.Clone(chunks)
	twice[len(twice)-1] = twice[0]
	if _, err := NewReplica(twice); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("chunk given twice: %v", err)
	}
	f.step(t)
	other, _ := Snapshot(f.w, 200)
	mixed := slices.Clone(chunks)
	mixed[1] = other[1]
	if _, err := NewReplica(mixed); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("foreign chunk: %v", err)
	}
	if _, err := Snapshot(f.w, MinChunk-1); err == nil {
		t.Fatal("snapshot chunks below MinChunk accepted")
	}
}

// TestSnapshotLater: a snapshot written from the view of its tick, on
// another goroutine after the world has stepped on, has the same bytes as
// Snapshot's at that tick, and the view goes back to the world's pool;
// with every view buffer held (a publish skipped) there is no view of the
// tick, and SnapshotLater says so. In a world whose views carry pixels
// only when asked for (game.Config.LazyPixels) there is no view to write
// from until World.WantPixels asks for the next.
func TestSnapshotLater(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		lazy := seed == 3
		f := newFollowed(t, seed, 192, 64, 30, func(c *game.Config) { c.LazyPixels = lazy })
		var written []*game.View
		for k := 0; k < 200; k++ {
			if k%40 == 39 && lazy {
				if SnapshotLater(f.w) != nil {
					t.Fatalf("tick %d: a later snapshot from a view published without pixels", f.w.Feed().Tick())
				}
				if !f.w.WantPixels() {
					t.Fatalf("tick %d: WantPixels says the newest view has pixels", f.w.Feed().Tick())
				}
			}
			f.step(t)
			if k%40 != 39 {
				continue
			}
			if f.w.WantPixels() {
				t.Fatalf("tick %d: WantPixels says the view asked for has no pixels", f.w.Feed().Tick())
			}
			want, err := Snapshot(f.w, 700)
			if err != nil {
				t.Fatal(err)
			}
			l := SnapshotLater(f.w)
			if l == nil {
				t.Fatalf("tick %d: no view of the tick", f.w.Feed().Tick())
			}
			for range 3 {
				f.step(t)
			}
			done := make(chan [][]byte)
			written = append(written, l.v)
			go func() {
				c, err := l.Chunks(700)
				if err != nil {
					t.Error(err)
				}
				done <- c
			}()
			if got := <-done; !slices.EqualFunc(got, want, bytes.Equal) {
				t.Fatalf("seed %d, tick %d: the later snapshot differs (%d chunks, want %d)", seed, f.w.Feed().Tick()-3, len(got), len(want))
			}
			if _, err := l.Chunks(700); err == nil {
				t.Fatal("a later snapshot written twice")
			}
		}
		if lazy && f.w.WantPixels() {
			f.step(t)
		}
		l := SnapshotLater(f.w)
		written = append(written, l.v)
		if _, err := l.Chunks(MinChunk - 1); err == nil {
			t.Fatal("chunks below MinChunk accepted")
		}
		// Hold the newest view each step until a publish is skipped: every
		// buffer of the pool is held then, the snapshots' views among them
		// unless one kept a reference.
		before := f.w.Skipped()
		var held []*game.View
		for f.w.Skipped() == before {
			if len(held) > 100 {
				t.Fatal("no publish skipped with every buffer held")
			}
			held = append(held, f.w.Acquire())
			f.step(t)
		}
		for _, v := range written {
			if !slices.Contains(held, v) {
				t.Fatalf("the view of a written snapshot (tick %d) was not released", v.Tick)
			}
		}
		if l := SnapshotLater(f.w); l != nil {
			t.Fatalf("tick %d: a later snapshot from the view of tick %d", f.w.Feed().Tick(), l.v.Tick)
		}
		for _, v := range held {
			v.Release()
		}
	}
}

// TestSnapshotPausing: ChunksPausing writes the bytes Chunks does, and
// pauses between slices of the pixels and of the records.
func TestSnapshotPausing(t *testing.T) {
	const bots = pauseSnakes + 500
	w, err := game.New(game.Config{W: 2048, H: 1280, MaxSnakes: bots, Bots: bots, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for tick := uint64(1); tick <= 3; tick++ {
		w.Step(tick)
	}
	want, err := SnapshotLater(w).Chunks(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	pauses := 0
	got, err := SnapshotLater(w).ChunksPausing(1<<20, func() { pauses++ })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got, want, bytes.Equal) {
		t.Fatalf("%d chunks paused, %d not: the bytes differ", len(got), len(want))
	}
	// a pause where each slice of pixels ends (at the next run's start) and
	// after each pauseSnakes records
	if least := (2048*1280-1)/pausePixels/2 + bots/pauseSnakes; pauses < least {
		t.Fatalf("%d pauses writing %d pixels and %d records, want at least %d", pauses, 2048*1280, bots, least)
	}
}

// TestReplicaGap: a delta that skips a tick, or comes twice, is refused
// with ErrGap and changes nothing; an encoder left behind past the change
// logs says a snapshot is needed, and one taken then resumes.
func TestReplicaGap(t *testing.T) {
	f := newFollowed(t, 6, 128, 64, 10)
	f.follow(t, 1<<20)
	f.next(t)
	old := slices.Clone(f.buf)
	f.step(t)
	d1, err := f.e.AppendDelta(nil)
	if err != nil {
		t.Fatal(err)
	}
	f.step(t)
	d2, err := f.e.AppendDelta(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range [][]byte{d2, old} {
		if err := f.r.Apply(d); !errors.Is(err, ErrGap) {
			t.Fatalf("out of order delta: %v", err)
		}
	}
	if err := f.r.Apply(d1); err != nil {
		t.Fatal(err)
	}
	if err := f.r.Apply(d2); err != nil {
		t.Fatal(err)
	}
	f.check(t)
	base := f.w.Feed().Steps()
	for f.w.Feed().Kept(base) {
		f.step(t)
	}
	if _, err := f.e.AppendDelta(nil); !errors.Is(err, ErrGap) {
		t.Fatalf("encoder %d steps behind: %v", f.w.Feed().Steps()-base, err)
	}
	f.prevPix = nil
	chunks, _ := Snapshot(f.w, 1<<20)
	if f.r, err = NewReplica(chunks); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 20; k++ {
		f.next(t)
	}
	// two steps in one delta
	f.step(t)
	f.step(t)
	if f.buf, err = f.e.AppendDelta(f.buf[:0]); err != nil {
		t.Fatal(err)
	}
	if err := f.r.Apply(f.buf); err != nil {
		t.Fatal(err)
	}
	f.check(t)
}

// TestReplicaCorrupt: every truncation and many bit flips of real messages
// are refused (or, for a flip that still decodes, applied whole: as a
// fresh replica applies it); nothing panics and a refused delta leaves the
// replica as it was. The truncations go to a replica that has followed
// deltas (so it has logs a view may replay); the flips all go to one
// replica built from a snapshot, so what a refused one leaves behind would
// show in the next one applied.
func TestReplicaCorrupt(t *testing.T) {
	f := newFollowed(t, 7, 128, 64, 10)
	f.follow(t, 1<<20)
	for k := 0; k < 32; k++ {
		f.next(t)
	}
	chunks, _ := Snapshot(f.w, 1<<20)
	f.step(t)
	d, _ := f.e.AppendDelta(nil)

	// state is what a replica holds that its views and its next deltas
	// depend on: the writes of the steps a view may still replay (not the
	// next one's buffer, which Apply reuses), and the newest view (its
	// Serial changes with every publish).
	type state struct {
		Tick, Seq     uint64
		NSlots        int
		Grid          []game.Pixel
		Snakes        []game.SnakeInfo
		Top           [game.TopN]int32
		NTop          int
		Players, Bots int
		Best          game.Entry
		Logs          [15][]game.Write
		At            []game.Point
		Hot           []slotHot
		Prot          []int32
		InProt        []bool
		Changed       [15][]int32
		Quick         [15][]int32
		Bst           []int32
		ViewSerial    uint64
		ViewTick      uint64
		ViewPix       []game.Pixel
		ViewSnakes    []game.SnakeInfo
		ViewTop       []game.Entry
		ViewKills     []game.Kill
		ViewPeople    [2]int
		ViewBest      game.Entry
		ViewDirty     []uint64
		ViewFresh     []uint64
		ViewHeads     []game.Point
		ViewShield    []uint64
		ViewRanks     []int
	}
	stateOf := func(r *Replica) state {
		v := r.Acquire()
		defer v.Release()
		st := state{
			Tick: r.tick, Seq: r.seq, NSlots: r.nslots, Grid: slices.Clone(r.grid), Snakes: slices.Clone(r.snakes),
			Top: r.top, NTop: r.ntop, Players: r.players, Bots: r.bots, Best: r.best, ViewSerial: v.Serial,
			ViewTick: v.Tick, ViewPix: slices.Clone(v.Pix), ViewSnakes: slices.Clone(v.Snakes), ViewTop: slices.Clone(v.Top),
			ViewKills: slices.Clone(v.Kills), ViewPeople: [2]int{v.Players, v.Bots}, ViewBest: v.Best,
			ViewDirty: slices.Clone(v.Dirty), ViewFresh: slices.Clone(v.Fresh),
			At: slices.Clone(r.at), Hot: slices.Clone(r.hot),
			Prot: slices.Clone(r.prot), Bst: slices.Clone(r.bst), InProt: slices.Clone(r.inProt),
			ViewHeads: slices.Clone(v.Heads), ViewShield: slices.Clone(v.Shield),
		}
		for k := range st.Logs {
			if s := r.seq - uint64(k); s >= 1 && s <= r.seq && len(r.views.Writes(s)) > 0 {
				st.Logs[k] = slices.Clone(r.views.Writes(s))
			}
			if s := r.seq - uint64(k); s >= 1 && s <= r.seq {
				st.Changed[k] = slices.Clone(r.changed[s%keptSteps])
				st.Quick[k] = slices.Clone(r.quick[s%keptSteps])
			}
		}
		for i := range v.Snakes {
			st.ViewRanks = append(st.ViewRanks, v.Rank(i))
		}
		return st
	}
	// differs names the fields in which b differs from a; two replicas'
	// publishes never have the same Serial, so it is left out when
	// another replica is compared.
	differs := func(a, b state, other bool) []string {
		var fs []string
		va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
		for i := range va.NumField() {
			if other && va.Type().Field(i).Name == "ViewSerial" {
				continue
			}
			if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
				fs = append(fs, va.Type().Field(i).Name)
			}
		}
		return fs
	}
	fresh := func() *Replica {
		t.Helper()
		r, err := NewReplica(chunks)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	before := stateOf(f.r)
	for n := 0; n < len(d); n++ {
		if err := f.r.Apply(d[:n]); err == nil {
			t.Fatalf("delta cut at %d of %d applied", n, len(d))
		}
		if fs := differs(before, stateOf(f.r), false); len(fs) > 0 {
			t.Fatalf("delta cut at %d of %d, refused, changed the replica's %v", n, len(d), fs)
		}
	}
	for n := 0; n < len(chunks[0]); n += 7 {
		if _, err := NewReplica([][]byte{chunks[0][:n]}); err == nil {
			t.Fatalf("snapshot cut at %d applied", n)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	r := fresh()
	base := stateOf(r)
	refused, applied := 0, 0
	for k := 0; k < 500; k++ {
		b := slices.Clone(d)
		b[rng.IntN(len(b))] ^= byte(1 << rng.IntN(8))
		if err := r.Apply(b); err != nil {
			refused++
			if fs := differs(base, stateOf(r), false); len(fs) > 0 {
				t.Fatalf("flip %d, refused (%v), changed the replica's %v", k, err, fs)
			}
		} else {
			applied++
			r2 := fresh()
			if err := r2.Apply(b); err != nil {
				t.Fatalf("flip %d: applied after %d refused deltas, refused by a fresh replica: %v", k, refused, err)
			}
			if fs := differs(stateOf(r2), stateOf(r), true); len(fs) > 0 {
				t.Fatalf("flip %d: applied after %d refused deltas, differs from a fresh replica's in %v", k, refused, fs)
			}
			r = fresh()
			base = stateOf(r)
		}
		c := slices.Clone(chunks[0])
		c[rng.IntN(len(c))] ^= byte(1 << rng.IntN(8))
		_, _ = NewReplica([][]byte{c})
	}
	if refused == 0 {
		t.Fatalf("no flip refused in 500 (%d applied)", applied)
	}
	// The replicas that refused the last flips and the truncations take
	// the real delta and match the world.
	if err := r.Apply(d); err != nil {
		t.Fatal(err)
	}
	wv, rv := f.w.Acquire(), r.Acquire()
	err := sameView(wv, rv)
	wv.Release()
	rv.Release()
	if err != nil {
		t.Fatalf("after the flips, the real delta: %v", err)
	}
	if err := f.r.Apply(d); err != nil {
		t.Fatal(err)
	}
	f.check(t)
}

// TestAppendDeltaAllocs: once the world has warmed up, stepping and
// encoding a delta into a buffer with room allocate nothing.
func TestAppendDeltaAllocs(t *testing.T) {
	w, err := game.New(game.Config{W: 512, H: 128, MaxSnakes: 300, Bots: 200, Seed: 3, StartLen: 10})
	if err != nil {
		t.Fatal(err)
	}
	for k := uint64(1); k <= 400; k++ {
		w.Step(k)
	}
	e := NewEncoder(w)
	buf := make([]byte, 0, 1<<20)
	allocs := testing.AllocsPerRun(200, func() {
		w.Step(w.Feed().Tick() + 1)
		buf, err = e.AppendDelta(buf[:0])
	})
	if err != nil {
		t.Fatal(err)
	}
	if allocs != 0 {
		t.Fatalf("Step+AppendDelta: %v allocations a tick", allocs)
	}
}

// FuzzReplicaDecode: arbitrary bytes as a delta, as a snapshot chunk, or
// split in two chunks never panic the decoders.
func FuzzReplicaDecode(f *testing.F) {
	fl := newFollowed(f, 8, 64, 32, 4)
	for k := 0; k < 30; k++ {
		fl.step(f)
	}
	fl.e = NewEncoder(fl.w)
	chunks, _ := Snapshot(fl.w, 1<<20)
	fl.step(f)
	d, _ := fl.e.AppendDelta(nil)
	f.Add(d)
	f.Add(chunks[0])
	f.Add([]byte{})
	f.Add([]byte{Version, msgDelta, 0, 1, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := NewReplica(chunks)
		if err != nil {
			t.Fatal(err)
		}
		_ = r.Apply(b)
		if r2, err := NewReplica([][]byte{b}); err == nil {
			v := r2.Acquire()
			v.Release()
		}
		if len(b) > 2 {
			_, _ = NewReplica([][]byte{b[:len(b)/2], b[len(b)/2:]})
		}
	})
}

// FuzzReplicaFollows: random worlds and steps, the snapshot taken at a
// random tick, the chunks of a random size: the replica's view equals the
// world's after every delta.
func FuzzReplicaFollows(f *testing.F) {
	f.Add(uint64(1), uint8(10), uint8(40), uint16(300), uint8(3))
	f.Add(uint64(2), uint8(0), uint8(80), uint16(64), uint8(0))
	f.Fuzz(func(t *testing.T, seed uint64, warm, ticks uint8, chunk uint16, people uint8) {
		fl := newFollowed(t, seed, 64+int(seed%3)*32, 32+int(seed%2)*16, int(people%12))
		for k := 0; k < int(warm); k++ {
			fl.step(t)
		}
		fl.follow(t, MinChunk+int(chunk))
		for k := 0; k < int(ticks%120); k++ {
			fl.next(t)
		}
	})
}
