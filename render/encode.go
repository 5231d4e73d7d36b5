package render

import (
	"bytes"
	"math"
	"math/bits"
	"strconv"
	"unsafe"
)

// This file is the encoder's work (the type is in vt.go): it turns vt.next
// into the bytes that change the terminal from vt.prev (what it shows) to
// vt.next, updating vt.prev.
//
// Erasing: EL, ECH and ED are only ever sent with the default background
// pen, so the cells they clear are plain default-background blanks on every
// terminal. Cells exposed by DCH, ICH and scrolling (LF/RI at a margin) are
// treated as unknown and always repainted.
//
// Coordinates are the drawn area's (see Renderer, Fit); only cursor
// addressing (CUP, CHA, DECSTBM) and CR, which lands on the terminal's
// first column, see the area's origin (ox, oy). When the area is narrower than the
// terminal, the cells right and left of it (the margins) must stay blank:
// ED and EL blank them too, which is harmless; DCH/ICH and scrolling move
// whole terminal lines, so shiftRow, mendRow and scroll repair what they
// would disturb there.

const keep = 255 // sgr: leave this half of the pen as it is

// sgrPlan reports the cost of setting the pen to (f, b) and whether the
// cheapest way starts with a reset.
func (vt *encoder) sgrPlan(f, b uint8) (cost int, reset bool) {
	nf, nb := f, b
	if f == keep {
		nf = vt.pfg
	}
	if b == keep {
		nb = vt.pbg
	}
	needF, needB := nf != vt.pfg, nb != vt.pbg
	if !needF && !needB {
		return 0, false
	}
	plain := 3
	if needF {
		plain += int(fgLen[nf])
	}
	if needB {
		plain += int(bgLen[nb])
	}
	if needF && needB {
		plain++
	}
	rs := 3
	if nf != def || nb != def {
		rs++ // the leading ';'
		if nf != def {
			rs += int(fgLen[nf])
		}
		if nb != def {
			rs += int(bgLen[nb])
		}
		if nf != def && nb != def {
			rs++
		}
	}
	if rs < plain {
		return rs, true
	}
	return plain, false
}

// appendCode appends an SGR parameter (two or three bytes) without a
// call to copy them.
func appendCode(o []byte, s string) []byte {
	if len(s) == 2 {
		return append(o, s[0], s[1])
	}
	return append(o, s...)
}

// pen sets the pen to (f, b) (keep: that half as it is) the cheapest way.
func (vt *encoder) pen(f, b uint8) {
	_, reset := vt.sgrPlan(f, b)
	vt.setPen(f, b, reset)
}

// setPen sets the pen to (f, b), starting with a reset when asked: reset
// must be what sgrPlan(f, b) reports.
func (vt *encoder) setPen(f, b uint8, reset bool) {
	nf, nb := f, b
	if f == keep {
		nf = vt.pfg
	}
	if b == keep {
		nb = vt.pbg
	}
	if nf == vt.pfg && nb == vt.pbg {
		return
	}
	o := append(vt.out, 0x1b, '[')
	if reset {
		if nf != def || nb != def {
			o = append(o, ';')
			if nf != def {
				o = appendCode(o, fgCode[nf])
				if nb != def {
					o = append(o, ';')
				}
			}
			if nb != def {
				o = appendCode(o, bgCode[nb])
			}
		}
	} else {
		if nf != vt.pfg {
			o = appendCode(o, fgCode[nf])
			if nb != vt.pbg {
				o = append(o, ';')
			}
		}
		if nb != vt.pbg {
			o = appendCode(o, bgCode[nb])
		}
	}
	vt.out = append(o, 'm')
	vt.pfg, vt.pbg = nf, nb
}

// glyph picks the cheapest way to draw c from the current pen: the pen it
// needs (keep: either) and the glyph, with the cost of both and whether the
// pen's cheapest change starts with a reset (sgrPlan).
func (vt *encoder) glyph(c cell) (f, b uint8, g string, cost int, reset bool) {
	switch {
	case c.ch() != 0:
		k, rs := vt.sgrPlan(c.fg(), c.bg())
		g := glyphText[c.ch()]
		return c.fg(), c.bg(), g, k + len(g), rs
	case c.fg() == c.bg():
		cs, rs := vt.sgrPlan(keep, c.bg())
		if c.fg() != def {
			if cf, rf := vt.sgrPlan(c.fg(), keep); cf+3 < cs+1 {
				return c.fg(), keep, full, cf + 3, rf
			}
		}
		return keep, c.bg(), " ", cs + 1, rs
	case c.fg() == def:
		k, rs := vt.sgrPlan(c.bg(), def)
		return c.bg(), def, lower, k + 3, rs
	case c.bg() == def:
		k, rs := vt.sgrPlan(c.fg(), def)
		return c.fg(), def, upper, k + 3, rs
	}
	cu, ru := vt.sgrPlan(c.fg(), c.bg())
	cl, rl := vt.sgrPlan(c.bg(), c.fg())
	if cu <= cl {
		return c.fg(), c.bg(), upper, cu + 3, ru
	}
	return c.bg(), c.fg(), lower, cl + 3, rl
}

