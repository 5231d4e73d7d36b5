package render

import (
	"slices"
	"strconv"
	"testing"

	"snaked/game"
	"snaked/internal/vtmodel"
)

// The standard scenario: a seeded stand-in world (sim), the followed snake
// plus 4 others of length 25 that stay near it (as in DESIGN.md), fruit at
// a density that puts ~40 in view, 80x24, 16 colours, 3,000 ticks, the
// followed snake turning every 2-7 ticks.
const (
	scenTicks = 3000
	scenSeed  = 42
)

func scenario() (*sim, *HUD) {
	s := newSim(scenSeed, 400, 220, 5, 25, 1400)
	for i := range s.v.Snakes {
		s.v.Top = append(s.v.Top, game.Entry{Slot: i, Name: s.v.Snakes[i].Name, Length: 25})
	}
	h := &HUD{You: s.v.Snakes[0].ID, Follow: s.v.Snakes[0].ID, ShutdownIn: -1,
		Players: 5, Spectators: 2, Join: "ssh -p 2222 snaked.example"}
	return s, h
}

// strategy is one encoding under comparison: it returns the bytes for the
// frame r has just composed into r.next.
type strategy func(r *Renderer, first bool) []byte

// fullEnc repaints every cell each frame, tracking the pen across frames.
func fullEnc(r *Renderer, first bool) []byte {
	r.vt.out = r.vt.buf[:0]
	if first {
		r.vt.out = append(r.vt.out, "\x1b[?1049h\x1b[?25l\x1b[m\x1b[r"...)
		r.vt.pfg, r.vt.pbg = def, def
	}
	for y := 0; y < r.rows; y++ {
		r.vt.cx, r.vt.cy = -1, -1
		r.vt.moveTo(0, y)
		for x := 0; x < r.cols; x++ {
			r.vt.putCell(r.next[y*r.cols+x])
		}
	}
	r.vt.buf = r.vt.out
	return r.vt.out
}

// lineEnc re-sends every line that changed, like bubbletea v1's renderer:
// each line starts from a reset pen and ends with a reset.
func lineEnc(r *Renderer, first bool) []byte {
	r.vt.out = r.vt.buf[:0]
	if first {
		r.vt.out = append(r.vt.out, "\x1b[?1049h\x1b[?25l\x1b[m\x1b[r"...)
		for i := range r.vt.prev {
			r.vt.prev[i] = unknown
		}
	}
	w := r.cols
	for y := 0; y < r.rows; y++ {
		if slices.Equal(r.vt.prev[y*w:(y+1)*w], r.next[y*w:(y+1)*w]) {
			continue
		}
		r.vt.cx, r.vt.cy = -1, -1
		r.vt.moveTo(0, y)
		r.vt.pfg, r.vt.pbg = def, def
		for x := 0; x < w; x++ {
			r.vt.putCell(r.next[y*w+x])
		}
		r.vt.out = append(r.vt.out, "\x1b[m"...)
		r.vt.pfg, r.vt.pbg = def, def
		copy(r.vt.prev[y*w:(y+1)*w], r.next[y*w:(y+1)*w])
	}
	r.vt.buf = r.vt.out
	return r.vt.out
}

// run plays the standard scenario with enc (nil: the real encoder) and
// returns the size of every frame after the first, and the mean fruit and
// snake heads in view. With term set, every frame is checked against it.
func run(tb testing.TB, enc strategy, zone int, term *vtmodel.Term) (sizes []int, fruit, heads float64) {
	return runSim(tb, enc, zone, term, hudCut{}, nil)
}

// hudCut is a HUD with pieces left out: the renderer's options and
// whether the HUD hides the name tags.
type hudCut struct {
	opt    options
	noTags bool
}

// renderer returns a renderer of p and size cols x rows built with c's
// options and keeping its next grid, and sets h as c says.
func (c hudCut) renderer(p Profile, cols, rows int, h *HUD) *Renderer {
	h.HideTags = h.HideTags || c.noTags
	o := c.opt
	o.keepNext = true
	return newRenderer(p, cols, rows, 0, o)
}

