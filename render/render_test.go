package render

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"snaked/game"
	"snaked/internal/vtmodel"
)

func TestDetectProfile(t *testing.T) {
	for _, c := range []struct {
		term string
		env  []string
		want Profile
	}{
		{"xterm-256color", nil, ANSI256},
		{"xterm-256color", []string{"COLORTERM=truecolor"}, TrueColor},
		{"xterm", nil, ANSI16},
		{"xterm-kitty", nil, TrueColor},
		{"screen", nil, ANSI16},
		{"tmux-256color", nil, ANSI256},
		{"linux", nil, ANSI16},
		{"xterm-256color", []string{"NO_COLOR=1"}, Mono},
		{"dumb", nil, Mono},
		{"vt100", nil, Mono},
		{"", nil, Mono},
		{"xterm", []string{"garbage", "TERM=dumb"}, ANSI16},
	} {
		if got := DetectProfile(c.term, c.env); got != c.want {
			t.Errorf("DetectProfile(%q, %q) = %v, want %v", c.term, c.env, got, c.want)
		}
	}
}

// screen renders one frame of s with h at cols x rows and returns the model.
func screen(t *testing.T, p Profile, cols, rows int, v *game.View, h *HUD) (*vtmodel.Term, []byte) {
	t.Helper()
	r := newKept(p, cols, rows)
	term := vtmodel.New(cols, rows)
	out := r.Frame(v, h)
	term.Write(out)
	if err := check(term, r); err != nil {
		t.Fatal(err)
	}
	return term, out
}

func text(term *vtmodel.Term) string {
	_, rows := term.Size()
	var b strings.Builder
	for y := 0; y < rows; y++ {
		b.WriteString(term.Line(y))
		b.WriteByte('\n')
	}
	return b.String()
}

func TestScreens(t *testing.T) {
	s, h := scenario()
	s.step()
	h.Players, h.Spectators = 5, 2
	term, out := screen(t, ANSI16, 80, 24, &s.v, h)
	all := text(term)
	for _, want := range []string{"snaked", "5 playing, 2 watching", "ssh -p 2222 snaked.example", "snakea  len 25", "#1", "kills 0", "dash ok", "1 snakea 25"} {
		if !strings.Contains(all, want) {
			t.Errorf("80x24 screen lacks %q:\n%s", want, all)
		}
	}
	if !bytes.HasPrefix(bytes.TrimPrefix(out, []byte(syncOn)), []byte("\x1b[?1049h\x1b[?25l")) {
		t.Errorf("first frame: want synchronized output, alt screen and hidden cursor; starts %q", out[:min(len(out), 30)])
	}
	// Own head bright white, in the middle of the playfield.
	hd := s.v.Heads[0]
	r := newKept(ANSI16, 80, 24)
	r.Frame(&s.v, h)
	x, y := mod(hd.X-r.camX, s.v.W), mod(hd.Y-r.camY, s.v.H)
	c := r.next[(r.pfTop+y/2)*80+x]
	if got := c.fg(); y%2 == 1 {
		got = c.bg()
		if got != ownHeadCol {
			t.Errorf("own head cell %+v, want bright white", c)
		}
	} else if got != ownHeadCol {
		t.Errorf("own head cell %+v, want bright white", c)
	}

	h.ShutdownIn = 7
	h.Hint = true
	all = text(first(t, ANSI16, 80, 24, &s.v, h))
	for _, want := range []string{"SHUTTING DOWN IN 7", "arrows/wasd turn"} {
		if !strings.Contains(all, want) {
			t.Errorf("screen lacks %q:\n%s", want, all)
		}
	}
	h.Help = true
	if all = text(first(t, ANSI16, 80, 24, &s.v, h)); !strings.Contains(all, "HOW TO PLAY") {
		t.Errorf("help overlay missing:\n%s", all)
	}
	h.Help, h.Hint = false, false

	s.v.Tick = 700
	s.kill(0, "bob")
	s.v.Snakes[0].SpawnTick = 50
	all = text(first(t, ANSI16, 80, 24, &s.v, h))
	for _, want := range []string{"YOU DIED", "length 25", "kills 0", "lived  1m05s", "killed by bob", "space or enter to respawn"} {
		if !strings.Contains(all, want) {
			t.Errorf("death overlay lacks %q:\n%s", want, all)
		}
	}

	all = text(first(t, ANSI16, 39, 11, &s.v, h))
	if !strings.Contains(all, "please enlarge") || !strings.Contains(all, "now 39x11") {
		t.Errorf("small terminal:\n%s", all)
	}
	for _, sz := range [][2]int{{40, 12}, {45, 14}} {
		all = text(first(t, ANSI16, sz[0], sz[1], &s.v, h))
		if strings.Contains(all, "enlarge") || !strings.Contains(all, "YOU DIED") || !strings.Contains(all, "DOWN IN 7") {
			t.Errorf("compact %v:\n%s", sz, all)
		}
	}

	h.You = 99 << 16 // not in the view yet
	if all = text(first(t, ANSI16, 80, 24, &s.v, h)); !strings.Contains(all, "spawning") {
		t.Errorf("player without a snake yet:\n%s", all)
	}

	// Joined but not yet placed: the slot is used, the snake has never lived.
	h.You = s.v.Snakes[0].ID
	s.v.Snakes[0].Alive, s.v.Snakes[0].DeathTick, s.v.Snakes[0].Length = false, 0, 0
	if all = text(first(t, ANSI16, 80, 24, &s.v, h)); !strings.Contains(all, "spawning") || strings.Contains(all, "YOU DIED") {
		t.Errorf("player waiting for the first spawn:\n%s", all)
	}

	h.Spectator, h.You = true, 0
	h.Follow = s.v.Snakes[1].ID
	all = text(first(t, ANSI16, 80, 24, &s.v, h))
	if !strings.Contains(all, "watching snakeb") || strings.Contains(all, "YOU DIED") {
		t.Errorf("spectator:\n%s", all)
	}
}

