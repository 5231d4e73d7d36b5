package render

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"runtime"
	"testing"
	"unsafe"

	"snaked/game"
	"snaked/internal/vtmodel"
)

// This file tests the cell budget: Fit's policy, that a budgeted renderer
// holds state for its area only, and that on a terminal larger than the
// area the area shows what an unbudgeted renderer of the area's size shows
// while every other cell stays a default blank.

func TestFit(t *testing.T) {
	for _, c := range []struct {
		cols, rows, budget int
		w, h               int
	}{
		{80, 24, 0, 80, 24},
		{600, 300, 0, MaxCols, MaxRows},
		{0, -3, 100, 1, 1},
		{500, 200, 20000, 224, 89}, // 89 = sqrt(20000*200/500), 224 = 20000/89
		{500, 200, 32000, 283, 113},
		{250, 80, 20000, 250, 80}, // exactly the budget
		{500, 200, 1, 40, 12},     // raised to MinCols*MinRows
		{40, 200, 2000, 40, 50},   // not narrower than MinCols
		{500, 12, 480, 40, 12},    // not shorter than MinRows
		{30, 200, 480, 30, 16},    // a narrow terminal keeps its width
		{500, 5, 480, 96, 5},      // a short one its height
		{39, 11, 480, 39, 11},     // small terminals are never cut
		{200, 60, 20000, 200, 60}, // within the budget
		{101, 51, 2000, 62, 32},   // the shape of 101x51 (1.98): 62x32 (1.94) rather than 64x31 (2.06)
		{MaxCols, MaxRows, MaxCols * MaxRows, MaxCols, MaxRows},
	} {
		w, h := Fit(c.cols, c.rows, c.budget)
		if w != c.w || h != c.h {
			t.Errorf("Fit(%d, %d, %d) = %dx%d, want %dx%d", c.cols, c.rows, c.budget, w, h, c.w, c.h)
		}
	}
}

// TestFitProperties checks Fit's rules over many sizes and budgets.
func TestFitProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	shaped := 0
	for i := 0; i < 20000; i++ {
		cols, rows := 1+rng.IntN(MaxCols), 1+rng.IntN(MaxRows)
		b := rng.IntN(MaxCols*MaxRows+1000) - 500
		if i%3 == 0 {
			b = rng.IntN(4000)
		}
		w, h := Fit(cols, rows, b)
		lim := max(b, MinCols*MinRows)
		switch {
		case w < 1 || h < 1 || w > cols || h > rows:
			t.Fatalf("Fit(%d, %d, %d) = %dx%d: outside the terminal", cols, rows, b, w, h)
		case b <= 0 && (w != cols || h != rows):
			t.Fatalf("Fit(%d, %d, %d) = %dx%d: no budget, want the terminal", cols, rows, b, w, h)
		case b > 0 && cols*rows <= lim && (w != cols || h != rows):
			t.Fatalf("Fit(%d, %d, %d) = %dx%d: within the budget, want the terminal", cols, rows, b, w, h)
		case b > 0 && w*h > lim:
			t.Fatalf("Fit(%d, %d, %d) = %dx%d: %d cells over the budget", cols, rows, b, w, h, w*h)
		case w < min(cols, MinCols) || h < min(rows, MinRows):
			t.Fatalf("Fit(%d, %d, %d) = %dx%d: below the minimum", cols, rows, b, w, h)
		}
		// The shape is kept where neither minimum bites: the aspect ratio
		// within what rounding both sides allows, and no budget left for
		// another column.
		if b > 0 && w < cols && h < rows && w > MinCols && h > MinRows {
			shaped++
			ar, ab := float64(cols)/float64(rows), float64(w)/float64(h)
			if d, e := ab/ar-1, 1/float64(h)+1/float64(w); d > e || d < -e {
				t.Fatalf("Fit(%d, %d, %d) = %dx%d: aspect %.3f, terminal's %.3f", cols, rows, b, w, h, ab, ar)
			}
			if (w+1)*h <= lim {
				t.Fatalf("Fit(%d, %d, %d) = %dx%d: another column fits", cols, rows, b, w, h)
			}
		}
	}
	if shaped < 2000 {
		t.Errorf("only %d of 20000 cases scaled the shape", shaped)
	}
}