// putCell draws c at the cursor with the cheapest glyph for the pen.
func (vt *encoder) putCell(c cell) {
	if c < 1<<pairBits {
		// A pixel cell (or a space): its glyph and pen from the table.
		k := int(c)*ncol*ncol + int(vt.pfg)*ncol + int(vt.pbg)
		e := pixPlan[k>>1] >> (k & 1 * 4)
		if e&planPen != 0 {
			vt.setPen(planPenOf(e, c, vt.pfg, vt.pbg))
		}
		switch e & planGlyph {
		case 0:
			vt.out = append(vt.out, ' ')
		case 1:
			vt.out = append(vt.out, upper[0], upper[1], upper[2])
		case 2:
			vt.out = append(vt.out, lower[0], lower[1], lower[2])
		default:
			vt.out = append(vt.out, full[0], full[1], full[2])
		}
	} else {
		g, ok := vt.asIs(c)
		if !ok {
			var f, b uint8
			var reset bool
			f, b, g, _, reset = vt.glyph(c)
			vt.setPen(f, b, reset)
		}
		switch len(g) { // a half or full block: no call to copy them
		case 3:
			vt.out = append(vt.out, g[0], g[1], g[2])
		case 1:
			vt.out = append(vt.out, g[0])
		default:
			vt.out = append(vt.out, g...)
		}
	}
	if vt.cx+vt.ox == vt.tcols-1 {
		vt.cx = -1 // pending wrap: only CR, CHA and CUP are safe now
	} else {
		// Past the area's last column this is the right margin's first
		// cell: never written, only moved away from.
		vt.cx++
	}
}

// pixPlan holds putCell's choice for each pixel cell (the 289 colour
// pairs of glyph 0) and pen (fg*17+bg), four bits an entry, two entries
// a byte (entry k in byte k/2, the low half first): the glyph
// (planGlyph: space, upper, lower or full block), whether the pen
// changes (planPen) and with a reset first (planReset); the new pen
// follows from the glyph (planPenOf). It is what asIs and glyph decide,
// worked out once (TestPixPlan): in a crowd half the cells drawn change
// the pen, and weighing pens for each is much of the encoder's work.
// 42 KB, read by every renderer; made by cell.go's init, after the
// tables it reads.
var pixPlan []byte

// pixPlan's fields.
const (
	planGlyph = 3
	planPen   = 1 << 2
	planReset = 1 << 3
)

// planPenOf is the pen a pixPlan entry e that changes the pen sets for
// cell c from pen (f, b), and whether a reset comes first: a space takes
// the background, a full block the foreground, a half block both.
func planPenOf(e byte, c cell, f, b uint8) (uint8, uint8, bool) {
	t, u := pairFg[c&pairMask], pairBg[c&pairMask]
	switch e & planGlyph {
	case 0:
		b = u
	case 3:
		f = t
	case 1:
		f, b = t, u
	default:
		f, b = u, t
	}
	return f, b, e&planReset != 0
}

func makePixPlan() []byte {
	t := make([]byte, (ncol*ncol*ncol*ncol+1)/2)
	vt := &encoder{}
	for c := range ncol * ncol {
		for p := range ncol * ncol {
			vt.pfg, vt.pbg = pairFg[p], pairBg[p]
			k := c*ncol*ncol + p
			t[k>>1] |= vt.planPix(cell(c)) << (k & 1 * 4)
		}
	}
	return t
}

// planPix is pixPlan's entry for pixel cell c and vt's pen.
func (vt *encoder) planPix(c cell) byte {
	if g, ok := vt.asIs(c); ok {
		return glyphKind(g)
	}
	f, b, g, _, reset := vt.glyph(c)
	e := glyphKind(g)
	if f == keep {
		f = vt.pfg
	}
	if b == keep {
		b = vt.pbg
	}
	if f == vt.pfg && b == vt.pbg {
		return e
	}
	e |= planPen
	if reset {
		e |= planReset
	}
	if pf, pb, _ := planPenOf(e, c, vt.pfg, vt.pbg); pf != f || pb != b {
		panic("render: pixPlan's pen does not follow from its glyph")
	}
	return e
}

// glyphKind is pixPlan's code for a pixel cell's glyph.
func glyphKind(g string) byte {
	switch g {
	case " ":
		return 0
	case upper:
		return 1
	case lower:
		return 2
	case full:
		return 3
	}
	panic("render: pixel glyph " + g)
}

// asIs returns the glyph that draws c with the pen as it is, if one does:
// nothing is cheaper then, and glyph would choose the same (most cells of
// a frame take this way, without weighing pens).
func (vt *encoder) asIs(c cell) (string, bool) {
	f, b := c.fg(), c.bg()
	switch {
	case c.ch() != 0:
		if f == vt.pfg && b == vt.pbg {
			return glyphText[c.ch()], true
		}
	case f == b:
		if b == vt.pbg {
			return " ", true
		}
		if f != def && f == vt.pfg {
			return full, true // any change of background costs more than its two bytes
		}
	case f == def:
		if b == vt.pfg && vt.pbg == def {
			return lower, true
		}
	case b == def:
		if f == vt.pfg && vt.pbg == def {
			return upper, true
		}
	case f == vt.pfg && b == vt.pbg:
		return upper, true
	case b == vt.pfg && f == vt.pbg:
		return lower, true
	}
	return "", false
}

// reprintCost is what drawing the known cell c with the current pen, and
// no SGR, costs; -1 when the pen cannot draw it (asIs finds no glyph).
func (vt *encoder) reprintCost(c cell) int {
	if c.ch() == unknownCh {
		return -1
	}
	if g, ok := vt.asIs(c); ok {
		return len(g)
	}
	return -1
}

func digits(n int) int {
	switch {
	case n < 10:
		return 1
	case n < 100:
		return 2
	case n < 1000:
		return 3
	}
	d := 4
	for n >= 10000 {
		n /= 10
		d++
	}
	return d
}

