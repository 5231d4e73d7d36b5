package render

import "sync"

// encoder turns composed frames into the VT100 bytes that take one
// terminal from what it shows to the frame. It owns everything about that
// terminal: the grid of what the drawn area shows (prev), the cursor, the
// pen, the scroll region, whether the alternate screen was entered, and
// the output buffer the bytes are built in. The composer (Renderer) hands
// it each frame as a change (the composed grid, the spans of it that may
// differ from prev, the camera's step) and starts the next frame from a
// copy of prev (shown); after every frame prev equals the composed grid.
//
// It draws an area of cols x rows cells whose top-left cell is (ox, oy)
// on a terminal tcols wide; all its state is in area coordinates (see
// encode.go). It is not safe for concurrent use: it lives inside one
// Renderer, and only that Renderer's methods call it (snapshot works on
// a copy and leaves it as it was).
type encoder struct {
	cols, rows int // the drawn area
	tcols      int // the terminal's width
	ox, oy     int // the area's top-left cell on the terminal

	// prev is what the area shows.
	prev []cell

	// The change being encoded: set by frame for its length, nil between
	// frames (next is a grid the composer borrows for one frame).
	next []cell   // the frame wanted
	mask []uint64 // per row, the spans of span cells to diff (change.mask)

	// The playfield's rows, from the last change: a full repaint sets the
	// scroll region to them.
	pfTop, pfRows int

	buf    []byte  // output, reused; its first len(syncOn) bytes are room for syncOn
	bufp   *[]byte // buf's box in bufs (takeBuf, release)
	out    []byte  // the frame being built (aliases buf)
	todo   []spot  // greedy: changed cells
	gcost  []int32 // greedy: glyph cost of each, for the current pen
	smallN int     // frames in a row much smaller than cap(buf) (trim)

	// Cursor: cx is -1 after writing the terminal's last column, when a
	// wrap is pending; cx or cy < 0 also when the cursor is left of or
	// above the area; cx == cols in the right margin.
	cx, cy int
	// Scroll region: its first and last row.
	top, bot int
	// Pen: the colours SGR last set.
	pfg, pbg uint8

	stepped   bool  // change.stepped, for the frame's length
	entered   bool  // the alternate screen was entered
	sparse    bool  // the last frame drew at most greedyMax cells: try greedy
	shared    bool  // frames end parked, for many terminals (shared.go)
	greedyMax uint8 // the most changed cells greedy orders: greedyCells, or 0 (options.rowOrder)
}

// change is one composed frame as the composer hands it to the encoder:
// built for one call of frame, whose encoder holds its slices only during
// that call (next is a borrowed grid; mask stays the composer's).
type change struct {
	next []cell // the frame: every cell of the area, row by row
	// mask holds, per row, the spans (bit i: cells [i*span, (i+1)*span))
	// where next may differ from what the terminal shows; the encoder
	// looks nowhere else, and may clear the bits of spans it finds equal.
	mask    []uint64
	full    bool // what the terminal shows is not known: repaint every cell
	dx, dy  int  // the camera's step since the last frame, in columns and rows
	stepped bool // the step is at most half the playfield: scroll and shift without weighing (canStep)
	// The playfield's rows [pfTop, pfTop+pfRows): the scroll region;
	// pfRows 0 when the screen has no playfield.
	pfTop, pfRows int
}

// syncMin is the frame size from which a frame is wrapped in synchronized
// output (?2026), so the terminal shows it at once.
const syncMin = 1024

const (
	syncOn  = "\x1b[?2026h"
	syncOff = "\x1b[?2026l"
)

// greedyCells is the most changed cells greedy orders; larger frames go
// row by row. Greedy is tried only after a frame that drew at most this
// many cells (sparse): in a crowd nearly every frame changes more, and a
// greedy pass that gives up has scanned for nothing
// (docs/BENCHMARKS.md).
const greedyCells = 16

// greedyCells must fit encoder.greedyMax.
const _ uint8 = greedyCells

// Output buffer capacity for a full repaint: bufPerCell bytes per drawn
// cell plus bufExtra. A full repaint of a busy world takes about one
// byte a cell; one where every cell changes colour pair takes up to ~9 and
// grows the buffer; trim gives it back.
const (
	bufPerCell = 4
	bufExtra   = 64
)

