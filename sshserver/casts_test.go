package sshserver

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"snaked/game"
	"snaked/internal/testkit"
	"snaked/internal/vtmodel"
	"snaked/render"
)

// castRig is a world with bots and a cast on it with one spectator, as
// the cast tests drive them by hand.
type castRig struct {
	w   *game.World
	m   *metrics
	cs  casts
	c   *cast
	hud *render.HUD
}

func newCastRig(t *testing.T, k castKey) *castRig {
	g := &castRig{w: testWorld(t, 4), m: newMetrics(), hud: &render.HUD{Spectator: true, ShutdownIn: -1}}
	g.c = g.cs.move(nil, k)
	return g
}

// view steps the world to tick and returns its newest view, the HUD
// following the leader; the caller releases it.
func (g *castRig) view(t *testing.T, tick uint64) *game.View {
	t.Helper()
	g.w.Step(tick)
	v := g.w.Acquire()
	if len(v.Top) == 0 {
		v.Release()
		t.Fatal("no snake to follow")
	}
	g.hud.Follow = v.Snakes[v.Top[0].Slot].ID
	return v
}

// TestCastFrames drives one cast through a world's ticks for spectators
// that take its frames in every way: each frame, one frame in three (the
// missed ones together), too far behind (a Snapshot), and from the start
// only at tick 12. Every terminal must show what the cast's renderer
// means.
func TestCastFrames(t *testing.T) {
	k := castKey{cols: 90, rows: 30, prof: render.ANSI256}
	g := newCastRig(t, k)
	cs, c, m, hud := &g.cs, g.c, g.m, g.hud
	type spec struct {
		every int    // takes a frame every this many ticks
		from  uint64 // from this tick on
		seq   uint64
		term  *vtmodel.Term
		snaps int
	}
	specs := []*spec{{every: 1, from: 1}, {every: 3, from: 1}, {every: 11, from: 1}, {every: 1, from: 12}}
	for _, s := range specs {
		s.term = vtmodel.New(k.cols, k.rows)
	}
	ref := render.New(render.ANSI256, k.cols, k.rows) // the same frames, unshared
	refTerm := vtmodel.New(k.cols, k.rows)
	for tick := uint64(1); tick <= 60; tick++ {
		v := g.view(t, tick)
		refTerm.Write(ref.Frame(v, hud))
		ref.Release()
		for i, s := range specs {
			if tick < s.from || (tick-s.from)%uint64(s.every) != 0 {
				continue
			}
			b, buf, now, snap := c.frame(v, hud, s.seq, m)
			if snap {
				s.snaps++
			}
			want := s.seq == 0 || now-s.seq >= castKeep
			if snap != want {
				t.Fatalf("tick %d, spectator %d at %d of %d: snapshot %v, want %v", tick, i, s.seq, now, snap, want)
			}
			s.seq = now
			s.term.Write(b)
			buf.done()
			if y, got, want := firstDiff(s.term, refTerm); y >= 0 {
				t.Fatalf("tick %d, spectator %d (every %d): row %d is\n%q\nwant (an unshared renderer's)\n%q", tick, i, s.every, y, got, want)
			}
		}
		v.Release()
	}
	if got := counter(t, m.castFrames); got != 60 {
		t.Errorf("cast frames %v for 60 ticks, want 60 (one a tick, whoever asks)", got)
	}
	if specs[0].snaps != 1 || specs[1].snaps != 1 || specs[3].snaps != 1 || specs[2].snaps < 5 {
		t.Errorf("snapshots %d, %d, %d, %d: want 1, 1, >= 5 (11 ticks behind each time), 1",
			specs[0].snaps, specs[1].snaps, specs[2].snaps, specs[3].snaps)
	}
	// A cast lives while spectators are on it: a second spectator, then
	// the first moves to another size, then both are gone.
	if got := cs.move(nil, k); got != c {
		t.Fatal("a second spectator of the same screen got another cast")
	}
	other := cs.move(c, castKey{cols: 80, rows: 24})
	if n := cs.len(); n != 2 || other == c {
		t.Fatalf("%d casts after a spectator moved to another size, want 2", n)
	}
	cs.leave(c)
	if n := cs.len(); n != 1 {
		t.Errorf("%d casts after the last spectator of one left, want 1", n)
	}
	cs.leave(other)
	if n := cs.len(); n != 0 {
		t.Errorf("%d casts after every spectator left, want 0", n)
	}
}

// firstDiff returns the first row where two terminals look different
// (looks), and that row of each; -1 when none.
func firstDiff(a, b *vtmodel.Term) (int, string, string) {
	cols, rows := a.Size()
	for y := range rows {
		for x := range cols {
			if looks(a.Cell(x, y)) != looks(b.Cell(x, y)) {
				return y, fmt.Sprintf("%s (cell %d: %+v)", a.Line(y), x, a.Cell(x, y)), fmt.Sprintf("%s (%+v)", b.Line(y), b.Cell(x, y))
			}
		}
	}
	return -1, "", ""
}