// csiN is the cost of ESC [ n F with n omitted when 1.
func csiN(n int) int {
	if n == 1 {
		return 3
	}
	return 3 + digits(n)
}

func chaCost(x int) int {
	if x == 0 {
		return 3
	}
	return 3 + digits(x+1)
}

func cupCost(x, y int) int {
	c := 3
	if y > 0 || x > 0 {
		c += digits(y + 1)
	}
	if x > 0 {
		c += 1 + digits(x+1)
	}
	return c
}

// Horizontal motions.
const (
	hNone = iota
	hCUF
	hCUB
	hBS
	hCHA
	hReprint
)

// hplan is the cheapest same-row motion from 'from' to 'to' (from known;
// -vt.ox is the terminal's first column, where CR puts the cursor).
func (vt *encoder) hplan(from, to int) (cost, kind int) {
	switch {
	case to == from:
		return 0, hNone
	case to > from:
		cost, kind = csiN(to-from), hCUF
	default:
		n := from - to
		cost, kind = csiN(n), hCUB
		if n < cost {
			cost, kind = n, hBS
		}
	}
	if c := chaCost(to + vt.ox); c < cost {
		cost, kind = c, hCHA
	}
	return cost, kind
}

func (vt *encoder) emitH(kind, from, to int) {
	o := vt.out
	switch kind {
	case hCUF:
		o = appendCSI(o, to-from, 'C')
	case hCUB:
		o = appendCSI(o, from-to, 'D')
	case hBS:
		for i := to; i < from; i++ {
			o = append(o, '\b')
		}
	case hCHA:
		o = appendCSI(o, to+vt.ox+1, 'G') // column 1 is CHA's default too
	case hReprint:
		row := vt.prev[vt.cy*vt.cols:]
		vt.out = o
		for x := from; x < to; x++ {
			vt.putCell(row[x])
		}
		return
	}
	vt.out = o
}

// vok reports whether LF/CUD (down) or RI/CUU (up) from row a to row b stay
// clear of the scroll region's margins.
func (vt *encoder) vok(a, b int) bool {
	if b > a {
		return !(a <= vt.bot && b > vt.bot)
	}
	return !(a >= vt.top && b < vt.top)
}

// Vertical motions.
const (
	vLF = iota
	vCUD
	vRI
	vCUU
)

func vplan(from, to int) (cost, kind int) {
	if to > from {
		n := to - from
		if c := csiN(n); c < n {
			return c, vCUD
		}
		return n, vLF
	}
	n := from - to
	if c := csiN(n); c < 2*n {
		return c, vCUU
	}
	return 2 * n, vRI
}

func (vt *encoder) emitV(kind, from, to int) {
	o := vt.out
	switch kind {
	case vLF:
		for i := from; i < to; i++ {
			o = append(o, '\n')
		}
	case vRI:
		for i := to; i < from; i++ {
			o = append(o, 0x1b, 'M')
		}
	case vCUD, vCUU:
		n := to - from
		f := byte('B')
		if n < 0 {
			n, f = -n, 'A'
		}
		o = appendCSI(o, n, f)
	}
	vt.out = o
}

// Cursor motion plans.
const (
	pCUP  = iota
	pH    // same row, horizontal only
	pCRH  // CR then horizontal
	pVH   // vertical then horizontal
	pCRVH // CR, vertical, horizontal
)

// motion is a planned cursor move and its cost in bytes.
type motion struct {
	cost       int
	plan, h, v uint8
}

func (m *motion) try(c, p, h, v int) {
	if c < m.cost {
		*m = motion{c, uint8(p), uint8(h), uint8(v)}
	}
}

// reprintMax is the most cells right of the cursor a move on its row
// weighs printing again (rightMove) against CUF: past it printing costs
// a byte a cell at least, more than CUF's 4 to 6.
const reprintMax = 8

// plan finds the cheapest way it knows to move the cursor to (x, y).
func (vt *encoder) plan(x, y int) motion {
	if vt.cx == x && vt.cy == y {
		return motion{plan: pH, h: hNone}
	}
	if n := x - vt.cx; vt.cy == y && vt.cx >= 0 && n > 0 && n <= reprintMax {
		// A few cells right on the same row, the commonest move in a
		// frame: CUF (at most 4 bytes) beats CHA (at least 4, and CUF
		// wins a tie) and CUP (at least 6: the column is past the first),
		// so only re-printing the cells between can beat it.
		c, reprint := vt.rightMove(y, vt.cx, x)
		if reprint {
			return motion{c, pH, hReprint, 0}
		}
		return motion{c, pH, hCUF, 0}
	}
	if vt.cy == y && vt.cx >= 0 {
		// Elsewhere on the same row: a motion on the row always beats
		// CUP (CHA is CUP without the row), and CR wins only to the
		// first column, where it is all of it (planAny weighs the same).
		c, k := vt.hplan(vt.cx, x)
		if x+vt.ox == 0 && 1 < c {
			return motion{1, pCRH, hNone, 0}
		}
		return motion{c, pH, uint8(k), 0}
	}
	if y == vt.cy+1 && vt.cy >= 0 && vt.cx >= 0 && vt.vok(vt.cy, y) {
		// The next row, the commonest move after those: LF and a motion
		// on the row always beat CUP (CHA is cheaper than CUP's column
		// and row), and CR LF wins only to the first column.
		c, k := vt.hplan(vt.cx, x)
		if x+vt.ox == 0 && 1+c > 2 {
			return motion{2, pCRVH, hNone, vLF}
		}
		return motion{1 + c, pVH, uint8(k), vLF}
	}
	return vt.planAny(x, y)
}