// resize sets the area and the terminal's width; the caller makes the
// next frame a full repaint. The grid is allocated afresh whenever the
// area's cell count changes.
func (vt *encoder) resize(cols, rows, tcols, ox, oy int) {
	vt.cols, vt.rows, vt.tcols, vt.ox, vt.oy = cols, rows, tcols, ox, oy
	n := cols * rows
	if cap(vt.prev) != n {
		vt.prev = make([]cell, n)
	}
	vt.prev = vt.prev[:n]
	if c := bufPerCell*n + bufExtra; vt.buf != nil && cap(vt.buf) > max(c, trimTo) {
		vt.buf = make([]byte, 0, c)
	}
}

// shown is what the area shows: the grid each frame's composition starts
// from a copy of. The caller only reads it.
func (vt *encoder) shown() []cell { return vt.prev }

// scrolls reports whether the terminal's scroll region spans rows
// [top, bot].
func (vt *encoder) scrolls(top, bot int) bool { return vt.top == top && vt.bot == bot }

// frame returns the bytes that take the terminal from what it shows to
// c.next, and makes that what it shows. They are valid until the next
// frame or release; empty when nothing changed.
func (vt *encoder) frame(c *change) []byte {
	vt.next, vt.mask, vt.stepped = c.next, c.mask, c.stepped
	vt.pfTop, vt.pfRows = c.pfTop, c.pfRows
	if vt.buf == nil {
		vt.takeBuf()
	}
	if need := bufPerCell*len(vt.prev) + bufExtra; c.full && cap(vt.buf) < need {
		vt.buf = make([]byte, 0, need) // grown once rather than by append
	}
	vt.out = append(vt.buf[:0], syncOn...)
	vt.encode(c.full, c.dx, c.dy)
	if vt.shared && len(vt.out) > len(syncOn) {
		vt.park()
	}
	vt.next, vt.mask = nil, nil
	vt.buf = vt.out
	n := len(vt.out) - len(syncOn)
	if n == 0 || n < syncMin {
		vt.trim(n)
		return vt.out[len(syncOn):]
	}
	vt.out = append(vt.out, syncOff...)
	vt.buf = vt.out
	vt.trim(n)
	return vt.out
}

// bufs holds output buffers (*[]byte): an encoder takes one for a frame
// and gives it back with release once its bytes are written, so sessions
// between frames hold none.
var bufs sync.Pool

// bufPoolMax is the largest buffer release gives back to bufs; a larger
// one (a big terminal's whole repaint) is left to the garbage collector.
const bufPoolMax = 16 << 10

// takeBuf gives vt an output buffer from bufs, or a new one of trimTo
// bytes.
func (vt *encoder) takeBuf() {
	p, _ := bufs.Get().(*[]byte)
	if p == nil {
		p = new([]byte)
		*p = make([]byte, 0, trimTo)
	}
	vt.bufp, vt.buf = p, *p
}

// release gives back the buffer the last frame's bytes are in: they must
// not be used after it. The next frame takes a buffer again. An encoder
// that is never released keeps its buffer (trimmed after a big frame).
func (vt *encoder) release() {
	p, b := vt.bufp, vt.buf
	vt.bufp, vt.buf, vt.out = nil, nil, nil
	if p == nil || cap(b) > bufPoolMax {
		return
	}
	*p = b[:0]
	bufs.Put(p)
}

// Output buffer trimming: after trimAfter frames in a row of at most a
// trimDiv-th of a buffer larger than trimMin bytes, the buffer is replaced
// by one of trimTo bytes, so an idle session does not keep a big first
// frame's buffer.
const (
	trimMin   = 4 << 10
	trimTo    = 2 << 10
	trimDiv   = 4
	trimAfter = 64
)

// trim counts a frame of n bytes and shrinks the buffer when it is due.
func (vt *encoder) trim(n int) {
	if cap(vt.buf) <= trimMin || n > cap(vt.buf)/trimDiv {
		vt.smallN = 0
		return
	}
	if vt.smallN++; vt.smallN >= trimAfter {
		vt.smallN = 0
		vt.buf = make([]byte, 0, trimTo)
	}
}

// allSpans is the mask of every span of a row of cols cells.
func allSpans(cols int) uint64 { return uint64(1)<<((cols+span-1)/span) - 1 }

// allMask is the mask of every span of a row.
func (vt *encoder) allMask() uint64 { return allSpans(vt.cols) }

// markAll makes the encoder diff every cell.
func (vt *encoder) markAll() {
	for y := range vt.mask {
		vt.mask[y] = vt.allMask()
	}
}