// TestRendererSize: a Renderer takes the heap's 3,200-byte size class
// (the next is 3,456 B, and every session holds one): its fields and the
// 8-byte header the heap puts before an object with pointers that large.
// When it fails, move per-frame state out of the struct or accept the
// larger class and change the bound here and in
// docs/BENCHMARKS.md.
func TestRendererSize(t *testing.T) {
	const n = 1000
	rs := make([]*Renderer, n)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range rs {
		rs[i] = new(Renderer)
	}
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(rs)
	// Other goroutines may allocate meanwhile: a few bytes per Renderer
	// at most, against the 256 to the next class.
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 3200+64 {
		t.Errorf("a Renderer (%d bytes of fields) takes %d bytes of heap, over the 3,200-byte size class", unsafe.Sizeof(Renderer{}), per)
	}
}

// budgetHeld is the bytes of state r holds (cell grids, buffers, scratch).
// A renderer as New makes it (its next grid borrowed) holds one grid between frames.
func budgetHeld(r *Renderer) int {
	n := int(unsafe.Sizeof(cell(0)))*(cap(r.vt.prev)+cap(r.next)) + 4*(cap(r.vt.todo)+cap(r.vt.gcost)) + 8*cap(r.mask)
	n += cap(r.vt.buf) + cap(r.num)
	for _, l := range r.lines {
		n += cap(l)
	}
	return n
}

// TestBudgetHeld: a budgeted renderer's state is sized for its area, also
// when the budget comes after the renderer or the terminal shrinks.
func TestBudgetHeld(t *testing.T) {
	for _, b := range []int{0, 8000, 20000, 32000} {
		w, h := Fit(MaxCols, MaxRows, b)
		want := CellBytes*w*h + bufExtra + 16*MaxRows + 64*4 // + mask and composed, todo/gcost
		for _, mk := range []struct {
			name string
			r    func() *Renderer
		}{
			{"NewBudget", func() *Renderer { return NewBudget(ANSI16, MaxCols, MaxRows, b) }},
			{"New+SetBudget", func() *Renderer {
				r := New(ANSI16, MaxCols, MaxRows)
				r.SetBudget(b)
				return r
			}},
			{"shrunk", func() *Renderer {
				r := NewBudget(ANSI16, MaxCols, MaxRows, b)
				r.Resize(80, 24)
				r.Resize(MaxCols, MaxRows)
				return r
			}},
		} {
			r := mk.r()
			s, hud := scenario()
			s.step()
			r.Frame(&s.v, hud) // a full repaint: its buffer is held
			if r.cols != w || r.rows != h || cap(r.vt.prev) != w*h || r.next != nil {
				t.Errorf("budget %d, %s: area %dx%d, grid %d cells, next %d; want %dx%d, %d and none", b, mk.name, r.cols, r.rows, cap(r.vt.prev), cap(r.next), w, h, w*h)
			}
			if got := budgetHeld(r); got > want {
				t.Errorf("budget %d, %s: %d bytes held, want <= %d (CellBytes*%d*%d + scratch)", b, mk.name, got, want, w, h)
			}
		}
	}
	// After shrinking from 500x200 to 80x24 the grids are the smaller ones.
	r := newKept(ANSI16, MaxCols, MaxRows)
	r.Resize(80, 24)
	if cap(r.vt.prev) != 80*24 || cap(r.vt.buf) > bufPerCell*80*24+bufExtra {
		t.Errorf("after shrinking to 80x24: grid %d cells, buffer %d bytes", cap(r.vt.prev), cap(r.vt.buf))
	}
}