// looks is what a cell shows: a half-block cell's top and bottom
// colours however drawn (a space in background b, or a full block in
// foreground b, looks like two halves of b), else its glyph and colours.
func looks(c vtmodel.Cell) [3]int {
	switch c.Ch {
	case ' ':
		return [3]int{0, int(c.BG), int(c.BG)}
	case '▀':
		return [3]int{0, int(c.FG), int(c.BG)}
	case '▄':
		return [3]int{0, int(c.BG), int(c.FG)}
	case '█':
		return [3]int{0, int(c.FG), int(c.FG)}
	}
	if c.Rev {
		c.FG, c.BG = c.BG, c.FG
	}
	return [3]int{int(c.Ch), int(c.FG), int(c.BG)}
}

// TestSpectatorsShareFrames: spectators who follow the leader on
// terminals of one size share one renderer (a cast frame a tick for all
// of them, and no Snapshot when another snake takes the lead) and see
// the same screen; one that frees its camera and
// follows again is back on the cast.
func TestSpectatorsShareFrames(t *testing.T) {
	h := start(t, testConfig(t), testWorld(t, 3))
	a := play(t, h.dial("watch"), 100, 30)
	b := play(t, h.dial("watch"), 100, 30)
	c := play(t, h.dial("watch"), 80, 24)
	for _, tm := range []*term{a, b, c} {
		if !testkit.Eventually(10*time.Second, func() bool { return tm.bytes() > 500 }) {
			t.Fatal("no frames for a spectator")
		}
		// f (follow): a key, so no controls hint, which shows for a
		// spectator's first seconds until a key.
		tm.send("f")
	}
	noHint := func() bool {
		h.srv.mu.Lock()
		defer h.srv.mu.Unlock()
		n := 0
		for _, s := range h.srv.live {
			s.fmu.Lock()
			if s.cast != nil && !s.cast.key.hint {
				n++
			}
			s.fmu.Unlock()
		}
		return n == 3
	}
	if !testkit.Eventually(5*time.Second, noHint) {
		t.Fatal("the spectators' keys did not take their controls hint away")
	}
	same := func() bool { return a.screen() == b.screen() && a.screen() != "" }
	if !testkit.Eventually(5*time.Second, same) {
		t.Fatalf("two spectators of the leader at 100x30 see different screens:\n%s\n%s", a.screen(), b.screen())
	}
	inUse := map[*cast]int{}
	h.srv.mu.Lock()
	for _, s := range h.srv.live {
		s.fmu.Lock()
		inUse[s.cast]++
		s.fmu.Unlock()
	}
	h.srv.mu.Unlock()
	if len(inUse) != 2 || inUse[nil] != 0 {
		t.Errorf("spectators at two sizes on %d casts (%v), want 2", len(inUse), inUse)
	}
	// Over a second: one cast frame a tick for each size, where each
	// spectator drew one a tick before.
	f0, s0 := counter(t, h.srv.m.castFrames), counter(t, h.srv.m.castSnaps)
	v := h.w.Acquire()
	t0 := v.Tick
	v.Release()
	time.Sleep(time.Second)
	v = h.w.Acquire()
	ticks := float64(v.Tick - t0)
	v.Release()
	f1, s1 := counter(t, h.srv.m.castFrames), counter(t, h.srv.m.castSnaps)
	if ticks < 3 || f1-f0 > 2*ticks+2 || f1-f0 < ticks {
		t.Errorf("%v cast frames in %v ticks for 3 spectators at 2 sizes: want about 2 a tick", f1-f0, ticks)
	}
	if s1 != s0 {
		t.Errorf("%v snapshots while the spectators kept up", s1-s0)
	}
	// The free camera draws with the session's own renderer; following
	// again takes the cast's frames again (after a Snapshot).
	offCasts := func() map[*session]bool {
		off := map[*session]bool{}
		h.srv.mu.Lock()
		defer h.srv.mu.Unlock()
		for _, s := range h.srv.live {
			s.fmu.Lock()
			if s.cast == nil {
				off[s] = true
			}
			s.fmu.Unlock()
		}
		return off
	}
	before := offCasts() // none, unless a slow write made one solo
	b.send("\x1b[C")
	if !testkit.Eventually(5*time.Second, func() bool { return !same() }) {
		t.Fatal("a spectator with the free camera still sees the leader's cast")
	}
	var bs *session // b's session: the spectator that left its cast
	for s := range offCasts() {
		if !before[s] {
			bs = s
		}
	}
	if bs == nil {
		t.Fatal("no spectator left its cast for the free camera")
	}
	b.send("f")
	if !testkit.Eventually(5*time.Second, same) {
		t.Fatalf("a spectator following the leader again does not see the cast:\n%s\n%s", a.screen(), b.screen())
	}
	// The screens can match a tick before the session is back on the cast
	// (its own renderer draws the leader too); the snapshot follows. A
	// session one of whose writes took stallAfter (a machine loaded by
	// the other tests) is a slow client, which draws on its own renderer
	// for good and takes no cast's snapshot.
	if !testkit.Eventually(20*time.Second, func() bool { return counter(t, h.srv.m.castSnaps) > s1 || bs.solo.Load() }) {
		t.Error("no snapshot for the spectator back on the cast")
	} else if counter(t, h.srv.m.castSnaps) == s1 {
		t.Log("the spectator's writes were slow here (solo): no cast to go back to")
	}
	// A slow client (solo) leaves its cast for a renderer of its own.
	var slow *session
	h.srv.mu.Lock()
	for _, s := range h.srv.live {
		if s.user == "watch" {
			slow = s
			break
		}
	}
	h.srv.mu.Unlock()
	slow.solo.Store(true)
	if !testkit.Eventually(5*time.Second, func() bool {
		slow.fmu.Lock()
		defer slow.fmu.Unlock()
		return slow.cast == nil && slow.cv.r != nil
	}) {
		t.Error("a solo spectator stayed on its cast")
	}
	// A spectator that keeps changing its terminal's size is on one cast
	// at a time: the casts never outnumber the spectators.
	most := 0
	for i := range 20 {
		if err := b.sess.WindowChange(30+i, 100+i); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Millisecond)
		most = max(most, h.srv.casts.len())
	}
	if most > 3 {
		t.Errorf("%d casts at once for 3 spectators", most)
	}
	// Gone with their spectators.
	for _, tm := range []*term{a, b, c} {
		tm.send("q")
		tm.wait()
	}
	if !testkit.Eventually(5*time.Second, func() bool { return h.srv.casts.len() == 0 }) {
		t.Errorf("%d casts after every spectator left", h.srv.casts.len())
	}
}