// rightMove is the cheapest motion a few cells right on row y, from
// column from to column to (plan's and moveTo's shortcut): CUF, or the
// cells between printed again with the pen as it is, when every one can
// be and that costs less. It returns the cost and whether it reprints.
func (vt *encoder) rightMove(y, from, to int) (cost int, reprint bool) {
	cuf := csiN(to - from)
	row := vt.prev[y*vt.cols:]
	c := 0
	for i := from; i < to && c < cuf; i++ {
		rc := vt.reprintCost(row[i])
		if rc < 0 {
			return cuf, false
		}
		c += rc
	}
	if c < cuf {
		return c, true
	}
	return cuf, false
}

// planAny is plan without its shortcuts: every motion it knows but
// re-printing, weighed (TestPlanNextRow checks the next-row shortcut
// against it).
func (vt *encoder) planAny(x, y int) motion {
	m := motion{cost: cupCost(x+vt.ox, y+vt.oy), plan: pCUP}
	if vt.cy == y {
		if vt.cx >= 0 {
			// (Re-printing, for at most reprintMax cells right, is weighed above.)
			c, k := vt.hplan(vt.cx, x)
			m.try(c, pH, k, 0)
		} else {
			m.try(chaCost(x+vt.ox), pH, hCHA, 0)
		}
		// CR and a motion from the first column beats the motions above
		// (CHA among them) only to the first column itself, where CR is
		// all of it.
		if x+vt.ox == 0 {
			m.try(1, pCRH, hNone, 0)
		}
	} else if vt.cy >= 0 && vt.vok(vt.cy, y) {
		vc, v := vplan(vt.cy, y)
		if vt.cx >= 0 {
			c, k := vt.hplan(vt.cx, x)
			m.try(vc+c, pVH, k, v)
		}
		if vt.cx < 0 || x+vt.ox == 0 { // likewise
			c, k := vt.hplan(-vt.ox, x)
			m.try(1+vc+c, pCRVH, k, v)
		}
	}
	return m
}

// moveTo moves the cursor to (x, y) the cheapest way it knows: what
// move(plan(x, y), x, y) does, with plan's shortcuts (the commonest
// motions of a frame) carried out where they are found instead of
// returned as a motion for move to take apart (TestMoveToPlan).
func (vt *encoder) moveTo(x, y int) {
	cx, cy := vt.cx, vt.cy
	if cy != y || cx < 0 {
		if y != cy+1 || cy < 0 || cx < 0 || !vt.vok(cy, y) {
			vt.move(vt.planAny(x, y), x, y)
			return
		}
		// The next row: LF and a motion on the row, or CR LF to the
		// first column (plan).
		c, k := vt.hplan(cx, x)
		if x+vt.ox == 0 && 1+c > 2 {
			vt.out = append(vt.out, '\r', '\n')
		} else {
			vt.out = append(vt.out, '\n')
			vt.cy = y
			vt.emitH(k, cx, x)
		}
		vt.cx, vt.cy = x, y
		return
	}
	switch n := x - cx; {
	case n == 0:
		return
	case n > 0 && n <= reprintMax:
		// A few cells right: CUF, or the cells between printed again
		// when that is cheaper (plan).
		if _, reprint := vt.rightMove(y, cx, x); reprint {
			vt.emitH(hReprint, cx, x)
		} else {
			vt.out = appendCSI(vt.out, n, 'C')
		}
	default:
		// Elsewhere on the row: a motion on it, or CR to the first
		// column (plan).
		c, k := vt.hplan(cx, x)
		if x+vt.ox == 0 && 1 < c {
			vt.out = append(vt.out, '\r')
		} else {
			vt.emitH(k, cx, x)
		}
	}
	vt.cx = x
}

// move carries out m, a plan to reach (x, y).
func (vt *encoder) move(m motion, x, y int) {
	hk, vk := int(m.h), int(m.v)
	switch m.plan {
	case pCUP:
		tx, ty := x+vt.ox, y+vt.oy
		o := append(vt.out, 0x1b, '[')
		if ty > 0 || tx > 0 {
			o = appendNum(o, ty+1)
		}
		if tx > 0 {
			o = append(o, ';')
			o = appendNum(o, tx+1)
		}
		vt.out = append(o, 'H')
	case pH:
		vt.emitH(hk, vt.cx, x)
	case pCRH:
		vt.out = append(vt.out, '\r')
		vt.emitH(hk, -vt.ox, x)
	case pVH:
		vt.emitV(vk, vt.cy, y)
		vt.cy = y
		vt.emitH(hk, vt.cx, x)
	case pCRVH:
		vt.out = append(vt.out, '\r')
		vt.emitV(vk, vt.cy, y)
		vt.cy = y
		vt.emitH(hk, -vt.ox, x)
	}
	vt.cx, vt.cy = x, y
}

// appendNum appends n in decimal: strconv.AppendInt, without a call for
// the numbers frames are made of (below 1000).
func appendNum(o []byte, n int) []byte {
	switch {
	case n < 0 || n >= 1000:
		return strconv.AppendInt(o, int64(n), 10)
	case n < 10:
		return append(o, byte('0'+n))
	case n < 100:
		return append(o, byte('0'+n/10), byte('0'+n%10))
	}
	return append(o, byte('0'+n/100), byte('0'+n/10%10), byte('0'+n%10))
}

