package game

import "math/bits"

// This file keeps View.Dirty, per-tile ticks of the last visible change,
// View.Fresh, the tiles the last step changed, and View.FreshX, the cells
// it changed, maintained in O(changes) per publish, and O(tile rows) for
// the index's rows without a change.

// TilesW is the number of tile columns of a world w pixels wide.
func TilesW(w int) int { return (w + TileW - 1) / TileW }

// TilesH is the number of tile rows of a world h pixels high.
func TilesH(h int) int { return (h + TileH - 1) / TileH }

// FreshWords is the number of View.Fresh words a tile row of a world w
// pixels wide takes.
func FreshWords(w int) int { return (TilesW(w) + 63) / 64 }

// FreshBlock is the width in columns of View.FreshBlk's blocks: a multiple
// of the cell map's 64-column words.
const FreshBlock = 256

// FreshBlocks is the number of View.FreshBlk entries a tile row of a world
// w pixels wide takes.
func FreshBlocks(w int) int { return (w + FreshBlock - 1) / FreshBlock }

// markAll marks every tile of v changed at tick t.
func (v *View) markAll(t uint64) {
	for i := range v.Dirty {
		v.Dirty[i] = t
	}
	tw, fw := TilesW(v.W), FreshWords(v.W)
	for r := range TilesH(v.H) {
		row := v.Fresh[r*fw : (r+1)*fw]
		for k := range row {
			row[k] = ^uint64(0)
		}
		if tw%64 != 0 {
			row[fw-1] = 1<<(tw%64) - 1
		}
	}
}

// apply replays the writes of log to pixels lo..hi-1 into v's pixels and
// marks the tiles they touch changed at tick t, in one pass.
func (v *View) apply(log []Write, t uint64, lo, hi int32) {
	w, tw, pix, d := v.W, TilesW(v.W), v.Pix, v.Dirty
	inv := recip(w)
	for _, c := range log {
		if uint32(c.i-lo) >= uint32(hi-lo) {
			continue
		}
		pix[c.i] = c.p & pixBits                  // without a move's Dir
		y := int(uint64(c.i) * inv >> recipShift) // y = i / w, see recip
		x := int(c.i) - y*w
		d[(y/TileH)*tw+x/TileW] = t
	}
}

// applyPix replays the writes of log to pixels lo..hi-1 into v's pixels
// (apply without the tile marks, for unindexed views).
func (v *View) applyPix(log []Write, lo, hi int32) {
	pix := v.Pix
	for _, c := range log {
		if uint32(c.i-lo) < uint32(hi-lo) {
			pix[c.i] = c.p & pixBits // without a move's Dir
		}
	}
}

// applyFresh replays log, the last step's writes, as apply does, and also
// sets, for its writes to pixels lo..hi-1, the Fresh bits of the tiles they
// touch, the bits of their cells in cells and their tile rows in hit
// (index): only the last step's, whatever earlier steps a buffer replays
// (a reader that drew the tick before has seen those).
func (v *View) applyFresh(log []Write, t uint64, cells []uint64, hit []bool, lo, hi int32) {
	w, tw, fw, cw := uint(v.W), uint(TilesW(v.W)), uint(FreshWords(v.W)), uint(cellWords(v.W))
	pix, d, f := v.Pix, v.Dirty, v.Fresh
	inv := recip(v.W)
	for _, c := range log {
		if uint32(c.i-lo) >= uint32(hi-lo) {
			continue
		}
		pix[c.i] = c.p & pixBits                   // without a move's Dir
		y := uint(uint64(c.i) * inv >> recipShift) // y = i / w, see recip
		x := uint(c.i) - y*w
		tx, ty := x/TileW, y/TileH // unsigned: shifts, no sign fixes
		d[ty*tw+tx] = t
		f[ty*fw+tx/64] |= 1 << (tx % 64)
		cells[ty*cw+x/64] |= 1 << (x % 64)
		hit[ty] = true
	}
}

// cellWords is the number of words of a cell map's tile row for a world w
// pixels wide: one bit a column.
func cellWords(w int) int { return (w + 63) / 64 }

