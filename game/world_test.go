package game

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// script drives a world with pseudo-random player input from seed; it
// returns the ids that joined. check (if set) runs after every step.
func script(t testing.TB, w *World, seed uint64, ticks int, check bool) {
	r := rand.New(rand.NewPCG(seed, 1))
	var ids []ID
	for tk := 0; tk < ticks; tk++ {
		for k := r.IntN(6); k > 0; k-- {
			switch op := r.IntN(20); {
			case op == 0:
				if id, err := w.Join(fmt.Sprintf("p%d", r.IntN(50))); err == nil {
					ids = append(ids, id)
				}
			case op == 1 && len(ids) > 0:
				j := r.IntN(len(ids))
				w.Leave(ids[j])
				ids[j] = ids[len(ids)-1]
				ids = ids[:len(ids)-1]
			case op == 2 && len(ids) > 0:
				w.Dash(ids[r.IntN(len(ids))])
			case op == 3 && len(ids) > 0:
				w.Respawn(ids[r.IntN(len(ids))])
			case len(ids) > 0:
				w.Turn(ids[r.IntN(len(ids))], Dir(r.IntN(6)))
			}
		}
		w.Step(w.tick + 1)
		if check {
			if err := w.check(); err != nil {
				t.Fatalf("tick %d: %v", w.tick, err)
			}
		}
	}
}

// digest hashes everything a reader can see in the newest view.
func digest(w *World) uint64 {
	v := w.Acquire()
	defer v.Release()
	h := fnv.New64a()
	fmt.Fprint(h, v.Tick, v.Players, v.Bots, v.Best, v.Top)
	for _, s := range v.Snakes {
		fmt.Fprintf(h, "%+v", s)
	}
	var b [4]byte
	for _, p := range v.Pix {
		b[0], b[1], b[2], b[3] = byte(p), byte(p>>8), byte(p>>16), byte(p>>24)
		h.Write(b[:])
	}
	return h.Sum64()
}

func TestDeterminism(t *testing.T) {
	cfg := Config{W: 128, H: 96, MaxSnakes: 60, Bots: 10, BotTarget: 30, Seed: 42}
	var got [3]uint64
	for k := range got {
		seed := cfg.Seed
		if k == 2 {
			seed++ // a different seed must give a different world
		}
		c := cfg
		c.Seed = seed
		w, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		script(t, w, 9, 500, false)
		got[k] = digest(w)
	}
	if got[0] != got[1] {
		t.Fatalf("same seed and inputs, different worlds: %x %x", got[0], got[1])
	}
	if got[0] == got[2] {
		t.Fatal("different seeds gave the same world")
	}
}

// TestLongSim runs players and bots for many ticks and checks every
// invariant after every step.
func TestLongSim(t *testing.T) {
	ticks := 5000
	if testing.Short() {
		ticks = 1000
	}
	w, err := New(Config{W: 96, H: 64, MaxSnakes: 48, Bots: 12, BotTarget: 30, Seed: 3, StartLen: 4})
	if err != nil {
		t.Fatal(err)
	}
	script(t, w, 11, ticks, true)
	v := w.Acquire()
	defer v.Release()
	if v.Best.Length <= 4 || len(v.Top) == 0 {
		t.Fatalf("nothing grew: best %+v top %v", v.Best, v.Top)
	}
	for k := 1; k < len(v.Top); k++ {
		if v.Top[k].Length > v.Top[k-1].Length {
			t.Fatalf("leaderboard out of order: %v", v.Top)
		}
	}
	for i, s := range v.Snakes {
		if rk := v.Rank(i); s.Alive && (rk < 1 || (len(v.Top) > 0 && s.Length == v.Top[0].Length && rk != 1)) || !s.Alive && rk != 0 {
			t.Fatalf("bad rank %d: %+v", rk, s)
		}
	}
}

