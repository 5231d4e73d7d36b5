package wire

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"snaked/game"
)

// regionFollower is a follower (a world and a replica of it on the whole
// delta) with a second replica on the regional form of the same deltas.
type regionFollower struct {
	*follower
	s      *Split
	rr     *Replica
	prev   []game.Pixel // rr's pixels at prevT
	prevT  uint64
	before []bool // the regions rr followed at prevT
}

func newRegionFollower(t testing.TB, f *follower, rw, rh int) *regionFollower {
	t.Helper()
	f.follow(t, 1<<20)
	chunks, err := Snapshot(f.w, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	rf := &regionFollower{follower: f}
	if rf.rr, err = NewReplica(chunks); err != nil {
		t.Fatal(err)
	}
	if err := rf.rr.FollowRegions(rw, rh); err != nil {
		t.Fatal(err)
	}
	if rf.s, err = NewSplit(f.e, rw, rh); err != nil {
		t.Fatal(err)
	}
	return rf
}

// replicaOfAll builds a replica from a snapshot's chunks that follows
// every region of rw x rh pixels.
func replicaOfAll(t testing.TB, chunks [][]byte, rw, rh int) *Replica {
	t.Helper()
	r, err := NewReplica(chunks)
	if err == nil {
		err = r.FollowRegions(rw, rh)
	}
	if err != nil {
		t.Fatal(err)
	}
	for k := range r.Regions().Count() {
		r.Follow(k)
	}
	return r
}

// followingAll steps f's world n times, then starts a region follower of
// rw x rh regions that follows every region.
func followingAll(t testing.TB, f *follower, n, rw, rh int) *regionFollower {
	t.Helper()
	for range n {
		f.step(t)
	}
	rf := newRegionFollower(t, f, rw, rh)
	for r := range rf.rr.Regions().Count() {
		rf.rr.Follow(r)
	}
	return rf
}

// next steps the world as follower.next does, applies the whole delta to
// one replica and its regional form (the followed regions' messages) to
// the other, and checks the second against the world.
func (rf *regionFollower) next(t testing.TB) {
	t.Helper()
	f := rf.follower
	f.steps(t)
	var err error
	if f.buf, err = f.e.AppendDeltaSplit(f.buf[:0], rf.s); err != nil {
		t.Fatal(err)
	}
	if err := f.r.Apply(f.buf); err != nil {
		t.Fatalf("tick %d: %v", f.w.Feed().Tick(), err)
	}
	f.check(t)
	var msgs [][]byte
	for _, r := range rf.s.Changed() {
		if rf.rr.Following(int(r)) {
			msgs = append(msgs, rf.s.Region(int(r)))
		}
	}
	f.rng.Shuffle(len(msgs), func(i, j int) { msgs[i], msgs[j] = msgs[j], msgs[i] })
	if err := rf.rr.ApplyRegions(rf.s.Global(), msgs); err != nil {
		t.Fatalf("tick %d: %v", f.w.Feed().Tick(), err)
	}
	rf.check(t)
}

// check compares rr's view with the world's: everything but the pixels
// of the regions it does not follow; and its Dirty covers every change in
// the regions it followed at the last check too.
func (rf *regionFollower) check(t testing.TB) {
	t.Helper()
	wv, rv := rf.w.Acquire(), rf.rr.Acquire()
	defer wv.Release()
	defer rv.Release()
	g := rf.rr.Regions()
	masked := slices.Clone(rv.Pix)
	for i := range masked {
		if !rf.rr.Following(g.Of(i)) {
			masked[i] = wv.Pix[i]
		}
	}
	if err := sameViewPix(wv, rv, masked); err != nil {
		t.Fatalf("tick %d: %v", wv.Tick, err)
	}
	if rf.prev != nil {
		// the pixels of regions not followed both times count as empty
		cur, prev := slices.Clone(rv.Pix), slices.Clone(rf.prev)
		for i := range prev {
			if r := g.Of(i); !rf.before[r] || !rf.rr.Following(r) {
				cur[i], prev[i] = 0, 0
			}
		}
		fp := slices.Clone(rv.FreshPix)
		for ty := 0; ty+1 < len(rv.FreshAt); ty++ {
			for i := rv.FreshAt[ty]; i < rv.FreshAt[ty+1]; i++ {
				for k := range 2 {
					if y := 2*ty + k; y < rv.H && cur[y*rv.W+int(rv.FreshX[i])] == 0 {
						fp[2*int(i)+k] = 0
					}
				}
			}
		}
		cv := withPix(rv, cur, fp)
		if err := dirtyCovers(cv, prev, rf.prevT); err != nil {
			t.Fatalf("tick %d: %v", wv.Tick, err)
		}
	}
	rf.prev = append(rf.prev[:0], rv.Pix...)
	rf.prevT = rv.Tick
	rf.before = rf.before[:0]
	for r := range g.Count() {
		rf.before = append(rf.before, rf.rr.Following(r))
	}
}

// withPix returns a copy of v with other pixels.
func withPix(v *game.View, pix, freshPix []game.Pixel) *game.View {
	return &game.View{Tick: v.Tick, Serial: v.Serial, W: v.W, H: v.H, Pix: pix, Snakes: v.Snakes, Heads: v.Heads, Top: v.Top,
		Players: v.Players, Bots: v.Bots, Best: v.Best, Kills: v.Kills, Dirty: v.Dirty, Fresh: v.Fresh,
		FreshX: v.FreshX, FreshAt: v.FreshAt, FreshBlk: v.FreshBlk, FreshPix: freshPix, Shield: v.Shield}
}

// TestRegionsFollowAll: a replica on the regional form of the deltas,
// following every region, has the views the world has, Dirty included,
// over hundreds of ticks of joins, leaves, deaths, dashes and deltas of
// several steps, with regions small enough that snakes cross their edges
// and the world's all the time.
func TestRegionsFollowAll(t *testing.T) {
	for _, c := range []struct {
		seed         uint64
		w, h, people int
		rw, rh       int
	}{
		{1, 128, 64, 10, 32, 16},
		{2, 256, 64, 40, 64, 32},
		{3, 200, 70, 30, 48, 16}, // regions cut short by the edges
	} {
		t.Run(fmt.Sprint(c.seed), func(t *testing.T) {
			f := newFollowed(t, c.seed, c.w, c.h, c.people)
			rf := followingAll(t, f, 50, c.rw, c.rh)
			for range 400 {
				rf.next(t)
			}
		})
	}
}

// TestRegionsQuiet: a replica on the regional form that applies runs of
// ticks quietly (a follower behind the stream), publishing only the last
// of each run, by ApplyRegions or Publish, shows the world's view then,
// its Dirty covering every change since the view before; its views stay
// at the tick before while a run is applied.
func TestRegionsQuiet(t *testing.T) {
	f := newFollowed(t, 5, 256, 64, 30)
	rf := followingAll(t, f, 50, 64, 32)
	for k, n := range []int{1, 3, 16, 17, 40, 2, 1, 5} {
		byPublish := k%2 == 1
		for j := range n {
			f.step(t)
			var err error
			if f.buf, err = f.e.AppendDeltaSplit(f.buf[:0], rf.s); err != nil {
				t.Fatal(err)
			}
			if err := f.r.Apply(f.buf); err != nil {
				t.Fatal(err)
			}
			f.check(t)
			var msgs [][]byte
			for _, r := range rf.s.Changed() {
				msgs = append(msgs, rf.s.Region(int(r)))
			}
			quiet := j < n-1 || byPublish
			if quiet {
				err = rf.rr.ApplyRegionsQuiet(rf.s.Global(), msgs)
			} else {
				err = rf.rr.ApplyRegions(rf.s.Global(), msgs)
			}
			if err != nil {
				t.Fatalf("run %d, tick %d: %v", k, j, err)
			}
			if quiet {
				viewStays(t, rf.rr, rf.prevT, k, j)
			}
		}
		if byPublish != rf.rr.Publish() {
			t.Fatalf("run %d: Publish reported %v", k, !byPublish)
		}
		rf.check(t)
	}
}

// TestRegionsFollowSome: a replica following some regions, starting and
// stopping at random (a region it starts arrives as a region snapshot),
// has the world's pixels in every region it follows and everything else
// of the world's views; its Dirty covers every change in the regions it
// kept following.
func TestRegionsFollowSome(t *testing.T) {
	f := newFollowed(t, 7, 256, 96, 40)
	for range 50 {
		f.step(t)
	}
	rf := newRegionFollower(t, f, 32, 16)
	g := rf.rr.Regions()
	var snap []byte
	for k := range 600 {
		for range 2 {
			r := f.rng.IntN(g.Count())
			if rf.rr.Following(r) {
				rf.rr.Unfollow(r)
				continue
			}
			snap = AppendRegionSnapshot(snap[:0], f.w, g, r)
			if got, err := rf.rr.ApplyRegionSnapshot(snap); err != nil || got != r {
				t.Fatalf("round %d: region %d's snapshot: region %d, %v", k, r, got, err)
			}
		}
		rf.next(t)
	}
	// a snapshot of another tick is a gap
	snap = AppendRegionSnapshot(snap[:0], f.w, g, 0)
	rf.next(t)
	if _, err := rf.rr.ApplyRegionSnapshot(snap); !errors.Is(err, ErrGap) {
		t.Fatalf("a stale region snapshot: %v, want ErrGap", err)
	}
}

// TestRegionsMissing: a global message without the message of a region
// the replica follows that changed is refused, and the replica is left as
// it was; without following that region, it applies.
func TestRegionsMissing(t *testing.T) {
	f := newFollowed(t, 4, 128, 64, 20)
	rf := followingAll(t, f, 30, 32, 16)
	f.step(t)
	var err error
	if f.buf, err = f.e.AppendDeltaSplit(f.buf[:0], rf.s); err != nil {
		t.Fatal(err)
	}
	ch := rf.s.Changed()
	if len(ch) < 2 {
		t.Fatalf("%d regions changed", len(ch))
	}
	var msgs [][]byte
	for _, r := range ch[1:] {
		msgs = append(msgs, rf.s.Region(int(r)))
	}
	tick := rf.rr.Tick()
	if err := rf.rr.ApplyRegions(rf.s.Global(), msgs); !errors.Is(err, ErrGap) || rf.rr.Tick() != tick {
		t.Fatalf("a region missing: %v, tick %d (was %d)", err, rf.rr.Tick(), tick)
	}
	rf.rr.Unfollow(int(ch[0]))
	if err := rf.rr.ApplyRegions(rf.s.Global(), msgs); err != nil {
		t.Fatal(err)
	}
}

// TestRegionsCorrupt: any byte of a global or region message changed, or
// the message cut short, is refused or applied, never a panic; refused,
// the replica is left as it was.
func TestRegionsCorrupt(t *testing.T) {
	f := newFollowed(t, 5, 128, 64, 20)
	for range 30 {
		f.step(t)
	}
	rf := newRegionFollower(t, f, 32, 16)
	chunks, err := Snapshot(f.w, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	fresh := func() *Replica { return replicaOfAll(t, chunks, 32, 16) }
	f.step(t)
	if f.buf, err = f.e.AppendDeltaSplit(f.buf[:0], rf.s); err != nil {
		t.Fatal(err)
	}
	global := slices.Clone(rf.s.Global())
	var msgs [][]byte
	for _, r := range rf.s.Changed() {
		msgs = append(msgs, slices.Clone(rf.s.Region(int(r))))
	}
	want := fresh()
	if err := want.ApplyRegions(global, msgs); err != nil {
		t.Fatal(err)
	}
	wv := want.Acquire()
	defer wv.Release()
	refused := 0
	try := func(what string, g []byte, ms [][]byte) {
		r := fresh()
		if err := r.ApplyRegions(g, ms); err != nil {
			refused++
			if err := r.ApplyRegions(global, msgs); err != nil {
				t.Fatalf("%s: refused, then the genuine messages too: %v", what, err)
			}
			v := r.Acquire()
			defer v.Release()
			if err := sameView(wv, v); err != nil {
				t.Fatalf("%s: refused, then the genuine messages left: %v", what, err)
			}
		}
	}
	defer func() {
		if refused == 0 {
			t.Error("no change was refused")
		}
	}()
	for k := range global {
		for _, b := range []byte{0, 0xff, global[k] ^ 1, global[k] + 1} {
			g := slices.Clone(global)
			g[k] = b
			try(fmt.Sprintf("byte %d of the global message", k), g, msgs)
		}
		try(fmt.Sprintf("the global message cut at %d", k), global[:k], msgs)
	}
	for i, m := range msgs {
		for k := range m {
			for _, b := range []byte{0, 0xff, m[k] ^ 1, m[k] + 3} {
				ms := slices.Clone(msgs)
				ms[i] = slices.Clone(m)
				ms[i][k] = b
				try(fmt.Sprintf("byte %d of region message %d", k, i), global, ms)
			}
			ms := slices.Clone(msgs)
			ms[i] = m[:k]
			try(fmt.Sprintf("region message %d cut at %d", i, k), global, ms)
		}
	}
}

// TestRegionsAllocs: once warmed up, splitting each tick's delta into its
// regional form and applying it to a replica that follows some regions
// allocate nothing.
func TestRegionsAllocs(t *testing.T) {
	w, err := game.New(game.Config{W: 512, H: 128, MaxSnakes: 300, Bots: 200, Seed: 3, StartLen: 10})
	if err != nil {
		t.Fatal(err)
	}
	for k := uint64(1); k <= 400; k++ {
		w.Step(k)
	}
	e := NewEncoder(w)
	s, err := NewSplit(e, 64, 32)
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := Snapshot(w, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReplica(chunks)
	if err == nil {
		err = r.FollowRegions(64, 32)
	}
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < s.Regions().Count(); k += 3 {
		r.Follow(k)
	}
	buf := make([]byte, 0, 1<<20)
	msgs := make([][]byte, 0, s.Regions().Count())
	tick := func() {
		w.Step(w.Feed().Tick() + 1)
		if buf, err = e.AppendDeltaSplit(buf[:0], s); err != nil {
			return
		}
		msgs = msgs[:0]
		for _, k := range s.Changed() {
			if r.Following(int(k)) {
				msgs = append(msgs, s.Region(int(k)))
			}
		}
		err = r.ApplyRegions(s.Global(), msgs)
	}
	for range 100 { // the buffers grow to their size
		tick()
	}
	allocs := testing.AllocsPerRun(200, tick)
	if err != nil {
		t.Fatal(err)
	}
	if allocs != 0 {
		t.Fatalf("Step+AppendDeltaSplit+ApplyRegions: %v allocations a tick", allocs)
	}
}

// TestSplitOf: a split finds each pixel's region and place in it without
// a division, as Regions.Of does with one, up to the largest worlds: every
// row's first and last pixel of worlds of widths from the least to the
// most, as tall as game.MaxPixels allows.
func TestSplitOf(t *testing.T) {
	for _, w := range []int{game.MinSide, 17, 1000, 2048, 9152, game.MaxSide - 1, game.MaxSide} {
		h := min(game.MaxSide, game.MaxPixels/w)
		g, err := NewRegions(w, h, 128, 64)
		if err != nil {
			t.Fatal(err)
		}
		s := &Split{g: g}
		s.tables()
		for y := range h {
			for _, x := range []int{0, w - 1} {
				i := y*w + x
				r, ly, lx := s.of(i)
				if r != g.Of(i) || ly != y%64 || lx != x%128 {
					t.Fatalf("%dx%d: pixel (%d,%d): region %d at (%d,%d), want %d at (%d,%d)", w, h, x, y, r, lx, ly, g.Of(i), x%128, y%64)
				}
			}
		}
	}
}

// FuzzRegionsDecode: arbitrary bytes as a global message, a region
// message or a region snapshot never panic a replica that follows
// regions, and a refused one leaves it as it was.
func FuzzRegionsDecode(f *testing.F) {
	fl := newFollowed(f, 8, 128, 64, 6)
	for range 30 {
		fl.step(f)
	}
	fl.e = NewEncoder(fl.w)
	s, err := NewSplit(fl.e, 32, 16)
	if err != nil {
		f.Fatal(err)
	}
	chunks, _ := Snapshot(fl.w, 1<<20)
	fl.step(f)
	if _, err := fl.e.AppendDeltaSplit(nil, s); err != nil {
		f.Fatal(err)
	}
	f.Add(slices.Clone(s.Global()), slices.Clone(s.Region(int(s.Changed()[0]))))
	f.Add(AppendRegionSnapshot(nil, fl.w, s.Regions(), 3), []byte{Version, msgRegion, 1, 2})
	f.Add([]byte{}, []byte{})
	global := slices.Clone(s.Global())
	var msgs [][]byte
	for _, k := range s.Changed() {
		msgs = append(msgs, slices.Clone(s.Region(int(k))))
	}
	fresh := func(t testing.TB) *Replica { return replicaOfAll(t, chunks, 32, 16) }
	want := fresh(f)
	if err := want.ApplyRegions(global, msgs); err != nil {
		f.Fatal(err)
	}
	wv := want.Acquire()
	defer wv.Release()
	f.Fuzz(func(t *testing.T, g, m []byte) {
		r := fresh(t)
		if err := r.ApplyRegions(g, [][]byte{m}); err != nil {
			// refused: the replica takes the genuine tick as if it had
			// never seen these
			if err := r.ApplyRegions(global, msgs); err != nil {
				t.Fatalf("refused, then the genuine messages too: %v", err)
			}
			v := r.Acquire()
			err := sameView(wv, v)
			v.Release()
			if err != nil {
				t.Fatalf("refused, then the genuine messages left: %v", err)
			}
		}
		_, _ = r.ApplyRegionSnapshot(g)
		_, _ = r.ApplyRegionSnapshot(m)
		_, _, _, _ = GlobalInfo(g)
		_, _, _ = GlobalRegions(g)
		_, _, _ = RegionInfo(m)
		_, _, _ = RegionSnapshotInfo(m)
		v := r.Acquire()
		v.Release()
	})
}

// TestRegionsAfterGap: after the encoder falls more steps behind than the
// feed keeps (a gap, and a rebase), a replica built from a snapshot then
// follows the regional form as before, whatever the snakes did meanwhile.
func TestRegionsAfterGap(t *testing.T) {
	f := newFollowed(t, 9, 128, 64, 20)
	rf := followingAll(t, f, 30, 32, 16)
	for range 20 {
		rf.next(t)
	}
	for range 20 { // more than the feed keeps
		f.step(t)
	}
	var err error
	if f.buf, err = f.e.AppendDeltaSplit(f.buf[:0], rf.s); !errors.Is(err, ErrGap) {
		t.Fatalf("20 steps behind: %v, want ErrGap", err)
	}
	chunks, err := Snapshot(f.w, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if f.r, err = NewReplica(chunks); err != nil {
		t.Fatal(err)
	}
	if rf.rr, err = NewReplica(chunks); err == nil {
		err = rf.rr.FollowRegions(32, 16)
	}
	if err != nil {
		t.Fatal(err)
	}
	for r := range rf.rr.Regions().Count() {
		rf.rr.Follow(r)
	}
	rf.prev, f.prevPix = nil, nil
	for range 100 {
		rf.next(t)
	}
}

// TestSplitWatchOnce: a snake whose record changes again while it is
// spawn-protected (here: it dashes) is listed once among the protections
// that will end, so the pixels of its body are filed once when its
// protection ends, and the replica still has the world's views.
func TestSplitWatchOnce(t *testing.T) {
	f := newFollowed(t, 4, 128, 64, 12)
	rf := followingAll(t, f, 5, 32, 16)
	dashed := 0
	for range 300 {
		v := f.w.Acquire()
		for _, id := range f.p.ids {
			if s, ok := v.Snake(id); ok && s.Alive && v.Tick < s.ProtectedUntil && s.DashReadyAt <= v.Tick {
				f.w.Dash(id)
				dashed++
			}
		}
		v.Release()
		rf.next(t)
		seen := map[protected]bool{}
		for _, p := range rf.s.prot {
			if seen[p] {
				t.Fatalf("tick %d: slot %d's protection until %d listed twice", f.w.Feed().Tick(), p.slot, p.until)
			}
			seen[p] = true
		}
	}
	if dashed == 0 {
		t.Fatal("no protected snake dashed")
	}
}