// cellMap returns cells, or a new cell map when it is not one for a world
// of w x h pixels: per tile row, a bit for each column where a pixel of
// the row changed (applyFresh, Views.Mark), all clear between publishes
// (index clears what it reads).
func cellMap(cells []uint64, w, h int) []uint64 {
	if n := cellWords(w) * TilesH(h); len(cells) != n {
		return make([]uint64, n)
	}
	return cells
}

// index appends to x the index of the changed cells (View.FreshX,
// FreshPix, FreshAt and FreshBlk) of tile rows r0..r1-1 from the cell map
// applyFresh and Views.Mark filled, clearing those rows of it; a row not hit
// has no bit set and is not read. x's offsets count from its first cell.
func (v *View) index(x *bandIndex, r0, r1 int, cells []uint64, hit []bool) {
	cw, w := cellWords(v.W), v.W
	at, xs, ps, blk := x.at, x.xs, x.ps, x.blk
	for r := r0; r < r1; r++ {
		at = append(at, int32(len(xs)))
		if !hit[r] {
			for k := 0; k < cw; k += FreshBlock / 64 {
				blk = append(blk, int32(len(xs)))
			}
			continue
		}
		hit[r] = false
		row := cells[r*cw : (r+1)*cw]
		top := v.Pix[r*TileH*w : (r*TileH+1)*w]
		bot := top[:0] // none below the last row of a world of odd height
		if r*TileH+1 < v.H {
			bot = v.Pix[(r*TileH+1)*w : (r*TileH+2)*w]
		}
		for k, m := range row {
			if k%(FreshBlock/64) == 0 {
				blk = append(blk, int32(len(xs)))
			}
			if m == 0 {
				continue
			}
			row[k] = 0
			for ; m != 0; m &= m - 1 {
				x := k*64 + bits.TrailingZeros64(m)
				var b Pixel
				if len(bot) > 0 {
					b = bot[x]
				}
				xs, ps = append(xs, uint16(x)), append(ps, top[x], b)
			}
		}
	}
	x.at, x.xs, x.ps, x.blk = at, xs, ps, blk
}

// join appends the indexes of the bands after the first (in v's) to v's,
// and ends FreshAt.
func (v *View) join(bands []bandIndex) {
	for k := range bands {
		b := &bands[k]
		base := int32(len(v.FreshX))
		for _, a := range b.at {
			v.FreshAt = append(v.FreshAt, base+a)
		}
		for _, a := range b.blk {
			v.FreshBlk = append(v.FreshBlk, base+a)
		}
		v.FreshX = append(v.FreshX, b.xs...)
		v.FreshPix = append(v.FreshPix, b.ps...)
	}
	v.FreshAt = append(v.FreshAt, int32(len(v.FreshX)))
}

// recipShift and recip turn the division of a pixel index by the world's
// width into a multiplication: for 0 <= i < 2^26 and 16 <= w <= 2^14 (the
// limits Config enforces), i*recip(w)>>recipShift == i/w, because the
// reciprocal's rounding error times i stays below 2^-16 < 1/w, and the
// product stays below 2^64. The same holds for 1 <= w < 16 when i < w*2^14
// (a rectangle of a world, at most as tall: the product stays below 2^60).
const recipShift = 42

func recip(w int) uint64 { return (1<<recipShift + uint64(w) - 1) / uint64(w) }

// Rows finds a pixel index's column and row in a world of one width with
// a multiplication instead of a division (see recip).
type Rows struct {
	w   int
	inv uint64
}

// NewRows returns the Rows of a world w pixels wide (MinSide..MaxSide), or
// of a rectangle of a world 1..MaxSide pixels wide (see XY).
func NewRows(w int) Rows { return Rows{w, recip(w)} }

// XY returns pixel index i's column and row (0 <= i < MaxPixels; for a
// width below MinSide, 0 <= i < w*MaxSide).
func (r Rows) XY(i int) (x, y int) {
	y = int(uint64(i) * r.inv >> recipShift)
	return i - y*r.w, y
}
