package render

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"snaked/game"
	"snaked/internal/vtmodel"
)

// This file tests the HUD's pieces over the playfield (tags, radar, kill
// feed) beyond what the golden screens show.

// TestHeadsKept checks, over randomized sessions on the incremental path,
// that the heads a renderer keeps are exactly the live heads on its
// playfield (what the radar and the tags rely on).
func TestHeadsKept(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		rng := rand.New(rand.NewPCG(seed, 2))
		s := newSim(seed, 300, 160, 10, 20, 400)
		r := newKept(ANSI16, 80, 24)
		h := &HUD{You: s.v.Snakes[0].ID, Follow: s.v.Snakes[0].ID, ShutdownIn: -1}
		incs := 0
		for f := 0; f < 1500; f++ {
			s.step()
			switch k := rng.IntN(100); {
			case k < 3:
				s.kill(rng.IntN(len(s.snakes)), "x")
			case k < 8:
				s.respawn(rng.IntN(len(s.snakes)))
			case k < 10:
				h.Follow = s.v.Snakes[rng.IntN(len(s.snakes))].ID
			case k < 12:
				sz := sizes[rng.IntN(len(sizes))]
				r.Resize(sz[0], sz[1])
			}
			r.Frame(&s.v, h)
			if r.inc {
				incs++
			}
			var want, got []int32
			for _, hd := range r.heads {
				got = append(got, int32(hd.slot()))
			}
			if r.pfRows > 0 {
				for i, sn := range s.v.Snakes {
					// The stand-in world lets bodies cover heads: a head is
					// on the playfield when its pixel is.
					hd := s.v.Heads[i]
					if p := s.v.At(hd.X, hd.Y); sn.Alive && p.Kind() == game.Head && p.Slot() == i && r.onPlayfield(&s.v, hd) {
						want = append(want, int32(i))
					}
				}
			}
			slices.Sort(got) // r.heads is in no order
			if r.pfRows > 0 && !slices.Equal(got, want) {
				t.Fatalf("seed %d frame %d (inc %v): heads %v, on the playfield %v", seed, f, r.inc, got, want)
			}
		}
		if incs < 500 {
			t.Errorf("seed %d: only %d incremental frames", seed, incs)
		}
	}
}

// TestHUDNeverHidesSnakes plays randomized sessions with tags, radar and a
// busy kill feed and checks, after every frame, that every playfield cell
// where the world shows a snake shows what a renderer without those
// overlays shows there (only the death and help boxes may cover snakes),
// and that text never lands on a HUD row.
func TestHUDNeverHidesSnakes(t *testing.T) {
	covered := 0 // cells of tags, radar or feed lines over a snake: the test is not vacuous
	for seed := uint64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		s := newSim(seed, 260+rng.IntN(100), 140, 10, 25, 300)
		s.feedKills(12)
		cols, rows := 80, 24
		p := Profile(1 + seed%3)
		if seed == 4 {
			p = Mono
		}
		r, ref := newKept(p, cols, rows), bare(p, cols, rows)
		h := &HUD{You: s.v.Snakes[0].ID, Follow: s.v.Snakes[0].ID, ShutdownIn: -1, Hint: true}
		term := vtmodel.New(cols, rows)
		for f := 0; f < 1500; f++ {
			s.step()
			switch k := rng.IntN(100); {
			case k < 2:
				s.kill(rng.IntN(len(s.snakes)), "snakec")
			case k < 6:
				s.respawn(rng.IntN(len(s.snakes)))
			case k < 7:
				h.HideTags = !h.HideTags
			case k < 8:
				h.Hint = !h.Hint
			case k < 9:
				h.Help = !h.Help
			case k < 10:
				sz := sizes[rng.IntN(len(sizes))]
				cols, rows = sz[0], sz[1]
				r.Resize(cols, rows)
				ref.Resize(cols, rows)
				term.Resize(cols, rows)
			}
			feed(term, r.Frame(&s.v, h), f)
			if err := check(term, r); err != nil {
				t.Fatalf("seed %d frame %d: %v", seed, f, err)
			}
			covered += noneHidden(t, r, ref, &s.v, h)
		}
	}
	if covered < 100 {
		t.Errorf("only %d overlay cells over a snake in all runs: the test proves little", covered)
	}
	t.Logf("%d tag, radar or feed cells over a snake, all showing the snake", covered)
}