// runSim is run with the HUD cut as cut says and simSet applied to the
// stand-in world first (nil: nothing).
func runSim(tb testing.TB, enc strategy, zone int, term *vtmodel.Term, cut hudCut, simSet func(*sim)) (sizes []int, fruit, heads float64) {
	s, h := scenario()
	r := cut.renderer(ANSI16, 80, 24, h)
	r.SetZone(zone)
	if simSet != nil {
		simSet(s)
	}
	sizes = make([]int, 0, scenTicks)
	nf, nh := 0, 0
	for i := 0; i < scenTicks; i++ {
		s.step()
		out := drawFrame(tb, r, &s.v, h, enc, i, term)
		if i > 0 {
			sizes = append(sizes, len(out))
		}
		nf += fruitInView(r)
		for _, at := range s.v.Heads {
			if onScreen(r, &s.v, at) {
				nh++
			}
		}
	}
	return sizes, float64(nf) / scenTicks, float64(nh) / scenTicks
}

// drawFrame draws frame i of v with enc (nil: the real encoder) and, with
// term set, replays it there and checks the screen.
func drawFrame(tb testing.TB, r *Renderer, v *game.View, h *HUD, enc strategy, i int, term *vtmodel.Term) []byte {
	var out []byte
	if enc == nil {
		out = r.Frame(v, h)
	} else {
		r.full = false
		r.compose(v, h)
		out = enc(r, i == 0)
	}
	if term != nil {
		term.Write(out)
		c := check
		if enc != nil {
			c = checkScreen // the strategies under comparison keep r.prev their own way
		}
		if err := c(term, r); err != nil {
			tb.Fatalf("frame %d: %v", i, err)
		}
	}
	return out
}

// onScreen reports whether world pixel p is on r's playfield.
func onScreen(r *Renderer, v *game.View, p game.Point) bool {
	return mod(p.X-r.camX, v.W) < r.cols && mod(p.Y-r.camY, v.H) < 2*r.pfRows
}

// warm returns the standard scenario and a renderer that has drawn its
// first 50 frames.
func warm() (*sim, *HUD, *Renderer) {
	s, h := scenario()
	r := newKept(ANSI16, 80, 24)
	for i := 0; i < 50; i++ {
		s.step()
		r.Frame(&s.v, h)
	}
	return s, h, r
}

// fruitInView counts the fruit pixels on the playfield.
func fruitInView(r *Renderer) int {
	n := 0
	for _, c := range r.next[r.cols*r.pfTop : r.cols*(r.pfTop+r.pfRows)] {
		if c.ch() == 0 && c.fg() == fruitCol {
			n++
		}
		if c.ch() == 0 && c.bg() == fruitCol {
			n++
		}
	}
	return n
}

func stats(sizes []int) (mean float64, p50, p95 int) {
	s := slices.Clone(sizes)
	slices.Sort(s)
	sum := 0
	for _, n := range s {
		sum += n
	}
	return float64(sum) / float64(len(s)), s[len(s)/2], s[len(s)*95/100]
}

// BenchmarkScenario compares bytes per frame of three strategies over the
// standard scenario: one op is one 3,000-tick run. The snaked-* variants
// price the HUD's pieces over the playfield (see hudVariants).
func BenchmarkScenario(b *testing.B) {
	for _, c := range []struct {
		name string
		enc  strategy
	}{{"full", fullEnc}, {"linediff", lineEnc}, {"snaked", nil}} {
		b.Run(c.name, func(b *testing.B) { scenarioBench(b, c.enc, hudCut{}, nil) })
	}
	for _, c := range hudVariants {
		b.Run("snaked-"+c.name, func(b *testing.B) { scenarioBench(b, nil, c.cut, c.sim) })
	}
}

// hudVariants are the standard scenario (and BenchmarkWorld) with parts of
// the HUD over the playfield left out, and with kills for the feed: the
// standard HUD shows name tags, the radar and the kill feed, but the
// stand-in world has no deaths, so "kills" adds a made-up death near the
// followed snake every 2 seconds (a busy fight: cut-offs, self-kills and
// head-ons in turn, each shown for feedShow ticks).
var hudVariants = []struct {
	name string
	cut  hudCut
	sim  func(*sim) // nil: the world as it is
}{
	{"notags", hudCut{noTags: true}, nil},
	{"nohud", hudCut{opt: options{noRadar: true, noFeed: true}, noTags: true}, nil},
	{"kills", hudCut{}, func(s *sim) { s.feedKills(2 * game.TicksPerSecond) }},
	{"kills-nofeed", hudCut{opt: options{noFeed: true}}, func(s *sim) { s.feedKills(2 * game.TicksPerSecond) }},
	{"kills-notags", hudCut{noTags: true}, func(s *sim) { s.feedKills(2 * game.TicksPerSecond) }},
}