// csi appends ESC [ n f, with n omitted when 1.
func (vt *encoder) csi(n int, f byte) { vt.out = appendCSI(vt.out, n, f) }

// appendCSI appends ESC [ n f, with n omitted when 1 (n >= 1), in one
// append for the counts of cursor motions (below 100).
func appendCSI(o []byte, n int, f byte) []byte {
	switch {
	case n == 1:
		return append(o, 0x1b, '[', f)
	case n < 10:
		return append(o, 0x1b, '[', byte('0'+n), f)
	case n < 100:
		return append(o, 0x1b, '[', byte('0'+n/10), byte('0'+n%10), f)
	}
	o = append(o, 0x1b, '[')
	o = appendNum(o, n)
	return append(o, f)
}

// raw views cells as bytes, for fast comparison of spans.
func raw(c []cell) []byte {
	if len(c) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&c[0])), len(c)*int(unsafe.Sizeof(c[0])))
}

// quad returns cells i to i+3 of c as one word, for comparing them at
// once.
func quad(c []cell, i int) uint64 {
	_ = c[i+3]
	return *(*uint64)(unsafe.Pointer(&c[i]))
}

// firstCell is the index in a quad of the first cell where two quads
// differ, given their XOR d (not 0).
func firstCell(d uint64) int {
	if bigEndian {
		return bits.LeadingZeros64(d) / 16
	}
	return bits.TrailingZeros64(d) / 16
}

// laneOf is the bits of cell i (0..3) in a quad.
func laneOf(i int) uint64 {
	if bigEndian {
		return 0xffff << (48 - 16*uint(i&3))
	}
	return 0xffff << (16 * uint(i&3))
}

// span is how many cells diffRow compares at once before looking closer:
// two words.
const span = 8

// sameSpan reports whether cells [x0, x1) of prev and next, a span or a
// row's last part of one, are equal.
func sameSpan(prev, next []cell, x0, x1 int) bool {
	if x1-x0 == span {
		return quad(prev, x0) == quad(next, x0) && quad(prev, x0+4) == quad(next, x0+4)
	}
	return bytes.Equal(raw(prev[x0:x1]), raw(next[x0:x1]))
}

// diffRow sends what changed in row y, in the spans its mask marks, and
// returns how many cells it drew (an erased run counts as one).
func (vt *encoder) diffRow(y int) (n int) {
	m := vt.mask[y]
	if m == 0 {
		return 0
	}
	w := vt.cols
	prev, next := vt.prev[y*w:(y+1)*w], vt.next[y*w:(y+1)*w]
	if m == vt.allMask() && bytes.Equal(raw(prev), raw(next)) {
		return 0
	}
	for ; m != 0; m &= m - 1 {
		x0 := bits.TrailingZeros64(m) * span
		if x0+span > w {
			// The row's last span, cut short: cell by cell.
			for x := x0; x < w; x++ {
				if prev[x] != next[x] {
					n++
					vt.drawAt(prev, next, x, y)
				}
			}
			continue
		}
		// The span's changed cells, a word (four cells) at a time, left
		// to right; an erase may have made later ones equal already.
		for q := x0; q < x0+span; q += 4 {
			for d := quad(prev, q) ^ quad(next, q); d != 0; {
				i := firstCell(d)
				d &^= laneOf(i)
				x := q + i
				if prev[x] == next[x] {
					continue
				}
				n++
				// An erase needs a run of four blanks at least (erase):
				// most changed blanks are a tail's last cell, in a
				// shorter one.
				if next[x] == blank && (x+4 > w || quad(next, x) == 0) && vt.erase(prev, next, x, y) {
					continue
				}
				if vt.cx != x || vt.cy != y {
					vt.moveTo(x, y)
				}
				vt.putCell(next[x])
				prev[x] = next[x]
			}
		}
	}
	return n
}

// drawAt makes cell x of row y, which differs, what next holds: erased
// with the blank run it starts, or drawn. (diffRow's word loop, the
// encoder's hottest, does the same inline, without the call.)
func (vt *encoder) drawAt(prev, next []cell, x, y int) {
	if next[x] == blank && vt.erase(prev, next, x, y) {
		return
	}
	if vt.cx != x || vt.cy != y {
		vt.moveTo(x, y)
	}
	vt.putCell(next[x])
	prev[x] = next[x]
}

// eraseMin is the fewest changed cells an erase is weighed for: below it
// painting them never costs more than EL or ECH.
const eraseMin = 4

// erase clears a run of cells that should become blank, starting at x, with
// EL or ECH when that is cheaper than painting them; it reports whether it
// did.
func (vt *encoder) erase(prev, next []cell, x, y int) bool {
	w := len(next)
	// Past the row's last marked span prev and next are the same, so no
	// cell changes there: once the run passes it with fewer than eraseMin
	// changed cells, it never gets them.
	marked := min(w, (64-bits.LeadingZeros64(vt.mask[y]))*span)
	e, changed, runs := x, 0, 0
	for e < w && next[e] == blank {
		if e >= marked && changed < eraseMin {
			return false
		}
		// Four cells blank in next: count what they change a word at a
		// time (most of a row is blank in a sparse world; in a crowd the
		// runs are tens of cells, and few are worth erasing).
		if !bigEndian && e+4 <= w && quad(next, e) == 0 {
			if q := quad(prev, e); q != 0 {
				nz := laneNonZero(q)
				var before uint64 // prev[e-1] is not blank: no run starts at e
				if e > x && prev[e-1] != blank {
					before = 1 << 15
				}
				changed += bits.OnesCount64(nz)
				runs += bits.OnesCount64(nz &^ (nz<<16 | before))
			}
			e += 4
			continue
		}
		if prev[e] != blank {
			if e == x || prev[e-1] == blank {
				runs++
			}
			changed++
		}
		e++
	}
	if changed < eraseMin {
		return false
	}
	sc, _ := vt.sgrPlan(keep, def)
	paint := changed + 4*(runs-1)
	cost := sc + 3
	if e < w {
		cost = sc + 3 + digits(e-x)
	}
	if cost >= paint {
		return false
	}
	vt.moveTo(x, y)
	vt.pen(keep, def)
	if e == w {
		vt.out = append(vt.out, 0x1b, '[', 'K')
	} else {
		o := append(vt.out, 0x1b, '[')
		o = appendNum(o, e-x)
		vt.out = append(o, 'X')
	}
	for i := x; i < e; i++ {
		prev[i] = blank
	}
	return true
}

