package render

import (
	"math"
	"sync"
	"unsafe"

	"snaked/game"
)

// Minimum terminal size for the game screen; below it Frame shows a
// "please enlarge the terminal" screen.
const (
	MinCols = 40
	MinRows = 12
)

// Size limits: Resize clamps to them.
const (
	MaxCols = 500
	MaxRows = 200
)

// Screen layout thresholds.
const (
	// bannerRows is the least height with a banner row above the
	// playfield.
	bannerRows = 16
	// compactCols is the width below which the banner, the status row
	// and the radar use their short forms.
	compactCols = 60
)

// Renderer draws views for one terminal. It composes each frame (the
// camera, the playfield, the name tags, radar, kill feed, text rows and
// boxes) into a grid of cells, marking where the grid may differ from
// what the terminal shows, and hands that to its encoder (vt), which owns
// the terminal's side and turns the change into bytes. The Renderer keeps
// what composing needs from frame to frame: the camera, the layout, the
// overlays and what the text rows show. It is not safe for concurrent
// use; one session owns it (or, for a shared renderer, one lock).
//
// A cell budget (NewBudget, SetBudget) bounds the cells a renderer keeps
// state for. A terminal within the budget is drawn whole. A larger one is
// drawn in a centred area of Fit's size, which holds the whole screen
// (banner, playfield, status row) exactly as an unbudgeted renderer of
// the area's size would draw it; every cell around it is cleared by the
// full repaint (ED 2) and then never written (see encode.go). The
// composer's state is in area coordinates and sized for the area.
type Renderer struct {
	cols, rows   int // the drawn area
	tcols, trows int // the terminal
	budget       int // cells the area may hold; 0: no budget
	prof         Profile
	opt          options // how the tests built it; zero in production

	// next is the frame being composed: a grid borrowed for one Frame
	// (grids), since after every frame it equals what the terminal shows,
	// so each frame starts it as a copy of that (begin). With
	// opt.keepNext the renderer keeps one of its own instead.
	next  []cell
	grid  *[]cell          // the borrowed grid next is, between begin and end
	num   []byte           // scratch for numbers and lines of text
	lines [boxLines][]byte // a box's lines (boxState)

	vt encoder // the terminal's side: what it shows, the bytes that change it

	// Layout: playfield rows [pfTop, pfTop+pfRows), banner on row 0 when set.
	pfTop, pfRows int
	banner        bool

	// Camera: world pixel at the playfield's top-left corner.
	camOK      bool
	camX, camY int
	camW, camH int
	follow     game.ID
	zone       int // dead zone: percent of the view the head may roam without moving the camera

	// Incremental frames (inc.go).
	mask     []uint64 // per row: the spans of span cells the encoder diffs; composed's words past its length
	full     bool     // the next frame repaints everything
	warmed   byte     // warm's sum, kept so that its loads are not dropped
	incOK    bool     // the last frame was composed whole or incrementally (vt shows it)
	inc      bool     // the last frame was composed incrementally
	step     bool     // the last frame was a camera step composed from the one before (stepShift)
	stepped  bool     // the last frame's camera step was at most half the playfield (canStep): scrolled and shifted without weighing
	lastTick uint64   // tick of the view the last frame was composed from
	lastOwn  int      // slot of the player's snake in the last frame, -1 none
	lastW    int      // world size of the last frame
	lastH    int

	// Overlays: the HUD's pieces over the playfield (inc.go): where they
	// were drawn in the last frame (ovl) and go in this one (nw).
	ovl, nw   [maxOvl]orect
	novl, nnw int
	rst       [maxOvl]orect // last frame's overlays composed again this frame (restore)
	nrst      int
	boxS      boxState  // death or help box (hud.go)
	boxWas    orect     // where the last frame drew the box; zero when it drew none
	boxWasSig uint64    // what that box showed (boxSig)
	rowsKey   rowsKey   // what the status row shows (hud.go)
	bannerKey bannerKey // what the banner shows
	rowsOK    bool      // the text rows show rowsKey and bannerKey
	stat      []byte    // the status row's text (status), for rowsKey when rowsOK
	hold      boardHold // since when the status row holds its leaderboard and rank (hud.go)
	hintS     string    // the controls hint and where it goes
	hintAt    rect
	dc        deathCause

	// What the playfield shows besides pixels: the heads composed on it
	// (the player's and the followed one included), kept by segment and
	// pruned every frame (tags.go); the followed snake's slot.
	heads []headAt
	focus int

	rad       radar        // radar.go
	tags      [maxTags]tag // tags.go
	tagTick   uint64
	tagBudget int           // tries left for tagTick
	seeing    bool          // segment notes heads (seeHead)
	headsOld  int           // heads kept from before this frame's composition
	feed      [feedMax]kill // feed.go
	feedAt    uint64        // the newest tick whose kills the feed has seen
}