// BenchmarkBudgetMem reports the heap a renderer on a 500x200 terminal
// holds, without a budget and with budgets of 320x100, 250x80, 200x60 and
// 160x50 cells (areas of 500x200's shape: 283x113, 224x89, 173x69,
// 141x56), between frames as a session keeps it (the output buffer given
// back with Release after each frame): after its first frame (a full
// repaint) and after 200 frames.
func BenchmarkBudgetMem(b *testing.B) {
	for _, c := range []struct {
		name   string
		budget int
	}{{"none", 0}, {"32000", 320 * 100}, {"20000", 250 * 80}, {"12000", 200 * 60}, {"8000", 160 * 50}} {
		b.Run(c.name, func(b *testing.B) {
			const n = 20
			var first, steady float64
			var w, h int
			for b.Loop() {
				s, hud := scenario()
				var m0, m1, m2, m3 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m0)
				rs := make([]*Renderer, n)
				for i := range rs {
					rs[i] = NewBudget(ANSI16, MaxCols, MaxRows, c.budget)
				}
				s.step()
				for _, r := range rs {
					r.Frame(&s.v, hud)
					r.Release() // as a session does once the frame is written
				}
				runtime.GC()
				runtime.ReadMemStats(&m1)
				for f := 0; f < 200; f++ {
					s.step()
					for _, r := range rs {
						r.Frame(&s.v, hud)
						r.Release()
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&m2)
				w, h = rs[0].cols, rs[0].rows
				rs = nil // the world stays: what goes is the renderers'
				runtime.GC()
				runtime.ReadMemStats(&m3)
				first = float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / n
				steady = float64(int64(m2.HeapAlloc)-int64(m3.HeapAlloc)) / n
				runtime.KeepAlive(s)
			}
			b.ReportMetric(first, "first-B/renderer")
			b.ReportMetric(steady, "steady-B/renderer")
			b.ReportMetric(float64(CellBytes*w*h), "CellBytes*area")
			b.ReportMetric(float64(w*h), "cells")
		})
	}
}

// blankCell is a default blank on the model.
var blankCell = vtmodel.Cell{Ch: ' ', FG: vtmodel.Default, BG: vtmodel.Default}

// checkArea reports the first cell where the model's screen differs from
// what r means: the area shows r.next and every cell outside it is a
// default blank.
func checkArea(t *vtmodel.Term, r *Renderer) error {
	if err := shown(r); err != nil {
		return err
	}
	if u := t.Unsupported(); len(u) > 0 {
		return fmt.Errorf("unsupported output: %q", u)
	}
	if !t.AltScreen() || t.CursorVisible() || t.Synchronized() {
		return fmt.Errorf("alt %v cursor %v sync %v", t.AltScreen(), t.CursorVisible(), t.Synchronized())
	}
	if c, w := t.Size(); c != r.tcols || w != r.trows {
		return fmt.Errorf("terminal %dx%d, renderer's %dx%d", c, w, r.tcols, r.trows)
	}
	for y := 0; y < r.trows; y++ {
		for x := 0; x < r.tcols; x++ {
			ax, ay := x-r.vt.ox, y-r.vt.oy
			if ax < 0 || ax >= r.cols || ay < 0 || ay >= r.rows {
				if c := t.Cell(x, y); c != blankCell {
					return fmt.Errorf("margin cell %d,%d (area %dx%d at %d,%d): %+v\nrow: %q", x, y, r.cols, r.rows, r.vt.ox, r.vt.oy, c, t.Line(y))
				}
				continue
			}
			if got, want := norm(t.Cell(x, y)), r.next[ay*r.cols+ax]; got != want {
				return fmt.Errorf("area cell %d,%d (terminal %d,%d): got %+v (%+v) want %+v\nrow: %q", ax, ay, x, y, got, t.Cell(x, y), want, t.Line(y))
			}
		}
	}
	return nil
}