// laneNonZero has bit 15 of each 16-bit lane of q set when that lane is
// not zero, and no other bit.
func laneNonZero(q uint64) uint64 {
	const low, high = 0x7fff7fff7fff7fff, 0x8000800080008000
	return ((q & low) + low | q) & high
}

// est estimates the bytes needed to turn row prev, shifted left by off
// (cells from outside, or all of them when prev is nil, are unknown), into
// row next: a motion per run of changed cells, three bytes per changed cell
// with a glyph and at most an erase's worth per run of blanks.
func est(prev []cell, off int, next []cell) int { return estUpTo(prev, off, next, math.MaxInt) }

// estUpTo is est, except that it stops counting once the estimate reaches
// limit (and returns at least limit then).
func estUpTo(prev []cell, off int, next []cell, limit int) int {
	w := len(next)
	c, run, blanks := 0, false, 0
	for x := 0; x < w && c < limit; x++ {
		i := x + off
		if !run && blanks == 0 && prev != nil && i >= 0 && i+4 <= w && x+4 <= w && quad(prev, i) == quad(next, x) {
			// Four equal cells after an equal one (or at the start) add
			// nothing: skip them at once.
			x += 3
			continue
		}
		if prev != nil && i >= 0 && i < w && prev[i] == next[x] {
			c += min(blanks, 5)
			run, blanks = false, 0
			continue
		}
		if !run {
			c += 4
			run = true
		}
		if next[x] == blank {
			blanks++
		} else {
			c += 3 + min(blanks, 5)
			blanks = 0
		}
	}
	return c + min(blanks, 3)
}

// shiftEst is what est charges a row's shift: the cursor's move to the
// row and DCH or ICH, about.
const shiftEst = 6

// rowPlan returns the cheaper of diffing row y as it is or after shifting it
// left by dx (right when negative): the estimated cost and whether to shift.
func (vt *encoder) rowPlan(prow, nrow []cell, dx int) (int, bool) {
	c := est(prow, 0, nrow)
	if dx == 0 || dx >= vt.cols || -dx >= vt.cols || c == 0 {
		return c, false
	}
	// With a right margin a shift takes a second edit (mendRow), but
	// charging it here sends more bytes, not fewer (est is rough): the
	// rule is the same with a margin and without.
	if s := est(prow, dx, nrow) + shiftEst; s < c {
		return s, true
	}
	return c, false
}

// shiftPays is rowPlan's choice alone: whether shifting row prow by dx
// before diffing it pays. It estimates the shifted row first and the row
// as it is only up to that: unshifted, most rows of a camera step change
// all along.
func (vt *encoder) shiftPays(prow, nrow []cell, dx int) bool {
	if dx == 0 || dx >= vt.cols || -dx >= vt.cols {
		return false
	}
	s := est(prow, dx, nrow) + shiftEst
	return s < estUpTo(prow, 0, nrow, s+1) // an unchanged row is 0: no shift
}

// shiftRow moves row y's content left by dx (right when negative); cells
// shifted in become unknown. DCH and ICH move the rest of the terminal
// line, right margin included: without a margin that is one DCH or ICH at
// the area's first column; with one, it is the first of two edits and
// mendRow the second, which restores the margin (see mendRow). vt.prev
// holds the row as it will be after both.
func (vt *encoder) shiftRow(y, dx int) {
	w := vt.cols
	row := vt.prev[y*w : (y+1)*w]
	switch {
	case vt.cols < vt.tcols && dx > 0:
		vt.moveTo(0, y)
		vt.csi(dx, 'P')
	case vt.cols < vt.tcols:
		vt.moveTo(w+dx, y)
		vt.csi(-dx, 'P')
	case dx > 0:
		vt.moveTo(0, y)
		vt.csi(dx, 'P')
	default:
		vt.moveTo(0, y)
		vt.csi(-dx, '@')
	}
	if dx > 0 {
		copy(row, row[dx:])
		for i := w - dx; i < w; i++ {
			row[i] = unknown
		}
	} else {
		copy(row[-dx:], row)
		for i := 0; i < -dx; i++ {
			row[i] = unknown
		}
	}
}