func first(t *testing.T, p Profile, cols, rows int, v *game.View, h *HUD) *vtmodel.Term {
	term, _ := screen(t, p, cols, rows, v, h)
	return term
}

func TestMono(t *testing.T) {
	s, h := scenario()
	s.v.Snakes[1].ProtectedUntil = 100
	s.step()
	term := first(t, Mono, 80, 24, &s.v, h)
	all := text(term)
	for _, want := range []string{"@", "#", "O", "o", "*", ":", "snaked"} {
		if !strings.Contains(all, want) {
			t.Errorf("mono screen lacks %q:\n%s", want, all)
		}
	}
	for y := 0; y < 24; y++ {
		for x := 0; x < 80; x++ {
			if c := term.Cell(x, y); c.FG != vtmodel.Default || c.BG != vtmodel.Default || c.Ch > 0x7e {
				t.Fatalf("mono cell %d,%d = %+v", x, y, c)
			}
		}
	}
}

func TestProtectedGrey(t *testing.T) {
	s, h := scenario()
	s.v.Snakes[1].ProtectedUntil = 100
	s.step()
	r := newKept(TrueColor, 80, 24)
	h.Follow = s.v.Snakes[1].ID
	r.Frame(&s.v, h)
	n := 0
	for _, c := range r.next {
		if c.ch() == 0 && (c.fg() == shieldCol || c.bg() == shieldCol) {
			n++
		}
	}
	if n < 5 {
		t.Errorf("protected snake: %d grey cells, want its body", n)
	}
}

func TestRestore(t *testing.T) {
	s, h := scenario()
	term, _ := screen(t, ANSI16, 80, 24, &s.v, h)
	term.Write([]byte("\x1b[31;42m\x1b[?2026h"))
	term.Write(Restore())
	fg, bg := term.Pen()
	top, bot := term.ScrollRegion()
	if term.AltScreen() || !term.CursorVisible() || term.Synchronized() || fg != vtmodel.Default || bg != vtmodel.Default || top != 0 || bot != 23 {
		t.Errorf("after Restore: alt %v cursor %v sync %v pen %d/%d region %d-%d", term.AltScreen(), term.CursorVisible(), term.Synchronized(), fg, bg, top, bot)
	}
	if u := term.Unsupported(); len(u) > 0 {
		t.Errorf("unsupported %q", u)
	}
}