// sameArea reports the first difference between the frame r means and the
// frame ref, an unbudgeted renderer of r's area size, means. The "please
// enlarge" screen names the terminal's size, not the area's: that row is
// compared with the terminal's size put in.
func sameArea(r, ref *Renderer) error {
	if r.pfRows == 0 && ref.pfRows == 0 && (r.tcols != ref.tcols || r.trows != ref.trows) {
		ref.tcols, ref.trows = r.tcols, r.trows
		clear(ref.next)
		ref.enlarge()
		ref.tcols, ref.trows = ref.cols, ref.rows
	}
	return same(r, ref)
}

// ops matches the sequences that move whole terminal lines: DCH, ICH and
// the EL 2 that scroll sends after a line scrolls in.
var ops = regexp.MustCompile(`\x1b\[[0-9]*[P@]|\x1b\[2K`)

// budgetRun drives a budgeted renderer and an unbudgeted one of its area's
// size with the same frames; after each frame the model of the budgeted
// one's terminal must pass checkArea and both must mean the same frame.
type budgetRun struct {
	t        testing.TB
	s        *sim
	h        *HUD
	r, ref   *Renderer
	term     *vtmodel.Term
	frames   int
	shifts   int // frames with DCH/ICH sent while the area had side margins
	scrolls  int // frames that scrolled with side margins
	vmargins int // frames drawn with margins above and below only
}

func newBudgetRun(t testing.TB, seed uint64, cols, rows, budget int) *budgetRun {
	s := newSim(seed, 300+int(seed%7)*40, 150+int(seed%5)*30, 8, 25, 600)
	b := &budgetRun{t: t, s: s, r: newKeptBudget(ANSI16, cols, rows, budget)}
	b.ref = newKept(ANSI16, b.r.cols, b.r.rows)
	b.term = vtmodel.New(b.r.tcols, b.r.trows)
	b.h = &HUD{You: s.v.Snakes[0].ID, Follow: s.v.Snakes[0].ID, ShutdownIn: -1, Join: "ssh -p 2222 localhost", Players: 5}
	return b
}

func (b *budgetRun) resize(cols, rows int) {
	b.r.Resize(cols, rows)
	b.ref.Resize(b.r.cols, b.r.rows)
	b.term.Resize(b.r.tcols, b.r.trows)
}

func (b *budgetRun) setBudget(cells int) {
	w, h := b.r.cols, b.r.rows
	b.r.SetBudget(cells)
	if b.r.cols != w || b.r.rows != h {
		b.ref.Resize(b.r.cols, b.r.rows)
	}
}

func (b *budgetRun) zone(z int) {
	b.r.SetZone(z)
	b.ref.SetZone(z)
}

func (b *budgetRun) profile(p Profile) {
	b.r.SetProfile(p)
	b.ref.SetProfile(p)
}

func (b *budgetRun) invalidate() {
	b.r.Invalidate()
	b.ref.Invalidate()
}

// frame draws one frame, feeds it to the model (how: see feed) and checks.
func (b *budgetRun) frame(how int) {
	out := b.r.Frame(&b.s.v, b.h)
	b.ref.Frame(&b.s.v, b.h)
	b.frames++
	feed(b.term, out, how)
	if err := checkArea(b.term, b.r); err != nil {
		b.t.Fatalf("frame %d, terminal %dx%d, area %dx%d at %d,%d, budget %d: %v\nframe: %q",
			b.frames, b.r.tcols, b.r.trows, b.r.cols, b.r.rows, b.r.vt.ox, b.r.vt.oy, b.r.budget, err, out)
	}
	if err := sameArea(b.r, b.ref); err != nil {
		b.t.Fatalf("frame %d, terminal %dx%d, area %dx%d: not what an unbudgeted %dx%d renderer means: %v",
			b.frames, b.r.tcols, b.r.trows, b.r.cols, b.r.rows, b.ref.cols, b.ref.rows, err)
	}
	if b.r.cols < b.r.tcols {
		for _, m := range ops.FindAll(out, -1) {
			if bytes.HasSuffix(m, []byte("2K")) {
				b.scrolls++
			} else {
				b.shifts++
			}
		}
	} else if b.r.rows < b.r.trows {
		b.vmargins++
	}
}