// options are the switches a renderer is built with (newRenderer). New
// and NewBudget build with the zero value; the tests set them to draw
// reference frames, to take parts of the HUD away, or to read a frame
// after Frame returns.
type options struct {
	whole    bool // compose every frame whole, never from the last one
	noRadar  bool // draw no radar
	noFeed   bool // draw no kill feed
	noScene  bool // work out every cell's look here, never from the view's scene (scene.go)
	noWarm   bool // do not warm the renderer's cache lines before a frame (warm)
	keepNext bool // keep a next grid across frames rather than borrow one per frame (the bytes are the same: TestBorrowedGrid)
	rowOrder bool // send every frame row by row, never in greedy order
}

// deathCause is what the death box says killed the player, kept for the
// box's life (View.Kills, which tells a head-on, forgets it after
// game.KillTicks).
type deathCause struct {
	slot          int
	tick          uint64
	known, headOn bool
	other         []byte // the other snake of a head-on
}

// DefaultZone is the camera's dead zone: the followed head may move within
// the central DefaultZone percent of the playfield (in each direction)
// before the camera re-centres on it. See docs/BENCHMARKS.md, "Camera dead zone".
const DefaultZone = 50

// New returns a renderer for a terminal of the given profile and size,
// with no cell budget.
func New(p Profile, cols, rows int) *Renderer {
	return NewBudget(p, cols, rows, 0)
}

// NewBudget returns a renderer for a terminal of the given profile and size
// that keeps state for at most Fit(cols, rows, budget) cells. Unlike New
// followed by SetBudget, it never allocates for the whole terminal.
func NewBudget(p Profile, cols, rows, budget int) *Renderer {
	return newRenderer(p, cols, rows, budget, options{})
}

// newRenderer is NewBudget with options o.
func newRenderer(p Profile, cols, rows, budget int, o options) *Renderer {
	r := &Renderer{prof: p, zone: DefaultZone, budget: max(budget, 0), focus: -1, opt: o}
	r.vt.greedyMax = greedyCells
	if o.rowOrder {
		r.vt.greedyMax = 0
	}
	r.dc.other = make([]byte, 0, game.MaxName)
	for i := range r.feed {
		r.feed[i].init()
	}
	r.Resize(cols, rows)
	return r
}

// CellBytes is the renderer state held per drawn cell: its cell grid and
// the output buffer as sized for a full repaint (bufPerCell bytes a cell).
// A renderer of a w x h area holds at most about CellBytes*w*h bytes, the
// buffer only until Release; see docs/BENCHMARKS.md for the
// measured heap.
const CellBytes = 2 + bufPerCell // a grid of 2-byte cells, the buffer

// Resize sets the terminal size (clamped to 1..MaxCols, 1..MaxRows) and
// fits the drawn area to it and the budget; the next frame is a full
// repaint. The cell grid is allocated afresh whenever the area's cell
// count changes, so a renderer never holds more than its area needs.
func (r *Renderer) Resize(cols, rows int) {
	cols, rows = min(max(cols, 1), MaxCols), min(max(rows, 1), MaxRows)
	r.tcols, r.trows = cols, rows
	cols, rows = Fit(cols, rows, r.budget)
	r.cols, r.rows = cols, rows
	r.vt.resize(cols, rows, r.tcols, (r.tcols-cols)/2, (r.trows-rows)/2)
	n := cols * rows
	if r.opt.keepNext {
		if cap(r.next) != n {
			r.next = make([]cell, n)
		}
		r.next = r.next[:n]
	}
	if cap(r.mask) < 2*rows {
		r.mask = make([]uint64, rows, 2*rows) // and the composed spans past it (composed)
	}
	r.mask = r.mask[:rows]
	if c := headsCap(n); cap(r.heads) != c {
		r.heads = make([]headAt, 0, c)
	}
	r.heads = r.heads[:0]
	r.full, r.camOK, r.incOK, r.rowsOK = true, false, false, false
	r.markAll()
}