// TestConcurrentReaders runs readers and input goroutines against Step
// (run it with -race): every view a reader holds must stay unchanged until
// it releases it, and match its own tick's invariants. A reader stops at
// its first bad view, and the world stops stepping once one has, so a
// broken view fails the test at once instead of flooding it.
func TestConcurrentReaders(t *testing.T) {
	w, err := New(Config{W: 128, H: 64, MaxSnakes: 64, Bots: 16, Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	const readers = 4
	var stop, failed atomic.Bool
	var seen [readers]atomic.Int64 // ticks each reader has checked views of
	errs := make([]error, readers) // each reader's first error
	var wg, ready sync.WaitGroup
	ready.Add(readers)
	for i := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ready.Done()
			if errs[i] = readViews(w, &stop, &seen[i]); errs[i] != nil {
				failed.Store(true)
			}
		}()
	}
	for p := 0; p < 2; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(p), 2))
			var ids []ID
			for n := 0; !stop.Load() && n < 1_000_000; n++ {
				switch r.IntN(8) {
				case 0:
					if id, err := w.Join(fmt.Sprintf("g%d-%d", p, r.IntN(20))); err == nil {
						ids = append(ids, id)
					}
				case 1:
					if len(ids) > 0 {
						w.Leave(ids[0])
						ids = ids[1:]
					}
				default:
					if len(ids) > 0 {
						id := ids[r.IntN(len(ids))]
						w.Turn(id, Dir(1+r.IntN(4)))
						w.Dash(id)
						w.Respawn(id)
					}
				}
			}
		}()
	}
	// Every reader runs before the first step. Step 400 ticks, and on
	// (up to 20,000) until each reader has checked views of 2 ticks or
	// more, so they cannot all have read between steps; stop early once
	// one has failed.
	ready.Wait()
	overlapped := func() bool {
		for i := range seen {
			if seen[i].Load() < 2 {
				return false
			}
		}
		return true
	}
	for tk := uint64(1); tk <= 400 || (tk <= 20_000 && !overlapped()); tk++ {
		if failed.Load() {
			break
		}
		w.Step(tk)
	}
	stop.Store(true)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("reader %d: %v", i, err)
		}
	}
	if t.Failed() {
		return
	}
	var ns [readers]int64
	for i := range seen {
		if ns[i] = seen[i].Load(); ns[i] < 2 {
			t.Errorf("reader %d checked views of %d ticks while the world stepped %d: want 2 or more", i, ns[i], w.tick)
		}
	}
	t.Logf("%d ticks; each reader checked views of %v of them", w.tick, ns)
	w.Step(w.tick + 1) // inputs have quiesced: every goroutine is done
	if err := w.check(); err != nil {
		t.Fatal(err)
	}
}

func pixSum(v *View) uint64 {
	var s uint64
	for i, p := range v.Pix {
		s += uint64(p) * uint64(i|1)
	}
	return s
}