// bare returns a renderer that draws neither the radar nor the kill feed:
// noneHidden's reference.
func bare(p Profile, cols, rows int) *Renderer {
	return newRenderer(p, cols, rows, 0, options{keepNext: true, noRadar: true, noFeed: true})
}

// noneHidden draws v with h on ref (bare), without tags, hint and help
// too, and fails t unless r's frame shows what ref's does on the HUD's
// rows and on every playfield cell where v shows a snake (but inside the
// death or help box). It returns how many of those cells r's tags, radar
// or feed lines cover.
func noneHidden(t *testing.T, r, ref *Renderer, v *game.View, h *HUD) (covered int) {
	t.Helper()
	hr := *h
	hr.HideTags, hr.Hint, hr.Help = true, false, false
	ref.Frame(v, &hr)
	if r.pfRows == 0 {
		return 0
	}
	box := rect{}
	if you, _ := v.Snake(h.You); h.Help || you != nil && !you.Alive && you.DeathTick != 0 {
		box = r.boxS.at
	}
	for y := 0; y < r.rows; y++ {
		for x := 0; x < r.cols; x++ {
			i := y*r.cols + x
			if y < r.pfTop || y >= r.pfTop+r.pfRows {
				if c := r.next[i]; c != ref.next[i] {
					t.Fatalf("tick %d: HUD row %d differs at %d: %+v, want %+v", v.Tick, y, x, c, ref.next[i])
				}
				continue
			}
			if x >= box.x0 && x < box.x1 && y >= box.y0 && y < box.y1 {
				continue
			}
			sy := y - r.pfTop
			a, b := v.At(r.camX+x, r.camY+2*sy), v.At(r.camX+x, r.camY+2*sy+1)
			if a.Kind() < game.Body && b.Kind() < game.Body {
				continue
			}
			if r.next[i] != ref.next[i] {
				t.Fatalf("tick %d: cell %d,%d shows %+v over a snake, want %+v", v.Tick, x, y, r.next[i], ref.next[i])
			}
			for _, p := range r.ovl[:r.novl] {
				o := p.unpack()
				if x >= o.x0 && x < o.x1 && y >= o.y0 && y < o.y1 && o != r.hintAt {
					covered++
				}
			}
		}
	}
	return covered
}

// TestRadarOverSnakes: the radar's lines do not hide the player's snake
// nor the body of a snake whose head is out of sight.
func TestRadarOverSnakes(t *testing.T) {
	for _, p := range []Profile{ANSI16, Mono} {
		v, h := alone()
		// bob's body runs along the playfield's first rows, his head far
		// right; alice's tail coils up under the radar too.
		for x := 150; x < 300; x++ {
			v.Pix[79*v.W+x] = game.MakePixel(game.Body, 1, 1)
			v.Pix[80*v.W+x] = game.MakePixel(game.Body, 1, 1)
		}
		for y := 78; y < 100; y++ {
			v.Pix[y*v.W+165] = game.MakePixel(game.Body, 0, 0)
		}
		r, ref := newKept(p, 80, 24), bare(p, 80, 24)
		covered := 0
		for i := 0; i <= radarDelay+2; i++ {
			v.Tick++
			r.Frame(v, h)
			covered += noneHidden(t, r, ref, v, h)
		}
		if !r.rad.on || covered < 4 {
			t.Errorf("%v: radar on %v, %d radar cells over a snake: the test proves little", p, r.rad.on, covered)
		}
	}
}