// SetBudget bounds the cells the renderer keeps state for (cells <= 0: no
// budget). A terminal larger than the budget is drawn in a centred area of
// Fit's size; the rest of the screen is cleared once per full repaint and
// never written again. When the area changes, the next frame is a full
// repaint; when it does not (the terminal fits either way), nothing else
// changes, so calling it every frame costs nothing.
func (r *Renderer) SetBudget(cells int) {
	r.budget = max(cells, 0)
	if w, h := Fit(r.tcols, r.trows, r.budget); w != r.cols || h != r.rows {
		r.Resize(r.tcols, r.trows)
	}
}

// Fit returns the size of the area a renderer with the given cell budget
// draws on a cols x rows terminal (after clamping to 1..MaxCols,
// 1..MaxRows). budget <= 0 means no budget beyond MaxCols*MaxRows; a
// budget below MinCols*MinRows is raised to it.
//
// A terminal within the budget is drawn whole. A larger one gets the
// terminal's shape scaled down (both sides by the same factor, rounded
// down, the width then widened to use the budget's remaining cells), but
// never below MinCols x MinRows where the terminal itself is at least that
// big, so the game screen never turns into the "please enlarge" screen.
func Fit(cols, rows, budget int) (w, h int) {
	cols, rows = min(max(cols, 1), MaxCols), min(max(rows, 1), MaxRows)
	if budget <= 0 {
		return cols, rows
	}
	budget = max(budget, MinCols*MinRows)
	if cols*rows <= budget {
		return cols, rows
	}
	// w/h = cols/rows and w*h = budget give h = sqrt(budget*rows/cols);
	// of the whole numbers either side, the one whose widest area keeps
	// the shape better.
	f := math.Sqrt(float64(budget) * float64(rows) / float64(cols))
	h = int(f)
	if shapeErr(budget/(h+1), h+1, cols, rows) < shapeErr(budget/max(h, 1), max(h, 1), cols, rows) {
		h++
	}
	h = min(max(h, min(rows, MinRows)), rows)
	w = min(cols, budget/h)
	if lo := min(cols, MinCols); w < lo {
		w = lo
		h = min(rows, budget/w) // >= min(rows, MinRows), as budget >= MinCols*MinRows
	}
	return w, h
}

// shapeErr is how far the shape w x h is from cols x rows.
func shapeErr(w, h, cols, rows int) float64 {
	return math.Abs(float64(w)/float64(h) - float64(cols)/float64(rows))
}

// Invalidate makes the next frame a full repaint (Ctrl-L).
func (r *Renderer) Invalidate() { r.full = true }

// SetProfile changes the profile; the next frame is a full repaint.
func (r *Renderer) SetProfile(p Profile) {
	r.prof, r.full, r.rowsOK = p, true, false
	r.dropTags() // their text depends on the profile
}

// SetZone sets the camera dead zone in percent (0 follows the head every
// tick, 100 moves only when the head leaves the screen).
func (r *Renderer) SetZone(pct int) { r.zone = min(max(pct, 0), 100) }

// Frame renders v for the HUD h and returns the bytes that take the
// terminal there. They are valid until the next call or Release; the
// result is empty when nothing changed. Views with Dirty are trusted to
// come from one world: a renderer that switches worlds must be
// Invalidated.
func (r *Renderer) Frame(v *game.View, h *HUD) []byte {
	if !r.opt.noWarm {
		r.warm()
	}
	full := r.full
	r.full = false
	if full {
		r.incOK = false
	}
	r.begin()
	dx, dy := r.compose(v, h)
	if full {
		dx, dy = 0, 0
	}
	out := r.vt.frame(&change{
		next: r.next, mask: r.mask, full: full, dx: dx, dy: dy, stepped: r.stepped,
		pfTop: r.pfTop, pfRows: r.pfRows,
	})
	r.end()
	return out
}

// Release gives back the buffer the last frame's bytes are in: they must
// not be used after it. The next Frame takes a buffer again. A renderer
// that is never released keeps its buffer (trimmed after a big frame).
func (r *Renderer) Release() { r.vt.release() }

// grids holds the grids renderers borrow for one frame (*[]cell): a
// session keeps one grid of cells (what its terminal shows) instead of
// two, and the few in use at once stay in the cache.
var grids sync.Pool

// gridMin is the least capacity of a grid made for the pool, so that the
// common terminal sizes share one size of grid.
const gridMin = 16 << 10