// readViews acquires and checks views until stop is set (at most a million
// times), counting in seen the ticks it has checked views of. It returns
// the first bad view's error and reads no more after it.
func readViews(w *World, stop *atomic.Bool, seen *atomic.Int64) error {
	last := uint64(0)
	for n := 0; !stop.Load() && n < 1_000_000; n++ {
		v := w.Acquire()
		if n == 0 || v.Tick != last {
			seen.Add(1)
		}
		err := checkHeld(v, last)
		last = v.Tick
		v.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// checkHeld checks a view while it is held: it is not older than tick
// last (the reader's previous view), every live snake's head is on a head
// pixel, and no pixel changes while it is being read (a concurrent write
// would also trip the race detector).
func checkHeld(v *View, last uint64) error {
	if v.Tick < last {
		return fmt.Errorf("view went back in time: %d after %d", v.Tick, last)
	}
	a := pixSum(v)
	for i, s := range v.Snakes {
		if h := v.Heads[i]; s.Used && s.Alive && v.At(h.X, h.Y).Kind() != Head {
			return fmt.Errorf("tick %d: head of %q at %v not a head pixel", v.Tick, s.Name, h)
		}
	}
	if b := pixSum(v); a != b {
		return fmt.Errorf("view changed while held (tick %d)", v.Tick)
	}
	return nil
}

// TestViewIncremental holds views for a while so the pool grows and old
// buffers are refreshed both from the change logs and by whole copies.
func TestViewIncremental(t *testing.T) {
	w, err := New(Config{W: 64, H: 64, MaxSnakes: 32, Bots: 20, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	var held []*View
	for tk := uint64(1); tk <= 600; tk++ {
		w.Step(tk)
		if err := w.check(); err != nil {
			t.Fatalf("tick %d: %v", tk, err)
		}
		if v := w.views.newest.Load(); v.st.seq != w.seq && w.Skipped() == 0 {
			t.Fatalf("tick %d: newest view is from step %d, world at %d", tk, v.st.seq, w.seq)
		}
		if r.IntN(3) == 0 && len(held) < maxViews-1 {
			held = append(held, w.Acquire())
		}
		if len(held) > 0 && r.IntN(2) == 0 {
			j := r.IntN(len(held))
			held[j].Release()
			held = append(held[:j], held[j+1:]...)
		}
	}
	if len(w.views.pool) < 3 || len(w.views.pool) > maxViews {
		t.Fatalf("pool size %d", len(w.views.pool))
	}
	// Hold every buffer: Step must skip publishing, not block or reuse.
	for _, v := range held {
		v.Release()
	}
	held = held[:0]
	for len(held) < maxViews {
		held = append(held, w.Acquire())
		w.Step(w.tick + 1)
	}
	before := w.Skipped()
	w.Step(w.tick + 1)
	if w.Skipped() != before+1 {
		t.Fatalf("publish with every buffer held: skipped %d -> %d", before, w.Skipped())
	}
	for _, v := range held {
		v.Release()
	}
	w.Step(w.tick + 1)
	if err := w.check(); err != nil {
		t.Fatal(err)
	}
}

// FuzzWorld turns random bytes into inputs and steps, checking every
// invariant after every step.
func FuzzWorld(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	f.Add([]byte("join join turn dash step step step leave respawn"))
	f.Add([]byte{0, 0, 0, 0, 7, 7, 7, 7, 2, 2, 2, 9, 9, 9, 9, 9})
	f.Fuzz(fuzzOne)
}

func fuzzOne(t *testing.T, in []byte) {
	if len(in) > 4096 {
		in = in[:4096]
	}
	w, err := New(Config{W: 32, H: 24, MaxSnakes: 6, Bots: 2, BotTarget: 5, Seed: 1, StartLen: 3, Protect: 3, DashCooldown: 5})
	if err != nil {
		t.Fatal(err)
	}
	var ids [8]ID
	for k := 0; k+1 < len(in); k += 2 {
		op, arg := in[k], in[k+1]
		id := ids[arg&7]
		switch op % 8 {
		case 0:
			if nid, err := w.Join(string([]byte{'n', arg % 5})); err == nil {
				ids[arg&7] = nid
			}
		case 1:
			w.Leave(id)
		case 2, 3:
			w.Turn(id, Dir(arg>>3))
		case 4:
			w.Dash(id)
		case 5:
			w.Respawn(id)
		case 6:
			w.Turn(ID(uint64(arg)<<16|uint64(arg)), Dir(arg)) // forged id
		default:
			for s := 0; s <= int(arg%4); s++ {
				w.Step(w.tick + 1)
				if err := w.check(); err != nil {
					t.Fatalf("tick %d: %v", w.tick, err)
				}
			}
		}
	}
}

// TestLengths: a count kept as snakes come and go ranks as a view's own
// count does (MarkRanks), and what SetRanks copies shrinks when the
// longest snake goes: a long snake once counted costs nothing after.
func TestLengths(t *testing.T) {
	var c Lengths
	v := &View{Snakes: []SnakeInfo{{Alive: true, Length: 5}, {Alive: true, Length: 9}, {Alive: true, Length: 5}, {Length: 3}}}
	for _, s := range v.Snakes {
		if s.Alive {
			c.Add(s.Length, 1)
		}
	}
	c.Add(100000, 1) // a snake that comes and goes
	c.Add(100000, -1)
	v.SetRanks(&c)
	if len(v.ranks) > 16 {
		t.Fatalf("ranks of %d lengths after the longest went", len(v.ranks))
	}
	got := []int{v.Rank(0), v.Rank(1), v.Rank(2), v.Rank(3), v.Rank(4)}
	v.MarkRanks()
	want := []int{v.Rank(0), v.Rank(1), v.Rank(2), v.Rank(3), v.Rank(4)}
	if !slices.Equal(got, want) || !slices.Equal(want, []int{2, 1, 2, 0, 0}) {
		t.Fatalf("ranks %v, counted whole %v, want [2 1 2 0 0]", got, want)
	}
}

// TestSpawnsForgotten steps worlds whose publishes replay nothing for long
// stretches: a lazy world never asked for pixels, one asked now and then,
// and worlds (lazy or not) whose readers hold every view buffer for
// hundreds of ticks.
// The spawns kept for marking expired protections (World.prot) must stay
// those a replay may still need, not every spawn since the start.
func TestSpawnsForgotten(t *testing.T) {
	cases := []struct {
		name string
		lazy bool
		ask  func(tick int) bool // asks for pixels after tick (lazy)
		hold bool                // readers hold every buffer on ticks 200..699
	}{
		{name: "lazy", lazy: true, ask: func(int) bool { return false }},
		{name: "lazy,asked", lazy: true, ask: func(tick int) bool { return tick%97 == 0 || tick%97 == 5 }},
		{name: "held", hold: true},
		{name: "lazy,held", lazy: true, ask: func(tick int) bool { return tick%50 == 0 }, hold: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, err := New(Config{W: 32, H: 24, MaxSnakes: 48, BotTarget: 48, Seed: 5, StartLen: 3, Protect: 4, LazyPixels: tc.lazy})
			if err != nil {
				t.Fatal(err)
			}
			var spawns []uint64 // the tick of every spawn
			spawned := func() {
				for i := range w.snakes {
					if s := &w.snakes[i]; s.used && s.spawnTick == w.tick {
						spawns = append(spawns, w.tick)
					}
				}
			}
			spawned()
			var held []*View
			worst, asked := 0, false
			for tick := 1; tick <= 2000; tick++ {
				if tc.ask != nil && tc.ask(tick) && w.WantPixels() {
					asked = true
				}
				w.Step(uint64(tick))
				spawned()
				// pixels come only when asked for (not by an ask while every
				// buffer was held: WantPixels says no view will come), and
				// with the first view published while the buffer with
				// pixels is free (always, when the test holds none)
				v := w.Acquire()
				if tc.lazy && v.Tick == w.tick {
					if !v.NoPixels && (!asked || !slices.Equal(v.Pix, w.grid)) || v.NoPixels && asked && len(held) == 0 {
						t.Fatalf("tick %d: asked for pixels %v, %d views held, the view has NoPixels %v, or pixels not the world's", tick, asked, len(held), v.NoPixels)
					}
					asked = asked && v.NoPixels
				}
				v.Release()
				if tc.hold && tick >= 200 && tick < 700 && len(held) < maxViews {
					held = append(held, w.Acquire())
				}
				if tick == 700 {
					for _, v := range held {
						v.Release()
					}
					held = nil
				}
				// a replay reaches back at most KeptSteps-1 steps, and a
				// spawn matters to it until its protection ends
				recent := 0
				for _, at := range spawns {
					if at+uint64(w.cfg.Protect)+KeptSteps > w.tick {
						recent++
					}
				}
				if len(w.prot) > recent {
					t.Fatalf("tick %d: %d spawns kept, %d of the %d so far recent enough for a replay", tick, len(w.prot), recent, len(spawns))
				}
				worst = max(worst, len(w.prot))
			}
			if tc.hold && w.Skipped() < 400 {
				t.Fatalf("only %d publishes skipped while every buffer was held", w.Skipped())
			}
			if len(spawns) < 5*worst {
				t.Fatalf("%d spawns in all, at most %d kept: too few spawns to tell", len(spawns), worst)
			}
			t.Logf("%d spawns, at most %d kept", len(spawns), worst)
		})
	}
}

// expiries is a Filler that records the from of each Expired call.
type expiries struct{ from []uint64 }

func (f *expiries) Fill(*View, uint64) {}

func (f *expiries) Expired(_ *Views, from, _ uint64) { f.from = append(f.from, from) }

// TestPublishExpires checks that every publish has the Filler drop or mark
// expired protections once: from the buffer's tick when it replays, from
// the tick published when it replays nothing (a buffer copied whole, a
// lazy view without pixels, every buffer held), so that what the Filler
// keeps for replays stays bounded (TestSpawnsForgotten).
func TestPublishExpires(t *testing.T) {
	for _, lazy := range []bool{false, true} {
		f := &expiries{}
		vs := NewViews(make([]Pixel, 64*32), 64, 32, 8, f)
		vs.unindexed = true
		if lazy {
			vs.Lazy()
		}
		var want []uint64
		publish := func(step uint64, from uint64) {
			vs.Publish(step, step*10, nil)
			want = append(want, from)
		}
		var held []*View
		if !lazy {
			publish(1, 10) // a new buffer: copied whole
			publish(2, 20) // another (the first is the newest)
			publish(3, 10) // the first again: replayed from its tick
			publish(4, 20)
			// from here each view is held: the two replay once more, the
			// pool grows by buffers copied whole, then every publish is
			// skipped
			publish(5, 30)
			held = append(held, vs.Acquire())
			publish(6, 40)
			held = append(held, vs.Acquire())
			for s := uint64(7); s <= 20; s++ {
				publish(s, s*10)
				held = append(held, vs.Acquire())
			}
		} else {
			publish(1, 10) // no pixels asked for
			publish(2, 20)
			vs.want = true
			publish(3, 30) // the buffer with pixels, never written: copied whole
			vs.want = true
			publish(4, 40) // the buffer with pixels is the newest: no pixels
			vs.want = true
			publish(5, 30) // replayed from its tick
		}
		for _, v := range held {
			v.Release()
		}
		if !slices.Equal(f.from, want) {
			t.Fatalf("lazy %v: Expired from %v, want %v", lazy, f.from, want)
		}
		if n := vs.Skipped(); !lazy && n < 8 {
			t.Fatalf("%d publishes skipped with every buffer held", n)
		}
	}
}

// TestRecordsIncremental checks the records of every view a world
// publishes against its snakes, in worlds whose publishes write only the
// records the steps since a buffer's last fill marked: with pixels in
// every view and with pixels on demand, people joining, turning,
// dashing, dying, respawning and leaving among bots, and readers holding
// views for up to 40 ticks (past the kept steps, so that some buffers are
// filled whole). A held view's records must not change.
func TestRecordsIncremental(t *testing.T) {
	for _, lazy := range []bool{false, true} {
		t.Run(fmt.Sprintf("lazy=%v", lazy), func(t *testing.T) {
			w, err := New(Config{W: 96, H: 64, MaxSnakes: 80, Bots: 30, Seed: 9, LazyPixels: lazy})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			r := rand.New(rand.NewPCG(3, 3))
			type hold struct {
				v     *View
				until uint64
				recs  []SnakeInfo
			}
			var ids []ID
			var held []hold
			joins, leaves, checked := 0, 0, 0
			for tk := uint64(1); tk <= 1000; tk++ {
				if r.IntN(6) == 0 && len(ids) < 40 {
					if id, err := w.Join(fmt.Sprintf("p%d", tk)); err == nil {
						ids = append(ids, id)
						joins++
					}
				}
				if r.IntN(25) == 0 && len(ids) > 0 {
					k := r.IntN(len(ids))
					w.Leave(ids[k])
					ids = append(ids[:k], ids[k+1:]...)
					leaves++
				}
				for _, id := range ids {
					switch r.IntN(12) {
					case 0:
						w.Turn(id, Dir(1+r.IntN(4)))
					case 1:
						w.Dash(id)
					case 2:
						w.Respawn(id)
					}
				}
				w.Step(tk)
				if v := w.views.newest.Load(); v.st.rec == w.seq {
					if err := w.checkRecords(v); err != nil {
						t.Fatalf("tick %d: %v", tk, err)
					}
					checked++
				}
				if r.IntN(3) == 0 && len(held) < maxViews-2 {
					v := w.Acquire()
					held = append(held, hold{v, tk + uint64(r.IntN(40)), slices.Clone(v.Snakes)})
				}
				keep := held[:0]
				for _, h := range held {
					if !slices.Equal(h.v.Snakes, h.recs) {
						t.Fatalf("tick %d: the records of a view held since tick %d changed", tk, h.v.Tick)
					}
					if tk >= h.until {
						h.v.Release()
					} else {
						keep = append(keep, h)
					}
				}
				held = keep
			}
			for _, h := range held {
				h.v.Release()
			}
			if joins < 20 || leaves < 5 || checked < 900 {
				t.Fatalf("%d joins, %d leaves, %d views checked: the script did not exercise the records", joins, leaves, checked)
			}
		})
	}
}

// TestJoinFrom: JoinNear's tick is the first whose view shows the snake,
// when the next Step comes at the next tick and when the clock skipped
// ticks, in a world crowded enough that a join evicts a bot; a join
// refused names no tick.
func TestJoinFrom(t *testing.T) {
	w, err := New(Config{W: 256, H: 128, MaxSnakes: 8, Bots: 2, BotTarget: 8, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for range 30 {
		w.Step(w.tick + 1)
	}
	shows := func(id ID) (uint64, bool) {
		v := w.Acquire()
		defer v.Release()
		_, ok := v.Snake(id)
		return v.Tick, ok
	}
	for k, skip := range []uint64{1, 1, 4, 1, 7} {
		id, from, err := w.JoinNear(fmt.Sprintf("p%d", k), 0)
		if err != nil {
			t.Fatal(err)
		}
		if want := w.tick + 1; from != want {
			t.Fatalf("join %d at tick %d: from %d, want %d", k, w.tick, from, want)
		}
		if tick, ok := shows(id); ok || tick >= from {
			t.Fatalf("join %d: the view of tick %d (from %d) shows the snake: %v", k, tick, from, ok)
		}
		w.Step(w.tick + skip)
		if tick, ok := shows(id); !ok || tick < from {
			t.Fatalf("join %d: the view of tick %d (from %d) does not show the snake", k, tick, from)
		}
	}
	if _, from, err := w.JoinNear("p0", 0); err != ErrNameTaken || from != 0 {
		t.Fatalf("a taken name: from %d, %v", from, err)
	}
}