// TestRadarOnlyWhenAlone checks when the radar looks at every snake: never
// while another head is on the playfield, and while alone at most once per
// radarScanMin ticks; its text changes at most once per radarEvery ticks.
func TestRadarOnlyWhenAlone(t *testing.T) {
	v, h := crowd()
	r := newKept(ANSI16, 80, 24)
	for i := 0; i < 300; i++ {
		v.Tick++
		r.Frame(v, h)
	}
	if r.rad.scans != 0 || r.rad.on {
		t.Errorf("others in sight: %d scans, radar on %v", r.rad.scans, r.rad.on)
	}
	v, h = alone()
	r = newKept(ANSI16, 80, 24)
	const n = 600
	changes, shown := 0, 0
	var last [radarLines]string
	for i := 0; i < n; i++ {
		v.Tick++
		// bob circles: the distance changes all the time.
		v.Heads[1] = game.Point{X: 290 + i%40, Y: 160 - i%30}
		r.Frame(v, h)
		if r.rad.on {
			shown++
		}
		for k := range radarLines {
			if l := string(r.rad.line[k][:r.rad.ln[k]]); l != last[k] {
				last[k] = l
				changes++
			}
		}
	}
	if shown != n-radarDelay {
		t.Errorf("radar shown %d frames of %d, want all after the first %d", shown, n, radarDelay)
	}
	if max := (n-radarDelay)/radarScanMin + 1; r.rad.scans > max || r.rad.scans == 0 {
		t.Errorf("%d scans in %d ticks alone, want 1..%d", r.rad.scans, n-radarDelay, max)
	}
	if max := 2 * ((n-radarDelay)/radarEvery + 1); changes > max || changes < 10 {
		t.Errorf("radar text changed %d times, want 10..%d", changes, max)
	}
	t.Logf("alone %d ticks: %d scans, %d line changes", n-radarDelay, r.rad.scans, changes)
}

// TestStillWorldStillScreen: when nothing moves, nothing is sent, with
// tags, radar and a feed line on screen (no HUD piece churns).
func TestStillWorldStillScreen(t *testing.T) {
	for _, c := range []struct {
		mk   func() (*game.View, *HUD)
		warm int
	}{{crowd, 1}, {alone, radarDelay + 1}, {feedView, 1}} {
		v, h := c.mk()
		r := newKept(ANSI16, 80, 24)
		for i := 0; i < c.warm; i++ {
			v.Tick++
			r.Frame(v, h)
		}
		for i := 0; i < 2*radarEvery; i++ {
			v.Tick++
			if out := r.Frame(v, h); len(out) != 0 {
				t.Fatalf("frame %d of a still world sent %q", i, out)
			}
		}
	}
}

// TestTagLeash moves a head step by step away from its tag: the tag stays
// while the head is within the leash and follows it after.
func TestTagLeash(t *testing.T) {
	v, h := crowd()
	r := newKept(ANSI16, 80, 24)
	r.Frame(v, h)
	bob := v.Snakes[1].ID
	find := func() *tag {
		for i := range r.tags {
			if r.tags[i].id == bob {
				return &r.tags[i]
			}
		}
		return nil
	}
	t0 := find()
	if t0 == nil {
		t.Fatal("bob has no tag")
	}
	x0, y0 := t0.x, t0.y
	moves := 0
	for i := 1; i <= 20; i++ {
		// bob's head moves right a pixel a tick (the pixels do not matter
		// to the leash, only the head's position).
		v.Heads[1].X++
		v.Tick++
		setHead(v, 1)
		r.Frame(v, h)
		tg := find()
		if tg == nil {
			t.Fatalf("tick %d: bob's tag is gone", i)
		}
		hx := mod(v.Heads[1].X-r.camX, v.W)
		if tg.x != x0 || tg.y != y0 {
			moves++
			if hx <= x0+tg.n-1+leashX {
				t.Fatalf("tick %d: tag moved with the head at column %d, within the leash of %d..%d", i, hx, x0, x0+tg.n-1)
			}
			x0, y0 = tg.x, tg.y
		} else if hx > x0+tg.n-1+leashX {
			t.Fatalf("tick %d: head at column %d, beyond the leash of %d..%d, tag stayed", i, hx, x0, x0+tg.n-1)
		}
	}
	if moves == 0 {
		t.Error("the tag never followed")
	}
}

// setHead moves snake i's head pixel to its Head (the old head pixel
// becomes body).
func setHead(v *game.View, i int) {
	for k, p := range v.Pix {
		if p.Kind() == game.Head && p.Slot() == i {
			v.Pix[k] = game.MakePixel(game.Body, i, p.Colour())
		}
	}
	hd := v.Heads[i]
	v.Pix[mod(hd.Y, v.H)*v.W+mod(hd.X, v.W)] = game.MakePixel(game.Head, i, v.Snakes[i].Colour)
}