// warm reads a byte of each cache line the Renderer's fields take, in
// one pass of loads that do not wait for each other. In a daemon a
// session's state is cold at its frame (thousands of sessions' frames ran
// since its last one), and the frame's own reads of its fields come
// scattered, each miss waiting for the one before: warming them first
// lets the misses overlap (BenchmarkCrowdCold measures what it saves).
func (r *Renderer) warm() {
	p := unsafe.Pointer(r)
	n := unsafe.Sizeof(*r)
	var s byte
	for off := uintptr(0); off < n; off += 64 {
		s += *(*byte)(unsafe.Add(p, off))
	}
	r.warmed = s + *(*byte)(unsafe.Add(p, n-1))
}

// begin sets r.next for a frame to a copy of what the terminal shows.
// After every frame the encoder has made that equal to r.next (the
// oracle tests check it), so this is the grid a renderer that kept its
// next would start from.
func (r *Renderer) begin() {
	shown := r.vt.shown()
	n := len(shown)
	if !r.opt.keepNext {
		g, _ := grids.Get().(*[]cell)
		if g == nil || cap(*g) < n {
			g = new([]cell)
			*g = make([]cell, max(n, gridMin))
		}
		r.grid, r.next = g, (*g)[:n]
	}
	copy(r.next, shown)
}

// end gives the borrowed grid back.
func (r *Renderer) end() {
	if r.grid != nil {
		grids.Put(r.grid)
		r.grid, r.next = nil, nil
	}
}

// compose fills r.next for this frame and returns the camera step since the
// last frame in columns and rows. When the camera stayed, the layout and
// the player's snake are the same and the view says which tiles changed
// (View.Dirty), only those tiles, the text rows and the overlays (old and
// new) are composed again, and r.mask tells the encoder where to look. A
// camera step of at most half the playfield moves the last frame's
// playfield with it and composes what comes in (stepShift), the same way.
//
// Overlays (inc.go) are laid out first, all of them, then the cells under
// last frame's overlays that no overlay of this frame covers the same way
// are composed again from the playfield, then this frame's overlays are
// painted, lowest first: name tags, radar, kill feed, hint, box.
func (r *Renderer) compose(v *game.View, h *HUD) (dx, dy int) {
	if r.cols < MinCols || r.rows < MinRows {
		clear(r.next)
		r.pfRows, r.pfTop, r.banner, r.camOK, r.incOK, r.inc, r.step, r.stepped = 0, 0, false, false, false, false, false, false
		r.novl, r.rowsOK = 0, false
		r.markAll()
		r.enlarge()
		return 0, 0
	}
	r.banner = r.rows >= bannerRows
	r.pfTop = 0
	if r.banner {
		r.pfTop = 1
	}
	r.pfRows = r.rows - 1 - r.pfTop
	if h == nil {
		h = &HUD{ShutdownIn: -1}
	}
	ok := v != nil && v.W > 0 && v.H > 0 && len(v.Pix) >= v.W*v.H
	inc := false
	own := -1
	if ok {
		ox, oy, was := r.camX, r.camY, r.camOK
		dx, dy = r.camera(v, h)
		own = ownSlot(v, h)
		r.focus = -1
		if s, ok := v.Snake(h.Follow); ok {
			r.focus = s.ID.Slot()
		}
		r.seeing, r.headsOld = true, len(r.heads)
		// The last frame can be built on: what the terminal shows, the
		// camera, the player's snake and the world are those it drew.
		goOn := r.incOK && !r.opt.whole && was &&
			own == r.lastOwn && v.W == r.lastW && v.H == r.lastH && v.Tick >= r.lastTick &&
			len(v.Dirty) == game.TilesW(v.W)*game.TilesH(v.H)
		inc = goOn && r.camX == ox && r.camY == oy
		r.inc = inc
		r.stepped = r.canStep(v, ox, oy, dx, dy)
		r.step = goOn && !inc && r.stepped
		switch {
		case inc:
			clear(r.mask)
			r.dirtyTiles(v, own)
		case r.step:
			clear(r.mask)
			r.stepShift(v, own, dx, dy)
			r.dirtyTiles(v, own)
		default:
			// A whole playfield sees every head on it: last frame's take
			// no room for heads (headsCap).
			r.heads, r.headsOld = r.heads[:0], 0
			r.markAll()
			r.playfield(v, own)
		}
		r.pruneHeads(v)
		r.incOK, r.lastTick, r.lastOwn, r.lastW, r.lastH = true, v.Tick, own, v.W, v.H
	} else {
		clear(r.next)
		r.markAll()
		r.incOK, r.inc, r.step, r.stepped, r.rowsOK = false, false, false, false, false
		r.heads = r.heads[:0]
	}
	var you *game.SnakeInfo
	if ok && h.You != 0 {
		you, _ = v.Snake(h.You)
		if you != nil && !you.Alive && you.DeathTick == 0 {
			// Never lived: still waiting for its first spawn (the next
			// tick, or a free place). Shown as spawning, not as dead.
			you = nil
		}
	}
	r.textRows(v, h, you, ok)

	// Overlays: lay out, restore what they leave, paint. What the
	// playfield's composition marked is kept aside first (untouched).
	if inc {
		copy(r.composed(), r.mask)
	}
	r.nnw, r.nrst = 0, 0
	radar, feed, tags, hint, box := false, false, false, false, false
	if ok {
		radar = r.layoutRadar(v, h, own)
		feed = r.layoutFeed(v, own)
	}
	if hint = h.Hint && !h.Help; hint {
		r.layoutHint(h)
	}
	if ok && !h.HideTags {
		tags = r.layoutTags(v, own) // around the overlays so far; under the box
	} else {
		r.dropTags()
	}
	switch {
	case h.Help:
		r.help(h)
		box = true
	case you != nil && !you.Alive && !h.Spectator:
		r.death(v, h, you)
		box = true
	}
	if box {
		r.layoutBox()
	}
	if inc || r.step {
		r.restore(v, own)
	}
	if tags {
		r.paintTags(v, own)
	}
	if radar {
		r.paintRadar(v, own)
	}
	if feed {
		r.paintFeed(v, own)
	}
	if hint {
		pv := v
		if !ok {
			pv = nil
		}
		r.paintHint(pv, own)
	}
	if box {
		r.paintBox()
	} else {
		r.boxWas = orect{}
	}
	r.ovl, r.novl = r.nw, r.nnw
	return dx, dy
}

