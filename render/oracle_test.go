package render

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"snaked/game"
	"snaked/internal/vtmodel"
)

// norm turns a model cell into the renderer's cell for what it looks like.
// A block glyph drawn in the default foreground gets a colour no frame
// uses, so it never matches.
func norm(c vtmodel.Cell) cell {
	col := func(k vtmodel.Color, fgAsPixel bool) uint8 {
		switch {
		case k == vtmodel.Default && fgAsPixel:
			return 200
		case k == vtmodel.Default:
			return def
		case k >= 0 && k < 16:
			return uint8(k) + 1
		}
		return 201
	}
	switch c.Ch {
	case vtmodel.Unknown:
		return unknown
	case ' ':
		b := col(c.BG, false)
		return pxOK(b, b)
	case '▀':
		return pxOK(col(c.FG, true), col(c.BG, false))
	case '▄':
		return pxOK(col(c.BG, false), col(c.FG, true))
	case '█':
		f := col(c.FG, true)
		return pxOK(f, f)
	}
	ch, ok := uint16(c.Ch), c.Ch > 0x20 && c.Ch < 0x7f
	if g, ext := extRune[c.Ch]; ext {
		ch, ok = g, true
	}
	if ok {
		if f, b := col(c.FG, false), col(c.BG, false); f < ncol && b < ncol {
			return mk(ch, f, b)
		}
	}
	return badCell
}

// extRune maps each extended glyph's rune to its code.
var extRune = func() map[rune]uint16 {
	m := map[rune]uint16{}
	for i, g := range extGlyph {
		if g != "" {
			m[[]rune(g)[0]] = uint16(i)
		}
	}
	return m
}()

// badCell stands for what the renderer never draws (an odd glyph or colour
// on the emulated screen); it equals no cell a frame can hold.
const badCell = cell(0xffff)

// pxOK is px, or badCell when a colour is out of the renderer's range.
func pxOK(top, bot uint8) cell {
	if top >= ncol || bot >= ncol {
		return badCell
	}
	return px(top, bot)
}

// check reports the first difference between the model's screen and the
// frame r meant to show, or between that frame and what r believes the
// terminal shows (shown).
func check(t *vtmodel.Term, r *Renderer) error {
	if err := shown(r); err != nil {
		return err
	}
	return checkScreen(t, r)
}

// shown reports the first difference between the frame r meant to show and
// what it believes the terminal shows (r.prev): they must be equal after
// every frame, as each frame starts from a copy of r.prev (begin).
func shown(r *Renderer) error {
	for j := range r.next {
		if r.vt.prev[j] != r.next[j] {
			return fmt.Errorf("cell %d,%d: the renderer believes the terminal shows %+v, the frame is %+v", j%r.cols, j/r.cols, r.vt.prev[j], r.next[j])
		}
	}
	return nil
}

// checkScreen reports the first difference between the model's screen and
// the frame r meant to show.
func checkScreen(t *vtmodel.Term, r *Renderer) error {
	if u := t.Unsupported(); len(u) > 0 {
		return fmt.Errorf("unsupported output: %q", u)
	}
	if !t.AltScreen() || t.CursorVisible() || t.Synchronized() {
		return fmt.Errorf("alt %v cursor %v sync %v", t.AltScreen(), t.CursorVisible(), t.Synchronized())
	}
	for y := 0; y < r.rows; y++ {
		for x := 0; x < r.cols; x++ {
			if got, want := norm(t.Cell(x, y)), r.next[y*r.cols+x]; got != want {
				return fmt.Errorf("cell %d,%d: got %+v (%+v) want %+v\nrow: %q", x, y, got, t.Cell(x, y), want, t.Line(y))
			}
		}
	}
	return nil
}

// feed writes b to t whole, byte by byte or in odd chunks.
func feed(t *vtmodel.Term, b []byte, how int) {
	switch how % 3 {
	case 0:
		t.Write(b)
	case 1:
		for i := range b {
			t.Write(b[i : i+1])
		}
	default:
		for len(b) > 0 {
			n := min(len(b), 1+len(b)%7)
			t.Write(b[:n])
			b = b[n:]
		}
	}
}

var sizes = [][2]int{{80, 24}, {1, 1}, {10, 5}, {39, 11}, {40, 12}, {41, 15}, {60, 16}, {120, 40}, {200, 60}, {500, 200}, {79, 23}}