// scenarioBench runs the standard scenario with enc and reports its bytes.
func scenarioBench(b *testing.B, enc strategy, cut hudCut, simSet func(*sim)) {
	var sizes []int
	var f, n float64
	for b.Loop() {
		sizes, f, n = runSim(b, enc, DefaultZone, nil, cut, simSet)
	}
	mean, p50, p95 := stats(sizes)
	b.ReportMetric(mean, "B/frame")
	b.ReportMetric(float64(p50), "p50-B/frame")
	b.ReportMetric(float64(p95), "p95-B/frame")
	b.ReportMetric(f, "fruit-in-view")
	b.ReportMetric(n, "heads-in-view")
}

// BenchmarkZone measures the camera dead zone's effect on bytes per frame.
func BenchmarkZone(b *testing.B) {
	for _, z := range []int{0, 20, 40, 50, 60, 70, 80} {
		b.Run("zone="+strconv.Itoa(z), func(b *testing.B) {
			var sizes []int
			for b.Loop() {
				sizes, _, _ = run(b, nil, z, nil)
			}
			mean, p50, p95 := stats(sizes)
			b.ReportMetric(mean, "B/frame")
			b.ReportMetric(float64(p50), "p50-B/frame")
			b.ReportMetric(float64(p95), "p95-B/frame")
		})
	}
}

// BenchmarkFrame times render+encode of one frame in steady state (the
// stand-in world's step, timed alone in BenchmarkSimStep, is included).
// "whole" composes and diffs whole frames (options.whole).
func BenchmarkFrame(b *testing.B) {
	for _, c := range []struct {
		name  string
		cols  int
		rows  int
		whole bool
	}{{"80x24", 80, 24, false}, {"200x60", 200, 60, false}, {"80x24-whole", 80, 24, true}, {"200x60-whole", 200, 60, true}} {
		sz := [2]int{c.cols, c.rows}
		b.Run(c.name, func(b *testing.B) {
			s, h := scenario()
			r := newRenderer(ANSI16, sz[0], sz[1], 0, options{keepNext: true, whole: c.whole})
			for i := 0; i < 50; i++ {
				s.step()
				r.Frame(&s.v, h)
			}
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				s.step()
				n += len(r.Frame(&s.v, h))
			}
			b.ReportMetric(float64(n)/float64(b.N), "B/frame")
		})
	}
}

// BenchmarkSimStep times the stand-in world's step alone.
func BenchmarkSimStep(b *testing.B) {
	s, _ := scenario()
	for b.Loop() {
		s.step()
	}
}

func TestScenarioTargets(t *testing.T) {
	fs, _, _ := run(t, fullEnc, DefaultZone, vtmodel.New(80, 24))
	ls, _, _ := run(t, lineEnc, DefaultZone, vtmodel.New(80, 24))
	ss, _, _ := run(t, nil, DefaultZone, vtmodel.New(80, 24))
	full, _, _ := stats(fs)
	line, _, _ := stats(ls)
	mean, p50, p95 := stats(ss)
	t.Logf("full %.0f, linediff %.0f, snaked %.1f (p50 %d, p95 %d) B/frame: %.1fx smaller than full", full, line, mean, p50, p95, full/mean)
	if mean > 150 || full/mean < 20 {
		t.Errorf("snaked %.1f B/frame, %.1fx smaller than full; want <= 150 and >= 20x", mean, full/mean)
	}
}