// TestStatusRowBoard: a renderer that keeps its status row (drawing it
// again only when what decides it changes) shows a leaderboard entry that
// did not fit as soon as it fits, drops one that no longer fits, and
// leaves the row alone when only entries past the first that did not fit
// change: each frame as a renderer composing whole frames draws it.
func TestStatusRowBoard(t *testing.T) {
	v, h := board()
	for i := 2; i < len(v.Top); i++ {
		v.Top[i].Name = fmt.Sprintf("long-name-%06d", i) // one of these does not fit
	}
	v.Top[1].Name = "b" // room for a short third entry
	r := newKept(ANSI16, 80, 24)
	sh := whole(r)
	frame := func(what string) {
		t.Helper()
		v.Tick += boardEvery // past the hold: each change shows
		r.Frame(v, h)
		sh.Frame(v, h)
		if err := same(r, sh); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	frame("first")
	k := int(r.rowsKey.shown) - 1 // the first entry that did not fit
	if k < 1 || k >= len(v.Top)-1 {
		t.Fatalf("%d of %d entries fit at 80 columns: the test wants some but not all", k, len(v.Top))
	}
	v.Top[k+1].Name = "z" // past the first that does not fit: no redraw needed
	frame("an entry past the first that does not fit renamed")
	if int(r.rowsKey.shown)-1 != k {
		t.Fatalf("entries deciding the row went from %d to %d", k+1, r.rowsKey.shown)
	}
	v.Top[k].Name = "x"
	frame("the first entry that did not fit now fits")
	if int(r.rowsKey.shown)-1 <= k {
		t.Fatalf("entry %d fits now, the row still shows %d entries", k, int(r.rowsKey.shown)-1)
	}
	v.Top[k].Name = "long-name-again!"
	frame("it no longer fits")
	v.Top[0].Length += 1000
	frame("the first entry grows")
}

// TestKeptTagsWereOverlays: in a crowd, a tag kept where it was is one of
// the last frame's overlays, rectangle for rectangle, which is what lets
// paintTags skip looking for it there (untouched).
func TestKeptTagsWereOverlays(t *testing.T) {
	c := newLoadCrowd(t, 1500, 60, 20)
	kept := 0
	for range 40 {
		c.step()
		v := c.w.Acquire()
		for j, r := range c.rs {
			was := append([]orect(nil), r.ovl[:r.novl]...)
			r.Frame(v, &c.hs[j])
			if !r.inc {
				continue
			}
			for _, tg := range r.tags {
				if tg.id == 0 || !tg.kept {
					continue
				}
				o := rect{tg.x, r.pfTop + tg.y, tg.x + tg.n, r.pfTop + tg.y + 1}.pack()
				if !slices.Contains(was, o) {
					t.Fatalf("session %d, tick %d: kept tag %q at %v was no overlay of the last frame (%v)", j, v.Tick, tg.txt[:tg.n], o, was)
				}
				kept++
			}
		}
		v.Release()
	}
	if kept == 0 {
		t.Fatal("no tag was kept")
	}
}

// TestTagLen: placeTag sizes a tag from tagLen before it writes the text
// (appendTag), so the two must agree for every kind of name and profile.
func TestTagLen(t *testing.T) {
	names := []string{"", "a", "bob", "exactly12chr", "a name longer than a tag holds", "caf\xc3\xa9"}
	for _, prof := range []Profile{ANSI16, Mono} {
		r := newKept(prof, 80, 24)
		for _, name := range names {
			for _, bot := range []bool{false, true} {
				s := game.SnakeInfo{Name: name, Bot: bot}
				if got, want := r.tagLen(&s), len(r.appendTag(nil, &s)); got != want {
					t.Errorf("profile %v, name %q, bot %v: tagLen %d, appendTag writes %d", prof, name, bot, got, want)
				}
			}
		}
	}
}

// statusText is what the status row of r's last frame reads.
func statusText(r *Renderer) string {
	var b strings.Builder
	for _, c := range r.vt.prev[(r.rows-1)*r.cols : r.rows*r.cols] {
		if c.ch() != 0 {
			b.WriteString(glyphText[c.ch()])
		} else {
			b.WriteByte(' ')
		}
	}
	return strings.TrimRight(b.String(), " ")
}

// TestStatusRowHold: the leaderboard and the player's rank change on the
// status row at most every boardEvery ticks: a change right after one
// waits for that, a change after a quiet spell shows at once, and the
// player's length shows at once; a whole-frame renderer shows the same.
func TestStatusRowHold(t *testing.T) {
	v, h := board()
	r := newKept(ANSI16, 100, 24)
	sh := whole(r)
	frame := func() string {
		t.Helper()
		v.Tick++
		r.Frame(v, h)
		sh.Frame(v, h)
		if err := same(r, sh); err != nil {
			t.Fatalf("tick %d: %v", v.Tick, err)
		}
		return statusText(r)
	}
	has := func(s, want string, yes bool) {
		t.Helper()
		if strings.Contains(s, want) != yes {
			t.Fatalf("tick %d: status row %q: %q shown %v, want %v", v.Tick, s, want, !yes, yes)
		}
	}
	has(frame(), "bot6 49", true)
	v.Top[0].Length = 50    // the change right after the first frame's board waits
	v.Snakes[3].Length = 30 // bot3 passes alice: she is 4th
	v.MarkRanks()
	for range boardEvery - 1 {
		s := frame()
		has(s, "bot6 49", true)
		has(s, "#4", false)
	}
	s := frame() // boardEvery ticks after the board was taken
	has(s, "bot6 50", true)
	has(s, "#4", true)
	for range 2 * boardEvery {
		frame()
	}
	v.Top[0].Length = 51 // after a quiet spell: at once
	has(frame(), "bot6 51", true)
	v.Top[0].Length = 52
	v.Snakes[0].Length = 26 // the player's length: at once, the board held
	s = frame()
	has(s, "len 26", true)
	has(s, "bot6 51", true)
}

// TestTagsNearestFirst: a screen with room for three tags names the three
// snakes nearest the player's, and a larger one names them all.
func TestTagsNearestFirst(t *testing.T) {
	mk := func() (*game.View, *HUD) {
		v := gview(400, 220, 1,
			gsnake{name: "me", x: 200, y: 110, dir: game.Right, n: 3},
			gsnake{name: "far", x: 236, y: 110, dir: game.Down, n: 4},
			gsnake{name: "near", x: 208, y: 110, dir: game.Down, n: 4},
			gsnake{name: "mid", x: 178, y: 110, dir: game.Down, n: 4},
			gsnake{name: "farther", x: 170, y: 110, dir: game.Down, n: 4},
			gsnake{name: "nearer", x: 222, y: 110, dir: game.Down, n: 4},
		)
		id := v.Snakes[0].ID
		return v, &HUD{You: id, Follow: id, ShutdownIn: -1}
	}
	tagged := func(r *Renderer) map[string]bool {
		m := map[string]bool{}
		for _, tg := range r.tags {
			if tg.id != 0 {
				m[string(tg.txt[:tg.n])] = true
			}
		}
		return m
	}
	v, h := mk()
	r := newKept(ANSI16, 80, 24)
	for range 3 {
		r.Frame(v, h)
		v.Tick++
	}
	if got := tagged(r); len(got) != 3 || !got["near"] || !got["mid"] || !got["nearer"] {
		t.Errorf("80x24 (room for %d): tags %v, want near, mid and nearer", r.tagRoom(), got)
	}
	v, h = mk()
	r = newKept(ANSI16, 120, 40)
	for range 3 {
		r.Frame(v, h)
		v.Tick++
	}
	if got := tagged(r); len(got) != 5 {
		t.Errorf("120x40 (room for %d): tags %v, want all five", r.tagRoom(), got)
	}
}

// TestSlotSet: the set of slots pruneHeads keeps answers exactly, with
// slots that share their hash and past the table's room (slotSetMax).
func TestSlotSet(t *testing.T) {
	for _, n := range []int{0, 1, 40, slotSetMax, slotSetMax + 1, 300} {
		var s slotSet
		var hs []headAt
		in := map[int]bool{}
		rng := rand.New(rand.NewPCG(uint64(n), 5))
		for range 2 * n {
			sl := rng.IntN(n+1) * 256 % 65536 // many share slot&255
			if rng.IntN(2) == 0 {
				sl = rng.IntN(65536)
			}
			if added := s.add(sl, hs); added == in[sl] {
				t.Fatalf("n %d: add(%d) = %v with the slot in the set %v", n, sl, added, in[sl])
			} else if added {
				hs = append(hs, mkHead(sl, 0, 0))
				in[sl] = true
			}
		}
		for sl := range 65536 {
			if s.has(sl, hs) != in[sl] {
				t.Fatalf("n %d: has(%d) = %v, want %v", n, sl, !in[sl], in[sl])
			}
		}
	}
}