func TestSmallFramesUnsynchronized(t *testing.T) {
	s, h := scenario()
	r := newKept(ANSI16, 80, 24)
	r.Frame(&s.v, h)
	for i := 0; i < 200; i++ {
		s.step()
		out := r.Frame(&s.v, h)
		if sync := bytes.Contains(out, []byte(syncOn)); sync != (len(out) >= syncMin) {
			t.Fatalf("frame %d: %d bytes, synchronized %v", i, len(out), sync)
		}
	}
	r.Invalidate()
	if out := r.Frame(&s.v, h); !bytes.Contains(out, []byte("\x1b[2J")) || bytes.Contains(out, []byte("1049")) {
		t.Errorf("repaint after Invalidate: %q...", out[:min(40, len(out))])
	}
}

func TestNilAndOddViews(t *testing.T) {
	r := newKept(ANSI16, 80, 24)
	term := vtmodel.New(80, 24)
	for _, v := range []*game.View{nil, {}, {W: 5, H: 5}, {W: 3, H: 2, Pix: make([]game.Pixel, 6), Top: []game.Entry{{Name: "\x1b[31m\xff"}}}} {
		term.Write(r.Frame(v, nil))
		if err := check(term, r); err != nil {
			t.Fatalf("%+v: %v", v, err)
		}
	}
}

func TestCameraDeadZone(t *testing.T) {
	v := &game.View{W: 1000, H: 500, Pix: make([]game.Pixel, 1000*500), Snakes: make([]game.SnakeInfo, 1), Heads: make([]game.Point, 1)}
	id := game.ID(1 << 16)
	v.Snakes[0] = game.SnakeInfo{ID: id, Used: true, Alive: true}
	v.Heads[0] = game.Point{X: 500, Y: 250}
	h := &HUD{You: id, Follow: id, ShutdownIn: -1}
	r := newKept(ANSI16, 80, 24) // playfield 80 x 44 pixels
	r.Frame(v, h)
	x0, y0 := r.camX, r.camY
	if x0 != 460 || y0 != 228 {
		t.Fatalf("camera starts at %d,%d, want the head centred (460,228)", x0, y0)
	}
	// Inside the central half: the camera stays.
	for _, p := range []game.Point{{X: 481, Y: 240}, {X: 519, Y: 260}, {X: 500, Y: 239}} {
		v.Heads[0] = p
		v.Tick++
		r.Frame(v, h)
		if r.camX != x0 || r.camY != y0 {
			t.Fatalf("head at %v moved the camera to %d,%d", p, r.camX, r.camY)
		}
	}
	// Leaving it re-centres, y in whole rows.
	v.Heads[0] = game.Point{X: 521, Y: 250}
	r.Frame(v, h)
	if r.camX != 481 || r.camY != y0 {
		t.Fatalf("head right of the box: camera %d,%d, want 481,%d", r.camX, r.camY, y0)
	}
	v.Heads[0] = game.Point{X: 521, Y: 272}
	r.Frame(v, h)
	if r.camY != 250 || (r.camY-y0)%2 != 0 {
		t.Fatalf("head below the box: camera y %d, want 250", r.camY)
	}
	// Follow every tick with zone 0; wraps across the world's edge.
	r.SetZone(0)
	v.Heads[0] = game.Point{X: 5, Y: 3}
	r.Frame(v, h)
	if r.camX != 965 || r.camY != 480 {
		t.Fatalf("zone 0 across the edge: camera %d,%d, want 965,480 (481 snapped to whole rows)", r.camX, r.camY)
	}
}