// Terminal sizes and budgets the budgeted sessions pick from: areas with
// margins on all sides, left and right only, above and below only, and
// none.
var (
	bigSizes = [][2]int{{500, 200}, {320, 100}, {250, 80}, {200, 60}, {120, 40}, {80, 24}, {40, 200}, {60, 200}, {500, 12}, {30, 200}, {101, 51}, {39, 11}, {MaxCols, 1}}
	budgets  = []int{0, 1, 480, 1000, 2000, 4800, 8000, 20000}
)

// TestBudgetSessions plays randomized sessions on terminals larger than
// their budget (camera steps in both axes every few ticks, jumps, resizes,
// budget changes, overlays) and checks every frame on the model.
func TestBudgetSessions(t *testing.T) {
	frames := 1500
	if testing.Short() {
		frames = 300
	}
	var shifts, scrolls, vm int
	for seed := uint64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		b := newBudgetRun(t, seed, 320, 100, 4800)
		b.zone(20)
		for f := 0; f < frames; f++ {
			b.s.step()
			switch k := rng.IntN(100); {
			case k < 2:
				sz := bigSizes[rng.IntN(len(bigSizes))]
				b.resize(sz[0], sz[1])
			case k < 3:
				b.resize(1+rng.IntN(MaxCols), 1+rng.IntN(MaxRows))
			case k < 5:
				b.setBudget(budgets[rng.IntN(len(budgets))])
			case k < 6:
				b.invalidate()
			case k < 7:
				b.profile(Profile(rng.IntN(4)))
			case k < 9:
				b.h.Help = !b.h.Help
			case k < 11:
				b.h.Hint = !b.h.Hint
			case k < 14:
				b.h.Follow = b.s.v.Snakes[rng.IntN(len(b.s.snakes))].ID
			case k < 16:
				b.h.Follow = 0
				b.h.Cam = game.Point{X: rng.IntN(2000), Y: rng.IntN(2000)}
			case k < 30 && b.h.Follow == 0:
				b.h.Cam.X += rng.IntN(17) - 8
				b.h.Cam.Y += rng.IntN(17) - 8
			case k < 32:
				b.zone([]int{0, 20, 50}[rng.IntN(3)])
			case k < 34:
				b.s.kill(rng.IntN(len(b.s.snakes)), "snakeb")
			case k < 38:
				b.s.respawn(rng.IntN(len(b.s.snakes)))
			}
			b.frame(rng.IntN(3))
		}
		shifts += b.shifts
		scrolls += b.scrolls
		vm += b.vmargins
	}
	t.Logf("%d DCH/ICH and %d scrolled lines with side margins, %d frames with margins above and below only", shifts, scrolls, vm)
	if shifts < frames/10 || scrolls < frames/20 || vm < frames/100 {
		t.Errorf("the sessions exercised too little: %d DCH/ICH, %d scrolled lines with side margins, %d frames with top/bottom margins only", shifts, scrolls, vm)
	}
}

// TestBudgetMarginEdits pins the two-edit horizontal shift and the erased
// scrolled-in lines: a camera stepping one column or row at a time on a
// terminal with margins on all sides.
func TestBudgetMarginEdits(t *testing.T) {
	for _, c := range []struct {
		name   string
		dx, dy int
	}{{"left", 1, 0}, {"right", -1, 0}, {"up", 0, 2}, {"down", 0, -2}, {"diagonal", 3, -4}} {
		t.Run(c.name, func(t *testing.T) {
			b := newBudgetRun(t, 5, 200, 60, 2000)
			b.h.Follow = 0
			b.h.Cam = game.Point{X: 150, Y: 100}
			b.s.step()
			b.frame(0)
			for i := 0; i < 40; i++ {
				b.h.Cam.X += c.dx
				b.h.Cam.Y += c.dy
				b.frame(i)
			}
			if c.dx != 0 && b.shifts == 0 || c.dy != 0 && b.scrolls == 0 {
				t.Errorf("%d DCH/ICH, %d scrolled lines: the camera steps were not sent as shifts", b.shifts, b.scrolls)
			}
		})
	}
}