// ownSlot is the slot of the player's snake in v, -1 when none.
func ownSlot(v *game.View, h *HUD) int {
	if h.You != 0 {
		if s, ok := v.Snake(h.You); ok {
			return s.ID.Slot()
		}
	}
	return -1
}

func mod(a, n int) int {
	a %= n
	if a < 0 {
		a += n
	}
	return a
}

// wrap1 is mod(a, n) for a in [-n, 2n), without dividing.
func wrap1(a, n int) int {
	if a < 0 {
		return a + n
	}
	if a >= n {
		return a - n
	}
	return a
}

// wrapDelta is d reduced to the shortest step on a ring of n.
func wrapDelta(d, n int) int {
	d = mod(d, n)
	if d > n/2 {
		d -= n
	}
	return d
}

// camera updates the camera and returns its step in columns and rows.
func (r *Renderer) camera(v *game.View, h *HUD) (dx, dy int) {
	pw, ph := r.cols, 2*r.pfRows
	tx, ty, have := h.Cam.X, h.Cam.Y, true
	if h.Follow != 0 {
		s, ok := v.Snake(h.Follow)
		have = ok && s.Alive
		if have {
			at := v.Heads[h.Follow.Slot()]
			tx, ty = at.X, at.Y
		}
	}
	cx, cy := tx-pw/2, ty-ph/2
	if !r.camOK || r.camW != v.W || r.camH != v.H {
		if !have {
			cx, cy = 0, 0
		}
		r.camOK, r.camW, r.camH, r.follow = true, v.W, v.H, h.Follow
		// An even camY puts each screen row on one pair of world rows
		// that starts a tile row (game.TileH is even), as camera steps
		// are whole rows.
		r.camX, r.camY = mod(cx, v.W), mod(cy-mod(cy, 2), v.H)
		return 0, 0
	}
	if !have {
		return 0, 0
	}
	nx, ny := cx, cy
	if h.Follow != 0 && h.Follow == r.follow {
		nx, ny = r.camX, r.camY
		mx, my := pw*(100-r.zone)/200, ph*(100-r.zone)/200
		if rx := mod(tx-r.camX, v.W); rx < mx || rx >= pw-mx {
			nx = cx
		}
		if ry := mod(ty-r.camY, v.H); ry < my || ry >= ph-my {
			ny = cy
		}
	}
	r.follow = h.Follow
	dx = wrapDelta(nx-r.camX, v.W)
	dpy := wrapDelta(ny-r.camY, v.H)
	dpy -= dpy % 2
	r.camX, r.camY = mod(r.camX+dx, v.W), mod(r.camY+dpy, v.H)
	return dx, dpy / 2
}