func TestResizeClamps(t *testing.T) {
	s, h := scenario()
	r := newKept(ANSI16, 0, -5)
	if r.cols != 1 || r.rows != 1 {
		t.Fatalf("size %dx%d, want 1x1", r.cols, r.rows)
	}
	term := vtmodel.New(1, 1)
	term.Write(r.Frame(&s.v, h))
	r.Resize(100000, 100000)
	if r.cols != MaxCols || r.rows != MaxRows {
		t.Fatalf("size %dx%d, want %dx%d", r.cols, r.rows, MaxCols, MaxRows)
	}
	term.Resize(MaxCols, MaxRows)
	term.Write(r.Frame(&s.v, h))
	if err := check(term, r); err != nil {
		t.Fatal(err)
	}
}

// TestCellPacking checks that every cell the renderer can hold packs and
// unpacks losslessly into a distinct 16-bit value, and that the zero cell
// is blank.
func TestCellPacking(t *testing.T) {
	seen := map[cell][3]int{}
	chs := []uint16{0, unknownCh}
	for ch := uint16(0x21); ch <= 0x7e; ch++ {
		chs = append(chs, ch)
	}
	for ch := uint16(1); ch < nExt; ch++ {
		if extGlyph[ch] == "" || extAlt[ch] < 0x21 || extAlt[ch] > 0x7e {
			t.Fatalf("extended glyph %#x: %q, Mono %q", ch, extGlyph[ch], extAlt[ch])
		}
		chs = append(chs, ch)
	}
	for _, ch := range chs {
		for fg := uint8(0); fg < ncol; fg++ {
			for bg := uint8(0); bg < ncol; bg++ {
				c := mk(ch, fg, bg)
				if c.ch() != ch || c.fg() != fg || c.bg() != bg {
					t.Fatalf("mk(%#x, %d, %d) unpacks to (%#x, %d, %d)", ch, fg, bg, c.ch(), c.fg(), c.bg())
				}
				if o, dup := seen[c]; dup {
					t.Fatalf("mk(%#x, %d, %d) == mk%v", ch, fg, bg, o)
				}
				seen[c] = [3]int{int(ch), int(fg), int(bg)}
			}
		}
	}
	if blank != px(def, def) || txt(' ', red, blue) != px(blue, blue) || txt(0x7f, red, def).ch() != '?' ||
		txt(0, red, def).ch() != '?' || txt(nExt, red, def).ch() != '?' || txt(gH, red, def).ch() != gH {
		t.Fatal("blank, text space, extended or control glyph packed wrongly")
	}
	// segment's test for a head.
	for k := game.Empty; k <= game.Head; k++ {
		if p := game.MakePixel(k, 77, 9); (p&kindBits == headBits) != (k == game.Head) {
			t.Fatalf("kind %d: kindBits/headBits disagree with game.MakePixel", k)
		}
	}
}

// TestGlyphs checks the extended glyphs: each is one rune that the
// terminal model takes as one column, drawn in UTF-8 on every profile but
// Mono and as its ASCII stand-in there, and the encoder counts its bytes.
func TestGlyphs(t *testing.T) {
	for ch := byte(1); ch < nExt; ch++ {
		g := extGlyph[ch]
		if utf8.RuneCountInString(g) != 1 || len(glyphText[ch]) != len(g) {
			t.Fatalf("glyph %#x: %q", ch, g)
		}
		for _, p := range []Profile{Mono, ANSI16, TrueColor} {
			r := newKept(p, 40, 12)
			term := vtmodel.New(40, 12)
			r.compose(nil, nil)
			put(r, 3, 5, []byte{'a', ch, 'b'}, white, def)
			hand(r)
			r.vt.out = r.vt.buf[:0]
			r.vt.encode(true, 0, 0)
			term.Write(r.vt.out)
			if err := check(term, r); err != nil {
				t.Fatalf("glyph %#x on %v: %v", ch, p, err)
			}
			want := "a" + g + "b"
			if p == Mono {
				want = "a" + string(extAlt[ch]) + "b"
			}
			if got := term.Line(5)[3 : 3+len(want)]; got != want {
				t.Errorf("glyph %#x on %v: %q, want %q", ch, p, got, want)
			}
			// With the cell's pen, re-printing it costs its bytes.
			c := r.next[5*40+4]
			r.vt.pfg, r.vt.pbg = c.fg(), c.bg()
			if c := r.vt.reprintCost(c); c != len(glyphText[r.next[5*40+4].ch()]) {
				t.Errorf("glyph %#x on %v: reprint cost %d", ch, p, c)
			}
		}
	}
}