// mendRow is the second edit of shiftRow(y, dx) on an area with a right
// margin. On the terminal's line, with the area at columns [a, a+w):
//
//	left by n:  DCH n at a       pulls the margin n cells left, erased
//	                             cells at the line's end;
//	            ICH n at a+w-n   pushes the margin back and the erased
//	                             cells off the line.
//	right by n: DCH n at a+w-n   drops the area's last n cells, pulling
//	                             the margin in and erasing the line's end;
//	            ICH n at a       pushes the area right and the margin back.
//
// Either way the margin ends where it was, whatever colour the erased or
// inserted cells take (BCE), and the n cells inserted in the area are
// unknown. vt.prev already holds the row as it is after both edits; in
// between, a cursor move must not re-print cells from it. It cannot: for a
// left shift the row then differs from vt.prev only in its last n cells,
// unknown there, which are never re-printed; for a right shift mendRow
// moves to the area's first column, and re-printing only moves rightward.
func (vt *encoder) mendRow(y, dx int) {
	if dx > 0 {
		vt.moveTo(vt.cols-dx, y)
		vt.csi(dx, '@')
	} else {
		vt.moveTo(0, y)
		vt.csi(-dx, '@')
	}
}

// scroll moves the playfield rows up by dy (down when negative) inside the
// scroll region, with LF at its bottom margin (RI at its top). Every
// terminal has those; SU/SD would save a few bytes on a rare event. Rows
// scrolled in become unknown.
//
// The region spans whole terminal lines, so with margins left and right of
// the area each line scrolled in is erased whole (EL 2, default pen) as it
// comes in: whatever a terminal puts there (blanks in the pen's background
// with BCE, or nothing defined) becomes default blanks, margins included,
// and those area rows are known blank.
func (vt *encoder) scroll(dy int) {
	w, t, b := vt.cols, vt.top, vt.bot
	margin := vt.cols < vt.tcols
	in := unknown
	if margin {
		in = blank
	}
	if dy > 0 {
		vt.moveTo(0, b)
		if margin {
			vt.pen(keep, def)
		}
		for i := 0; i < dy; i++ {
			vt.out = append(vt.out, '\n')
			if margin {
				vt.out = append(vt.out, "\x1b[2K"...)
			}
		}
		copy(vt.prev[t*w:(b+1)*w], vt.prev[(t+dy)*w:(b+1)*w])
		for i := (b + 1 - dy) * w; i < (b+1)*w; i++ {
			vt.prev[i] = in
		}
	} else {
		vt.moveTo(0, t)
		if margin {
			vt.pen(keep, def)
		}
		for i := 0; i < -dy; i++ {
			vt.out = append(vt.out, 0x1b, 'M')
			if margin {
				vt.out = append(vt.out, "\x1b[2K"...)
			}
		}
		copy(vt.prev[(t-dy)*w:(b+1)*w], vt.prev[t*w:(b+1+dy)*w])
		for i := t * w; i < (t-dy)*w; i++ {
			vt.prev[i] = in
		}
	}
}

// scrollPays reports whether scrolling the playfield's rows by dy (inside
// the scroll region, dy less than its height) before diffing them is
// estimated to cost less than diffing them as they are, both with the
// rows' shifts by dx.
func (vt *encoder) scrollPays(dx, dy int) bool {
	w, t, b := vt.cols, vt.top, vt.bot
	moved := 8 + 2*max(dy, -dy)
	if vt.cols < vt.tcols {
		moved += 3 + 4*max(dy, -dy) // the default pen, EL 2 per line (scroll)
	}
	for y := t; y <= b; y++ {
		nrow := vt.next[y*w : (y+1)*w]
		if sy := y + dy; sy >= t && sy <= b {
			c, _ := vt.rowPlan(vt.prev[sy*w:(sy+1)*w], nrow, dx)
			moved += c
		} else {
			moved += est(nil, 0, nrow)
		}
	}
	// Staying costs more once it passes moving (the usual case: the rows
	// as they are differ all along): no need to add up the rest.
	stay := 0
	for y := t; y <= b && stay <= moved; y++ {
		c, _ := vt.rowPlan(vt.prev[y*w:(y+1)*w], vt.next[y*w:(y+1)*w], dx)
		stay += c
	}
	return moved < stay
}

// moveCamera applies a camera step of dx columns and dy rows to what the
// terminal shows, when that is cheaper than repainting.
func (vt *encoder) moveCamera(dx, dy int) {
	w, t, b := vt.cols, vt.top, vt.bot
	h := b - t + 1
	if dy >= h || -dy >= h {
		dy = 0
	}
	// A step of at most half the playfield (canStep) scrolls, and shifts
	// every row that is not blank, without weighing it: a step composed
	// from the last frame (stepShift) has moved vt.next's rows so, and a
	// whole frame sends the same bytes as an incremental one.
	if dy != 0 && (vt.stepped || vt.scrollPays(dx, dy)) {
		vt.scroll(dy)
	}
	if dx == 0 {
		return
	}
	pays := func(y int) bool {
		prow := vt.prev[y*w : (y+1)*w]
		if vt.stepped {
			return !blankRow(prow)
		}
		return vt.shiftPays(prow, vt.next[y*w:(y+1)*w], dx)
	}
	if vt.cols == vt.tcols {
		for y := t; y <= b; y++ {
			if pays(y) {
				vt.shiftRow(y, dx)
			}
		}
		return
	}
	// With a right margin each shifted row takes two edits (mendRow): all
	// first edits top to bottom, then all second ones, so that the cursor
	// goes down a column for each pass (LF) rather than across each row.
	var shifted [(MaxRows + 63) / 64]uint64
	for y := t; y <= b; y++ {
		if pays(y) {
			shifted[y/64] |= 1 << (y % 64)
			vt.shiftRow(y, dx)
		}
	}
	for y := t; y <= b; y++ {
		if shifted[y/64]&(1<<(y%64)) != 0 {
			vt.mendRow(y, dx)
		}
	}
}