// session plays a randomized session and checks every frame.
func session(t *testing.T, seed uint64, frames int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	// the coarse-index toggle's own generator, so that it does not move
	// rng's sequence
	coarse := rand.New(rand.NewPCG(seed, 2))
	// and the leaderboard names' (entries that grow or shrink by whole
	// names test what decides the status row's board)
	names := rand.New(rand.NewPCG(seed, 3))
	s := newSim(seed, 300+rng.IntN(900), 150+rng.IntN(100), 8, 25, 600) // up to three Fresh words a tile row
	for i := range s.v.Snakes {
		s.v.Top = append(s.v.Top, game.Entry{Slot: i, Name: s.v.Snakes[i].Name, Length: 25})
	}
	s.v.Snakes[3].Bot = true
	cols, rows := 80, 24
	r := newKept(ANSI16, cols, rows)
	sh := whole(r)
	term := vtmodel.New(cols, rows)
	h := &HUD{You: s.v.Snakes[0].ID, Follow: s.v.Snakes[0].ID, ShutdownIn: -1, Join: "ssh -p 2222 localhost", Players: 5}
	var total, incs, steps, small int
	for f := 0; f < frames; f++ {
		s.step()
		switch k := rng.IntN(200); {
		case k < 2:
			sz := sizes[rng.IntN(len(sizes))]
			cols, rows = sz[0], sz[1]
			r.Resize(cols, rows)
			sh.Resize(cols, rows)
			term.Resize(cols, rows)
		case k < 4:
			p := Profile(rng.IntN(4))
			r.SetProfile(p)
			sh.SetProfile(p)
		case k < 6:
			r.Invalidate()
		case k < 10:
			s.kill(rng.IntN(len(s.snakes)), "snakeb")
		case k < 16:
			s.respawn(rng.IntN(len(s.snakes)))
		case k < 18:
			h.Help = !h.Help
		case k < 20:
			h.Hint = !h.Hint
		case k < 22:
			h.Spectator = !h.Spectator
			h.You = 0
			if !h.Spectator {
				h.You = s.v.Snakes[0].ID
			}
		case k < 25:
			h.Follow = s.v.Snakes[rng.IntN(len(s.snakes))].ID
		case k < 27:
			h.Follow = 0
			h.Cam = game.Point{X: rng.IntN(2000) - 1000, Y: rng.IntN(2000) - 1000}
		case k < 29:
			h.ShutdownIn = rng.IntN(12) - 1
		case k < 30:
			h.Players = rng.IntN(3000)
		case k < 31:
			h.Spectators = rng.IntN(100)
		case k < 32:
			// the status row's figures (each alone, so that a renderer
			// keeping its text rows must notice each)
			switch sn := &s.v.Snakes[0]; rng.IntN(6) {
			case 5:
				b := &s.v.Snakes[1+rng.IntN(len(s.v.Snakes)-1)].Bot
				*b = !*b
			case 4:
				e := &s.v.Top[rng.IntN(len(s.v.Top))]
				e.Length = 20 + rng.IntN(90)
				if names.IntN(2) == 0 {
					e.Name = "nnnnnnnnnnnnnnnn"[:1+names.IntN(16)]
				}
			case 0:
				sn.DashReadyAt = s.v.Tick + uint64(rng.IntN(50))
			case 1:
				sn.BestLength = rng.IntN(100)
			case 2:
				sn.Kills = rng.IntN(10)
			default: // the player's rank, by another snake's length
				o := &s.v.Snakes[1+rng.IntN(len(s.v.Snakes)-1)]
				o.Length = 1 + rng.IntN(2*sn.Length+2)
				s.v.MarkRanks()
			}
		case k < 34:
			z := rng.IntN(101)
			r.SetZone(z)
			sh.SetZone(z)
		case k < 36 && h.Follow == 0:
			h.Cam.X += rng.IntN(9) - 4
			h.Cam.Y += rng.IntN(9) - 4
		case k < 38:
			// the renderer's three ways to an incremental frame: the
			// view's changed cells, its changed tiles, or no marks at all
			s.coarse = coarse.IntN(3) == 0
			s.hide(rng.IntN(4) == 0)
		case k < 42:
			// ticks this session did not draw (latest wins)
			for n := 1 + rng.IntN(6); n > 0; n-- {
				s.step()
			}
		}
		out := r.Frame(&s.v, h)
		sh.Frame(&s.v, h)
		if r.inc {
			incs++
		}
		if r.step {
			steps++
		}
		if r.pfRows == 0 {
			small++
		}
		total += len(out)
		feed(term, out, rng.IntN(3))
		if err := check(term, r); err != nil {
			t.Fatalf("seed %d frame %d (%dx%d, %v): %v\nframe bytes: %q", seed, f, cols, rows, r.prof, err, out)
		}
		if err := same(r, sh); err != nil {
			t.Fatalf("seed %d frame %d (%dx%d, %v): %v", seed, f, cols, rows, r.prof, err)
		}
		if out := r.Frame(&s.v, h); len(out) != 0 {
			t.Fatalf("seed %d frame %d: a repeated frame was not empty: %q", seed, f, out)
		}
		sh.Frame(&s.v, h)
	}
	if incs < (frames-small)/3 {
		t.Errorf("seed %d: only %d of %d frames of the game screen were incremental", seed, incs, frames-small)
	}
	if steps == 0 {
		t.Errorf("seed %d: only %d of %d frames were camera steps composed from the last frame", seed, steps, frames)
	}
	t.Logf("seed %d: %d frames (%d incremental, %d camera steps, %d small), mean %d B/frame", seed, frames, incs, steps, small, total/frames)
}

// whole returns a renderer like r that always composes whole frames: the
// reference for r's incremental frames.
func whole(r *Renderer) *Renderer {
	sh := newRenderer(r.prof, r.cols, r.rows, 0, options{keepNext: true, whole: true})
	sh.zone = r.zone
	return sh
}

// same reports the first cell where r's frame differs from sh's.
func same(r, sh *Renderer) error {
	if r.cols != sh.cols || r.rows != sh.rows || r.camX != sh.camX || r.camY != sh.camY {
		return fmt.Errorf("size or camera differ: %dx%d at %d,%d vs %dx%d at %d,%d", r.cols, r.rows, r.camX, r.camY, sh.cols, sh.rows, sh.camX, sh.camY)
	}
	for i := range r.next {
		if r.next[i] != sh.next[i] {
			return fmt.Errorf("cell %d,%d: incremental %+v, whole %+v", i%r.cols, i/r.cols, r.next[i], sh.next[i])
		}
	}
	return nil
}

func TestOracleSessions(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	for seed := uint64(1); seed <= 6; seed++ {
		session(t, seed, n)
	}
}