// TestZeroAllocs checks that a steady-state frame allocates nothing, with
// every HUD piece at work: name tags and the kill feed (a made-up kill
// every 15 ticks) in the standard scenario, the radar (its scans and
// refreshes) for a player alone.
func TestZeroAllocs(t *testing.T) {
	for _, borrow := range []bool{false, true} {
		if borrow && raceEnabled {
			continue // make test runs it without the race detector too
		}
		for _, sz := range [][2]int{{80, 24}, {200, 60}, {30, 10}} {
			s, h := scenario()
			h.Hint = true
			s.feedKills(15)
			// Borrowing: as a session draws, a pooled grid and Release
			// after each frame.
			r := newRenderer(ANSI16, sz[0], sz[1], 0, options{keepNext: !borrow})
			frame := func() {
				s.step()
				r.Frame(&s.v, h)
				if borrow {
					r.Release()
				}
			}
			for i := 0; i < 2*trimAfter; i++ { // past the output buffer's trim
				frame()
			}
			if n := testing.AllocsPerRun(200, frame); n != 0 {
				t.Errorf("%v, borrowing %v: %v allocs per frame", sz, borrow, n)
			}
		}
	}
	v, h := alone()
	r := newKept(Mono, 80, 24)
	for i := 0; i < 2*trimAfter; i++ {
		v.Tick++
		r.Frame(v, h)
	}
	scans := r.rad.scans
	i := 0
	if n := testing.AllocsPerRun(200, func() {
		v.Tick++
		i++
		v.Heads[1].X = 290 + i%50 // the radar's text changes
		r.Frame(v, h)
	}); n != 0 || !r.rad.on || r.rad.scans == scans {
		t.Errorf("radar: %v allocs per frame (on %v, %d scans)", n, r.rad.on, r.rad.scans-scans)
	}
}

// composeRing is how many consecutive ticks of the standard scenario
// BenchmarkCompose composes in turn (~400 KB of view each).
const composeRing = 64

// BenchmarkCompose times composing one steady-state 80x24 frame (view + HUD
// -> cells) alone, as Frame does it: each op composes the next tick's view
// after the previous one, so the renderer takes its incremental path and
// composes again what changed (or all of it after a camera step). The ticks
// are stepped and copied before timing; after the last of the ring the
// renderer is put back as it was before the first (not timed), so the same
// ticks follow each other again. "inc-share" is the share of frames
// composed incrementally, "pf-rows/frame" how many of the 22 playfield rows
// a frame composes again (some or all of their cells).
func BenchmarkCompose(b *testing.B) {
	s, h, r := warm()
	views := make([]game.View, composeRing)
	for i := range views {
		s.step()
		views[i] = cloneView(&s.v)
	}
	snap, next, mask := *r, slices.Clone(r.next), slices.Clone(r.mask)
	rewind := func() {
		*r = snap
		copy(r.next, next)
		copy(r.mask, mask)
	}
	// One untimed pass for the metrics, checking the ring really changes.
	incs, rows := 0, 0
	for i := range views {
		r.compose(&views[i], h)
		if r.inc {
			incs++
		}
		for _, m := range r.mask[r.pfTop : r.pfTop+r.pfRows] {
			if m != 0 {
				rows++
			}
		}
	}
	if incs == 0 || rows == 0 {
		b.Fatalf("%d of %d frames incremental, %d playfield rows composed: the ring does not exercise the incremental path", incs, len(views), rows)
	}
	rewind()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == len(views) {
			b.StopTimer()
			rewind()
			i = 0
			b.StartTimer()
		}
		r.compose(&views[i], h)
		i++
	}
	b.ReportMetric(float64(incs)/float64(len(views)), "inc-share")
	b.ReportMetric(float64(rows)/float64(len(views)), "pf-rows/frame")
}

// cloneView returns a copy of v that shares nothing mutable with it.
func cloneView(v *game.View) game.View {
	return game.View{
		Tick: v.Tick, W: v.W, H: v.H,
		Pix:     slices.Clone(v.Pix),
		Snakes:  slices.Clone(v.Snakes),
		Top:     slices.Clone(v.Top),
		Players: v.Players, Bots: v.Bots, Best: v.Best,
		Dirty:  slices.Clone(v.Dirty),
		Fresh:  slices.Clone(v.Fresh),
		Shield: slices.Clone(v.Shield),
	}
}

// BenchmarkEncode times encoding one steady-state 80x24 frame alone (the
// same frame each time, from the same terminal state).
func BenchmarkEncode(b *testing.B) {
	s, h, r := warm()
	prev := append([]cell(nil), r.vt.prev...)
	s.step()
	r.compose(&s.v, h)
	hand(r)
	cx, cy, pf, pb := r.vt.cx, r.vt.cy, r.vt.pfg, r.vt.pbg
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		copy(r.vt.prev, prev)
		r.vt.cx, r.vt.cy, r.vt.pfg, r.vt.pbg = cx, cy, pf, pb
		r.vt.out = r.vt.buf[:0]
		r.vt.encode(false, 0, 0)
		n = len(r.vt.out)
	}
	b.ReportMetric(float64(n), "B/frame")
}