// TestBudgetZeroAllocs: no allocation per frame with a budget active and the
// camera stepping every tick.
func TestBudgetZeroAllocs(t *testing.T) {
	for _, c := range [][3]int{{500, 200, 20000}, {500, 200, 2000}, {40, 200, 2000}} {
		s, h := scenario()
		h.Hint = true
		r := newKeptBudget(ANSI16, c[0], c[1], c[2])
		r.SetZone(0)
		if r.cols == r.tcols && r.rows == r.trows {
			t.Fatalf("%v: no margins", c)
		}
		for i := 0; i < 2*trimAfter; i++ {
			s.step()
			r.Frame(&s.v, h)
		}
		if n := testing.AllocsPerRun(200, func() {
			s.step()
			r.Frame(&s.v, h)
		}); n != 0 {
			t.Errorf("%v: %v allocs per frame", c, n)
		}
	}
}

// TestBudgetNoneIsUnbudgeted: a budget the terminal fits in changes no
// byte, and SetBudget(0) undoes a budget.
func TestBudgetNoneIsUnbudgeted(t *testing.T) {
	s, h := scenario()
	a := newKept(ANSI16, 200, 60)
	b := newKeptBudget(ANSI16, 200, 60, 200*60)
	c := newKeptBudget(ANSI16, 200, 60, 5000)
	c.SetBudget(0)
	for i := 0; i < 300; i++ {
		s.step()
		oa := string(a.Frame(&s.v, h))
		if ob := string(b.Frame(&s.v, h)); ob != oa {
			t.Fatalf("frame %d: budget 200*60 sent %q, no budget %q", i, ob, oa)
		}
		if oc := string(c.Frame(&s.v, h)); oc != oa {
			t.Fatalf("frame %d: budget removed sent %q, no budget %q", i, oc, oa)
		}
	}
}

// TestSetBudgetSameArea: a budget that leaves the area as it is changes
// nothing (no repaint); one that changes it repaints in the new area.
func TestSetBudgetSameArea(t *testing.T) {
	s, h := scenario()
	r := newKeptBudget(ANSI16, 200, 60, 20000)
	term := vtmodel.New(200, 60)
	s.step()
	term.Write(r.Frame(&s.v, h))
	for _, b := range []int{0, 12000, 50000, 20000} {
		r.SetBudget(b)
		if out := r.Frame(&s.v, h); len(out) != 0 {
			t.Fatalf("SetBudget(%d) on 200x60 (area %dx%d): %d bytes sent for an unchanged frame", b, r.cols, r.rows, len(out))
		}
	}
	r.SetBudget(2000)
	term.Write(r.Frame(&s.v, h))
	if err := checkArea(term, r); err != nil || r.cols*r.rows > 2000 {
		t.Fatalf("after SetBudget(2000): area %dx%d, %v", r.cols, r.rows, err)
	}
}