// TestCastBufferHeld: a cast frame a spectator has not written yet keeps
// its bytes however many frames the cast makes meanwhile; written, its
// buffer is filled again.
func TestCastBufferHeld(t *testing.T) {
	g := newCastRig(t, castKey{cols: 80, rows: 24, prof: render.ANSI16})
	frame := func(tick, seq uint64) ([]byte, *castBuf, uint64) {
		v := g.view(t, tick)
		defer v.Release()
		b, buf, now, _ := g.c.frame(v, g.hud, seq, g.m)
		return b, buf, now
	}
	_, _, seq := frame(1, 0) // the Snapshot
	held, hbuf, seq := frame(2, seq)
	if hbuf == nil {
		t.Fatal("the next frame came without its buffer")
	}
	want := bytes.Clone(held)
	bufs := map[*castBuf]bool{hbuf: true}
	for tick := uint64(3); tick < 3+3*castKeep; tick++ {
		var b []byte
		var buf *castBuf
		b, buf, seq = frame(tick, seq)
		if !bytes.Equal(held, want) {
			t.Fatalf("tick %d: a held frame's bytes changed", tick)
		}
		if buf == hbuf || len(b) > 0 && &b[0] == &held[0] {
			t.Fatalf("tick %d: a held frame's buffer handed out again", tick)
		}
		bufs[buf] = true
		buf.done()
	}
	hbuf.done()
	if len(bufs) > castKeep+1 {
		t.Errorf("%d buffers for %d frames: written ones are not filled again", len(bufs), 3*castKeep+1)
	}
}

// TestCastSameTickNewHUD: a HUD that changes while the world's tick does
// not (a gateway's notice while its simulation restarts) makes a new
// frame for the cast's spectators; an unchanged one does not.
func TestCastSameTickNewHUD(t *testing.T) {
	g := newCastRig(t, castKey{cols: 80, rows: 24, prof: render.ANSI16})
	c, m, hud := g.c, g.m, g.hud
	term := vtmodel.New(80, 24)
	v := g.view(t, 1)
	defer v.Release()
	b, buf, seq, _ := c.frame(v, hud, 0, m)
	term.Write(b)
	buf.done()
	b, buf, seq2, _ := c.frame(v, hud, seq, m)
	buf.done()
	if len(b) != 0 || seq2 != seq {
		t.Fatalf("the same tick and HUD again: %d bytes, frame %d after %d", len(b), seq2, seq)
	}
	hud.Notice = "world restarting"
	b, buf, _, _ = c.frame(v, hud, seq, m)
	term.Write(b)
	buf.done()
	if !strings.Contains(term.Line(0), "world restarting") {
		t.Errorf("the notice is not on the banner: %q", term.Line(0))
	}
}