// pixel classes, in drawing priority (Mono shows the higher of a cell's two).
const (
	cEmpty = iota
	cFruit
	cShield
	cBody
	cOwnBody
	cHead
	cOwnHead
)

var monoGlyph = [...]byte{' ', '*', ':', 'o', '#', 'O', '@'}

// playfield draws the world under the camera.
func (r *Renderer) playfield(v *game.View, own int) {
	mono := r.prof == Mono
	w := r.cols
	for sy := 0; sy < r.pfRows; sy++ {
		top := v.Row(r.camY + 2*sy)
		bot := v.Row(r.camY + 2*sy + 1)
		row := r.next[(r.pfTop+sy)*w : (r.pfTop+sy+1)*w]
		for x, wx := 0, r.camX; x < w; {
			// The world row from wx, up to its end or the screen's.
			n := min(w-x, v.W-wx)
			r.segment(v, row[x:x+n], top[wx:wx+n], bot[wx:wx+n], own, mono, wx, mod(r.camY+2*sy, v.H))
			x += n
			wx = 0
		}
	}
}

// A pixel's Kind bits, and their value for a head (game.MakePixel).
const (
	kindBits = game.Pixel(3 << 20)
	headBits = game.Pixel(game.Head) << 20
)

// pspan is how many pixels segment checks for emptiness at once.
const pspan = 8

// segment draws pixel rows top and bot into row (all the same length).
// (top[0] is world pixel (wx, wy), bot[0] the one below; segment notes
// the heads it sees.)
func (r *Renderer) segment(v *game.View, row []cell, top, bot []game.Pixel, own int, mono bool, wx, wy int) {
	for x0 := 0; x0 < len(row); x0 += pspan {
		x1 := min(x0+pspan, len(row))
		if x1-x0 == pspan {
			t, b := top[x0:x1:x1], bot[x0:x1:x1]
			if t[0]|t[1]|t[2]|t[3]|t[4]|t[5]|t[6]|t[7]|b[0]|b[1]|b[2]|b[3]|b[4]|b[5]|b[6]|b[7] == 0 {
				clear(row[x0:x1])
				continue
			}
		}
		for x := x0; x < x1; x++ {
			if a, b := top[x], bot[x]; a == 0 && b == 0 {
				row[x] = blank
			} else {
				row[x] = r.pixCell(v, a, b, own, mono, wx+x, wy)
			}
		}
	}
}

// pixCell is the cell that shows pixel a, world pixel (wx, wy), over pixel
// b, the one below it, not both empty (the callers draw blank for those
// without the call); it notes the heads among them (seeHead).
func (r *Renderer) pixCell(v *game.View, a, b game.Pixel, own int, mono bool, wx, wy int) cell {
	if (a|b)&kindBits == kindBits { // a head, or fruit over body
		r.seeHeads(v, a, b, wx, wy)
	}
	if mono {
		return txt(monoGlyph[max(class(v, a, own), class(v, b, own))], def, def)
	}
	return px(colour(v, a, own), colour(v, b, own))
}

// seeHeads notes the heads among pixel a, world pixel (wx, wy), and b,
// the one below it (seeHead).
func (r *Renderer) seeHeads(v *game.View, a, b game.Pixel, wx, wy int) {
	if a&kindBits == headBits {
		r.seeHead(a.Slot(), wx, wy)
	}
	if b&kindBits == headBits {
		r.seeHead(b.Slot(), wx, mod(wy+1, v.H))
	}
}

func class(v *game.View, p game.Pixel, own int) int {
	switch p.Kind() {
	case game.Fruit:
		return cFruit
	case game.Body, game.Head:
		s := p.Slot()
		head := p.Kind() == game.Head
		switch {
		case s == own && head:
			return cOwnHead
		case head:
			return cHead
		case v.Shielded(s):
			return cShield
		case s == own:
			return cOwnBody
		}
		return cBody
	}
	return cEmpty
}

func colour(v *game.View, p game.Pixel, own int) uint8 {
	switch p.Kind() {
	case game.Fruit:
		return fruitCol
	case game.Body, game.Head:
		s := p.Slot()
		if p.Kind() == game.Head {
			if s == own {
				return ownHeadCol
			}
		} else if v.Shielded(s) {
			return shieldCol
		}
		return snakePal[p.Colour()]
	}
	return def
}