// FuzzBudget: sizes, budgets and resizes at random stay consistent: the
// area is Fit's, centred, the grids hold exactly its cells, and the
// terminal shows the area's frame with blank margins.
func FuzzBudget(f *testing.F) {
	f.Add([]byte{0, 0, 1, 200, 60, 2, 20, 0, 0, 0})
	f.Add([]byte{1, 255, 255, 2, 1, 3, 0, 0, 5, 9, 9, 5, 100, 100, 0, 0, 6, 0})
	f.Add([]byte{2, 80, 1, 200, 20, 0, 7, 1, 0, 0, 4, 0, 3, 0, 6, 2})
	f.Fuzz(func(t *testing.T, script []byte) {
		if len(script) > 150 {
			script = script[:150]
		}
		arg := func(i int) int {
			if i < len(script) {
				return int(script[i])
			}
			return 0
		}
		b := newBudgetRun(t, uint64(len(script)), 120, 40, 1000)
		b.h.Follow = 0
		b.h.Cam = game.Point{X: 10, Y: 10}
		for i := 0; i < len(script); i++ {
			switch script[i] % 8 {
			case 0:
				b.s.step()
			case 1: // up to 510 x 255: past the limits too
				b.resize(2*arg(i+1), arg(i+2))
				i += 2
			case 2:
				b.setBudget(arg(i+1) * arg(i+2))
				i += 2
			case 3:
				b.invalidate()
			case 4:
				b.h.Help = !b.h.Help
			case 5:
				b.h.Cam.X += arg(i+1)%33 - 16
				b.h.Cam.Y += arg(i+2)%33 - 16
				i += 2
			case 6:
				b.h.Follow = b.s.v.Snakes[arg(i+1)%len(b.s.snakes)].ID
				b.zone(arg(i+1) % 60)
				i++
			case 7:
				b.h.Follow = 0
			}
			r := b.r
			w, h := Fit(r.tcols, r.trows, r.budget)
			if r.cols != w || r.rows != h || r.vt.ox != (r.tcols-w)/2 || r.vt.oy != (r.trows-h)/2 {
				t.Fatalf("op %d: area %dx%d at %d,%d on %dx%d, budget %d; Fit says %dx%d", i, r.cols, r.rows, r.vt.ox, r.vt.oy, r.tcols, r.trows, r.budget, w, h)
			}
			if cap(r.vt.prev) != w*h || cap(r.next) != w*h || len(r.mask) != h {
				t.Fatalf("op %d: grids of %d and %d cells, mask %d rows for a %dx%d area", i, cap(r.vt.prev), cap(r.next), len(r.mask), w, h)
			}
			b.frame(i)
		}
	})
}

// TestBudgetBytes reports what a budget costs in bytes: the standard
// scenario's frames drawn in an 80x24 area centred on a 200x60 terminal
// against the same frames on an 80x24 terminal. Both take the same camera
// steps; only the origin offsets and the margin repairs differ.
func TestBudgetBytes(t *testing.T) {
	for _, c := range []struct {
		zone int
		max  float64
	}{{0, 1.2}, {DefaultZone, 1.05}} {
		z := c.zone
		s, h := scenario()
		a := newKept(ANSI16, 80, 24)
		b := newKeptBudget(ANSI16, 200, 60, 80*24)
		if b.cols != 80 || b.rows != 24 {
			t.Fatalf("area %dx%d", b.cols, b.rows)
		}
		a.SetZone(z)
		b.SetZone(z)
		term := vtmodel.New(200, 60)
		na, nb := 0, 0
		for i := 0; i < scenTicks; i++ {
			s.step()
			oa, ob := a.Frame(&s.v, h), b.Frame(&s.v, h)
			term.Write(ob)
			if err := checkArea(term, b); err != nil {
				t.Fatalf("zone %d, frame %d: %v", z, i, err)
			}
			if i > 0 {
				na += len(oa)
				nb += len(ob)
			}
		}
		ma, mb := float64(na)/(scenTicks-1), float64(nb)/(scenTicks-1)
		t.Logf("zone %d: 80x24 terminal %.1f B/frame, 80x24 area on 200x60 %.1f B/frame (%+.1f%%)", z, ma, mb, 100*(mb/ma-1))
		if mb > c.max*ma {
			t.Errorf("zone %d: the budgeted area costs %.1f B/frame, over %.2fx the %.1f of its unbudgeted twin", z, mb, c.max, ma)
		}
	}
}