// TestGreedyPays: in the standard scenario (a few snakes, frames of a few
// changed cells) the greedy order, tried only after a small frame
// (encoder.sparse), pays: at least 3 % fewer bytes than row order
// (options.rowOrder) over 600 frames.
func TestGreedyPays(t *testing.T) {
	sum := func(rowOrder bool) int {
		s, h := scenario()
		r := newRenderer(ANSI16, 80, 24, 0, options{keepNext: true, rowOrder: rowOrder})
		n := 0
		for range 600 {
			s.step()
			n += len(r.Frame(&s.v, h))
		}
		return n
	}
	greedy, rows := sum(false), sum(true)
	if float64(greedy) > 0.97*float64(rows) {
		t.Errorf("greedy %d bytes, row order %d: want at least 3 %% fewer", greedy, rows)
	}
	t.Logf("greedy %d bytes, row order %d (%.1f %%)", greedy, rows, 100*float64(greedy)/float64(rows))
}

// TestAppendNum checks appendNum against strconv on both sides of its
// fast paths' bounds.
func TestAppendNum(t *testing.T) {
	for n := -12; n <= 1012; n++ {
		if got, want := string(appendNum([]byte("x"), n)), "x"+strconv.Itoa(n); got != want {
			t.Fatalf("appendNum(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestAsIs checks putCell's shortcut against glyph on every pen and every
// pixel cell, and text cells: when asIs finds a glyph, glyph picks the
// same one, needs no pen change, and nothing costs less; and asIs finds
// one whenever glyph needs no pen change. glyph's reset is sgrPlan's for
// the pen it picks (putCell sets the pen with it).
func TestAsIs(t *testing.T) {
	for _, prof := range []Profile{ANSI16, ANSI256, TrueColor} {
		r := newKept(prof, 80, 24)
		cells := []cell{txt('a', def, def), txt('x', 3, 5), txt(0x01, 7, def)}
		for f := range uint8(ncol) {
			for b := range uint8(ncol) {
				cells = append(cells, px(f, b), txt('#', f, b))
			}
		}
		hits := 0
		for pf := range uint8(ncol) {
			for pb := range uint8(ncol) {
				r.vt.pfg, r.vt.pbg = pf, pb
				for _, c := range cells {
					gf, gb, gg, cost, reset := r.vt.glyph(c)
					sgr, rs := r.vt.sgrPlan(gf, gb)
					if reset != rs {
						t.Fatalf("%v pen %d/%d cell %04x: glyph says reset %v for pen %d/%d, sgrPlan %v", prof, pf, pb, uint16(c), reset, gf, gb, rs)
					}
					g, ok := r.vt.asIs(c)
					if ok && (g != gg || sgr != 0 || cost != len(g)) {
						t.Fatalf("%v pen %d/%d cell %04x: asIs %q, glyph %q with pen %d/%d at cost %d", prof, pf, pb, uint16(c), g, gg, gf, gb, cost)
					}
					if !ok && sgr == 0 {
						t.Fatalf("%v pen %d/%d cell %04x: glyph draws %q with the pen as it is, asIs found nothing", prof, pf, pb, uint16(c), gg)
					}
					if ok {
						hits++
					}
				}
			}
		}
		if hits == 0 {
			t.Fatalf("%v: asIs never found a glyph", prof)
		}
	}
}

// TestFirstCell: diffRow's word-at-a-time search lands on the first cell
// of four that differs, wherever the others differ too.
func TestFirstCell(t *testing.T) {
	for first := range 4 {
		for rest := range 16 { // which later cells differ as well
			a, b := [4]cell{1, 2, 3, 4}, [4]cell{1, 2, 3, 4}
			b[first] = 0x7e00
			for j := first + 1; j < 4; j++ {
				if rest>>j&1 != 0 {
					b[j] = 0x0101
				}
			}
			if got := firstCell(quad(a[:], 0) ^ quad(b[:], 0)); got != first {
				t.Fatalf("cells %v and %v: firstCell %d, want %d", a, b, got, first)
			}
		}
	}
}

// TestLaneOf: diffRow clears a quad's cells one by one with laneOf, each
// taking exactly that cell's bits, so the next firstCell finds the next
// differing cell.
func TestLaneOf(t *testing.T) {
	for i := range 4 {
		var a [4]cell
		a[i] = 0xffff
		if got, want := laneOf(i), quad(a[:], 0); got != want {
			t.Fatalf("laneOf(%d) = %#x, want %#x", i, got, want)
		}
	}
}

// TestPlanNextRow: plan's shortcuts for a move to the next row, and to
// the same row past re-printing's reach, pick what weighing every motion
// picks (planAny), in the same way, wherever the cursor, the target
// column, the area's margins and the scroll region are.
func TestPlanNextRow(t *testing.T) {
	for _, sz := range [][4]int{{80, 24, 80, 24}, {100, 30, 120, 40}, {200, 60, 200, 60}, {40, 12, 45, 12}} {
		r := newKept(ANSI16, sz[2], sz[3])
		r.Resize(sz[2], sz[3])
		r.vt.cols, r.vt.rows, r.vt.tcols = sz[0], sz[1], sz[2]
		r.vt.ox, r.vt.oy = (sz[2]-sz[0])/2, (sz[3]-sz[1])/2
		for _, reg := range [][2]int{{0, sz[1] - 1}, {1, sz[1] - 2}, {2, sz[1] / 2}} {
			r.vt.top, r.vt.bot = reg[0], reg[1]
			for cy := 0; cy+1 < sz[1]; cy++ {
				for _, cx := range []int{0, 1, 2, 5, 9, 10, 11, sz[0] / 2, sz[0] - 2, sz[0] - 1} {
					for x := range sz[0] {
						r.vt.cx, r.vt.cy = cx, cy
						got, want := r.vt.plan(x, cy+1), r.vt.planAny(x, cy+1)
						if got != want {
							t.Fatalf("%v region %v: from (%d,%d) to (%d,%d): plan %+v, planAny %+v", sz, reg, cx, cy, x, cy+1, got, want)
						}
						// The same row, where plan weighs re-printing
						// only up to 8 cells right.
						if n := x - cx; n != 0 && (n < 0 || n > 8) {
							r.vt.cx, r.vt.cy = cx, cy
							if got, want := r.vt.plan(x, cy), r.vt.planAny(x, cy); got != want {
								t.Fatalf("%v region %v: from (%d,%d) to (%d,%d): plan %+v, planAny %+v", sz, reg, cx, cy, x, cy, got, want)
							}
						}
					}
				}
			}
		}
	}
}

// TestMoveToPlan: moveTo, which carries out plan's shortcuts where it
// finds them, sends the bytes move(plan) sends and leaves the cursor
// where it does, from every kind of start (pending wrap, other rows, a
// scroll region's margins, areas narrower than the terminal) over rows
// of cells that may or may not be printed again, with every pen.
func TestMoveToPlan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	looks := []cell{blank, blank, px(1, def), px(def, 2), px(3, 3), px(4, 5), txt('a', 7, def), txt('b', def, 3), unknown}
	pens := []uint8{def, 1, 2, 3, 5, 7}
	checked := 0
	for _, sz := range [][4]int{{80, 24, 80, 24}, {100, 30, 120, 40}, {40, 12, 45, 12}} {
		a, b := newKept(ANSI16, sz[2], sz[3]), newKept(ANSI16, sz[2], sz[3])
		for _, r := range []*Renderer{a, b} {
			r.Resize(sz[2], sz[3])
			r.vt.cols, r.vt.rows, r.vt.tcols = sz[0], sz[1], sz[2]
			r.vt.ox, r.vt.oy = (sz[2]-sz[0])/2, (sz[3]-sz[1])/2
		}
		for range 20000 {
			for i := range a.vt.prev {
				if rng.IntN(4) == 0 {
					a.vt.prev[i] = looks[rng.IntN(len(looks))]
				}
			}
			copy(b.vt.prev, a.vt.prev)
			top := rng.IntN(3)
			bot := sz[1] - 1 - rng.IntN(3)
			cx, cy := rng.IntN(sz[0]+1)-1, rng.IntN(sz[1])
			x, y := rng.IntN(sz[0]), cy
			switch rng.IntN(4) {
			case 0:
				y = cy + 1
			case 1:
				y = rng.IntN(sz[1])
			case 2:
				x = min(max(cx, 0)+rng.IntN(9), sz[0]-1)
			}
			if y >= sz[1] {
				y = cy
			}
			f, g := pens[rng.IntN(len(pens))], pens[rng.IntN(len(pens))]
			for _, r := range []*Renderer{a, b} {
				r.vt.top, r.vt.bot, r.vt.cx, r.vt.cy, r.vt.pfg, r.vt.pbg = top, bot, cx, cy, f, g
				r.vt.out = r.vt.out[:0]
			}
			a.vt.moveTo(x, y)
			if b.vt.cx != x || b.vt.cy != y {
				b.vt.move(b.vt.plan(x, y), x, y)
			}
			if string(a.vt.out) != string(b.vt.out) || a.vt.cx != b.vt.cx || a.vt.cy != b.vt.cy || a.vt.pfg != b.vt.pfg || a.vt.pbg != b.vt.pbg {
				t.Fatalf("%v region %d-%d pen %d/%d: from (%d,%d) to (%d,%d): moveTo %q to (%d,%d), move(plan) %q to (%d,%d)",
					sz, top, bot, f, g, cx, cy, x, y, a.vt.out, a.vt.cx, a.vt.cy, b.vt.out, b.vt.cx, b.vt.cy)
			}
			checked++
		}
	}
	t.Logf("%d motions checked", checked)
}

// TestShiftPays: the camera step's choice to shift a row, made with the
// row as it is estimated only up to the shifted estimate, is rowPlan's,
// on rows of snakes, blanks and unknown cells shifted by any step.
func TestShiftPays(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	r := newKept(ANSI16, 80, 24)
	looks := []cell{blank, blank, blank, px(1, def), px(def, 2), px(3, 3), txt('a', 7, def), unknown}
	checked := 0
	for range 2000 {
		prow, nrow := make([]cell, 80), make([]cell, 80)
		for i := range prow {
			prow[i] = looks[rng.IntN(len(looks))]
		}
		dx := rng.IntN(21) - 10
		for i := range nrow {
			switch j := i + dx; {
			case rng.IntN(8) == 0, j < 0, j >= 80:
				nrow[i] = looks[rng.IntN(len(looks)-1)]
			default:
				nrow[i] = prow[j]
			}
		}
		_, want := r.vt.rowPlan(prow, nrow, dx)
		if got := r.vt.shiftPays(prow, nrow, dx); got != want {
			t.Fatalf("dx %d: shiftPays %v, rowPlan %v\nprev %v\nnext %v", dx, got, want, prow, nrow)
		}
		if want {
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no row where shifting pays")
	}
}

// TestScrollPays: the camera step's choice to scroll, which stops adding
// up the cost of staying once it passes that of scrolling, is the choice
// made on both whole sums, with and without a right margin, for steps up
// and down on grids of rows that moved, changed or stayed.
func TestScrollPays(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	looks := []cell{blank, blank, blank, px(1, def), px(def, 2), px(3, 3), txt('a', 7, def), unknown}
	yes, no := 0, 0
	for _, tcols := range []int{40, 44} {
		r := newKept(ANSI16, tcols, 14)
		r.cols, r.rows, r.tcols, r.trows = 40, 14, tcols, 14
		r.vt.cols, r.vt.rows, r.vt.tcols = 40, 14, tcols
		r.vt.top, r.vt.bot = 1, 12
		n := r.cols * r.rows
		r.vt.prev, r.next = make([]cell, n), make([]cell, n)
		r.vt.next = r.next // scrollPays weighs the frame being encoded
		for range 3000 {
			dy := rng.IntN(7) - 3
			dx := rng.IntN(5) - 2
			if dy == 0 {
				dy = 1
			}
			for i := range r.vt.prev {
				r.vt.prev[i] = looks[rng.IntN(len(looks))]
			}
			for y := range r.rows {
				for x := range r.cols {
					sy, sx := y+dy, x+dx
					c := looks[rng.IntN(len(looks)-1)]
					switch k := rng.IntN(6); {
					case k < 3 && sy >= r.vt.top && sy <= r.vt.bot && sx >= 0 && sx < r.cols:
						c = r.vt.prev[sy*r.cols+sx] // moved with the camera
					case k == 3:
						c = r.vt.prev[y*r.cols+x] // stayed
					}
					r.next[y*r.cols+x] = c
				}
			}
			w, moved, stay := r.cols, 8+2*max(dy, -dy), 0
			if r.cols < r.tcols {
				moved += 3 + 4*max(dy, -dy)
			}
			for y := r.vt.top; y <= r.vt.bot; y++ {
				nrow := r.next[y*w : (y+1)*w]
				c, _ := r.vt.rowPlan(r.vt.prev[y*w:(y+1)*w], nrow, dx)
				stay += c
				if sy := y + dy; sy >= r.vt.top && sy <= r.vt.bot {
					c, _ = r.vt.rowPlan(r.vt.prev[sy*w:(sy+1)*w], nrow, dx)
					moved += c
				} else {
					moved += est(nil, 0, nrow)
				}
			}
			want := moved < stay
			if got := r.vt.scrollPays(dx, dy); got != want {
				t.Fatalf("step (%d,%d), %d columns: scrollPays %v, sums %d moved, %d staying", dx, dy, tcols, got, moved, stay)
			}
			if want {
				yes++
			} else {
				no++
			}
		}
	}
	if yes == 0 || no == 0 {
		t.Fatalf("scrolling paid in %d grids and did not in %d: both should occur", yes, no)
	}
}

// TestPixPlan checks putCell's table for pixel cells against the choice
// it stands for: asIs, else glyph and setPen, for every pixel cell from
// every pen: the same bytes and the same pen after.
func TestPixPlan(t *testing.T) {
	for c := range ncol * ncol {
		for p := range ncol * ncol {
			a, b := &encoder{tcols: 1000}, &encoder{tcols: 1000}
			a.pfg, a.pbg = pairFg[p], pairBg[p]
			*b = *a
			a.putCell(cell(c))
			g, ok := b.asIs(cell(c))
			if !ok {
				var f, bg uint8
				var reset bool
				f, bg, g, _, reset = b.glyph(cell(c))
				b.setPen(f, bg, reset)
			}
			b.out = append(b.out, g...)
			if string(a.out) != string(b.out) || a.pfg != b.pfg || a.pbg != b.pbg {
				t.Fatalf("cell %d pen %d: table %q pen %d/%d, choice %q pen %d/%d", c, p, a.out, a.pfg, a.pbg, b.out, b.pfg, b.pbg)
			}
		}
	}
}

// TestLaneNonZero checks erase's word at a time count of changed cells
// against the cells one by one.
func TestLaneNonZero(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 100000 {
		var q uint64
		for i := range 4 {
			var l uint64
			switch rng.IntN(4) {
			case 0: // zero
			case 1:
				l = 1 << rng.IntN(16)
			default:
				l = uint64(rng.IntN(1 << 16))
			}
			q |= l << (16 * i)
		}
		var want uint64
		for i := range 4 {
			if q>>(16*i)&0xffff != 0 {
				want |= 1 << (16*i + 15)
			}
		}
		if got := laneNonZero(q); got != want {
			t.Fatalf("laneNonZero(%#x) = %#x, want %#x", q, got, want)
		}
	}
}