// blankRow reports whether every cell of row is blank.
func blankRow(row []cell) bool {
	i := 0
	for ; i+4 <= len(row); i += 4 {
		if quad(row, i) != 0 {
			return false
		}
	}
	for ; i < len(row); i++ {
		if row[i] != blank {
			return false
		}
	}
	return true
}

// encode appends to vt.out the bytes that turn vt.prev into vt.next.
func (vt *encoder) encode(full bool, dx, dy int) {
	if full {
		if !vt.entered {
			vt.out = append(vt.out, "\x1b[?1049h"...)
			vt.entered = true
		}
		vt.out = append(vt.out, "\x1b[?25l\x1b[m"...)
		if vt.pfRows > 0 {
			vt.top, vt.bot = vt.pfTop, vt.pfTop+vt.pfRows-1
			o := append(vt.out, 0x1b, '[')
			o = appendNum(o, vt.oy+vt.top+1)
			o = append(o, ';')
			o = appendNum(o, vt.oy+vt.bot+1)
			vt.out = append(o, 'r')
		} else {
			// The region is the whole terminal; vok's idea of it (the
			// area) is stricter, which is safe.
			vt.top, vt.bot = 0, vt.rows-1
			vt.out = append(vt.out, "\x1b[r"...)
		}
		// ED 2 with the default pen: the whole terminal, margins
		// included, becomes default blanks.
		vt.out = append(vt.out, "\x1b[2J"...)
		// DECSTBM homed the cursor to the terminal's first cell. Left of
		// or above the area, cx and cy are negative: plan then only uses
		// CUP, CHA and CR.
		vt.cx, vt.cy, vt.pfg, vt.pbg = -vt.ox, -vt.oy, def, def
		for i := range vt.prev {
			vt.prev[i] = blank
		}
		vt.markAll()
	} else if vt.pfRows > 0 && (dx != 0 || dy != 0) {
		vt.moveCamera(dx, dy)
	}
	if !full && vt.sparse && vt.greedy() {
		return
	}
	n := 0
	for y, m := range vt.mask[:vt.rows] {
		if m != 0 { // most rows of a crowd frame: no call
			n += vt.diffRow(y)
		}
	}
	vt.sparse = n <= int(vt.greedyMax)
}

// spot is a cell's place as greedy keeps it, y<<16 | x: spots compare
// as their cells come row by row (MaxCols and MaxRows fit 16 bits).
type spot int32

func mkSpot(x, y int) spot { return spot(y<<16 | x) }
func (p spot) x() int      { return int(p & 0xffff) }
func (p spot) y() int      { return int(p >> 16) }

// greedy sends a small frame's changed cells cheapest-next-first (cursor
// motion plus pen change plus glyph); it reports false, having sent
// nothing, when more than vt.greedyMax cells changed. The spans it finds
// unchanged are taken out of vt.mask, so diffRow does not compare them again.
func (vt *encoder) greedy() bool {
	todo := vt.todo[:0]
	w := vt.cols
	for y := 0; y < vt.rows; y++ {
		m := vt.mask[y]
		if m == 0 {
			continue
		}
		prev, next := vt.prev[y*w:(y+1)*w], vt.next[y*w:(y+1)*w]
		if m == vt.allMask() && bytes.Equal(raw(prev), raw(next)) {
			vt.mask[y] = 0 // diffRow need not look again
			continue
		}
		for ; m != 0; m &= m - 1 {
			x0 := bits.TrailingZeros64(m) * span
			x1 := min(x0+span, w)
			if sameSpan(prev, next, x0, x1) {
				vt.mask[y] &^= m & -m
				continue
			}
			for x := x0; x < x1; x++ {
				if prev[x] == next[x] {
					continue
				}
				if len(todo) == int(vt.greedyMax) {
					vt.todo = todo
					return false
				}
				todo = append(todo, mkSpot(x, y))
			}
		}
	}
	gc := vt.gcost[:0]
	for _, p := range todo {
		_, _, _, g, _ := vt.glyph(vt.next[p.y()*w+p.x()])
		gc = append(gc, int32(g))
	}
	vt.todo, vt.gcost = todo, gc
	for len(todo) > 0 {
		// Start with the cells just after the cursor (the likely best) and
		// skip those whose glyph alone costs at least the best so far.
		cur := mkSpot(max(vt.cx, 0), vt.cy)
		start := 0
		for start < len(todo) && todo[start] < cur {
			start++
		}
		bi, bc := 0, math.MaxInt
		var bm motion
		for k := range todo {
			i := start + k
			if i >= len(todo) {
				i -= len(todo)
			}
			p := todo[i]
			lb := int(gc[i])
			if p != cur || vt.cx < 0 {
				lb++
			}
			if lb >= bc {
				continue
			}
			m := vt.plan(p.x(), p.y())
			if c := m.cost + int(gc[i]); c < bc {
				bi, bc, bm = i, c, m
			}
		}
		x, y := todo[bi].x(), todo[bi].y()
		pf, pb := vt.pfg, vt.pbg
		vt.move(bm, x, y)
		vt.putCell(vt.next[y*w+x])
		vt.prev[y*w+x] = vt.next[y*w+x]
		todo = append(todo[:bi], todo[bi+1:]...)
		gc = append(gc[:bi], gc[bi+1:]...)
		if vt.pfg != pf || vt.pbg != pb {
			for i, p := range todo {
				_, _, _, g, _ := vt.glyph(vt.next[p.y()*w+p.x()])
				gc[i] = int32(g)
			}
		}
	}
	return true
}
