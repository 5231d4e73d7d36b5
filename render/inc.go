package render

import (
	"math/bits"

	"snaked/game"
)

// This file holds what makes a frame's cost follow what changed: the
// per-row masks of spans the encoder diffs and the recomposing of only
// the tiles the view marks dirty (game.View.Dirty).

// A row's spans must fit the uint64 mask: this constant overflows, and the
// package stops compiling, if MaxCols or span change so that they do not.
const _ uint64 = 1<<((MaxCols+span-1)/span) - 1

// rect is a screen rectangle [x0, x1) x [y0, y1).
type rect struct{ x0, y0, x1, y1 int }

// orect is a rect on the screen (every coordinate within 0..MaxCols or
// 0..MaxRows) as the overlay lists keep it: a quarter of rect's size,
// which keeps the Renderer a size class smaller.
type orect struct{ x0, y0, x1, y1 int16 }

func (o rect) pack() orect   { return orect{int16(o.x0), int16(o.y0), int16(o.x1), int16(o.y1)} }
func (o orect) unpack() rect { return rect{int(o.x0), int(o.y0), int(o.x1), int(o.y1)} }

// meets reports whether o and p share a cell.
func (o rect) meets(p rect) bool { return o.x0 < p.x1 && p.x0 < o.x1 && o.y0 < p.y1 && p.y0 < o.y1 }

// allMask is the mask of every span of a row.
func (r *Renderer) allMask() uint64 { return allSpans(r.cols) }

// markAll makes the encoder diff every cell.
func (r *Renderer) markAll() {
	for y := range r.mask {
		r.mask[y] = r.allMask()
	}
}

// markSpan makes the encoder diff cells [x0, x1) of row y.
func (r *Renderer) markSpan(y, x0, x1 int) {
	if x0 >= x1 {
		return
	}
	lo, hi := x0/span, (x1-1)/span
	r.mask[y] |= (uint64(1)<<(hi+1) - 1) &^ (uint64(1)<<lo - 1)
}

// maxOvl bounds the overlays of one frame: the box, the hint, the radar's
// lines, the kill feed's lines and the name tags.
const maxOvl = 2 + radarLines + feedMax + maxTags

// addOvl records an overlay of this frame at o, clipped to the playfield,
// and, when mark is set, marks its cells for the encoder. Whoever adds an
// overlay paints every cell of it (restore relies on that), with put or
// putOver, which mark the cells they change, unless it marks them here.
// (In a crowd the tags, the kill feed's lines and the radar stay put
// over most frames: marked whole, they would be 40 % of the spans the
// encoder looks at, unchanged.)
func (r *Renderer) addOvl(o rect, mark bool) {
	o = rect{max(o.x0, 0), max(o.y0, r.pfTop), min(o.x1, r.cols), min(o.y1, r.pfTop+r.pfRows)}
	if o.x0 >= o.x1 || o.y0 >= o.y1 || r.nnw == maxOvl {
		return
	}
	r.nw[r.nnw] = o.pack()
	r.nnw++
	for y := o.y0; y < o.y1 && mark; y++ {
		r.markSpan(y, o.x0, o.x1)
	}
}

// restore composes again, from the playfield, the cells under last
// frame's overlays, except those under an overlay of this frame with the
// very same rectangle, which paints every one of them again: a tag, a
// feed line or the radar that stays where it was costs no compose.
func (r *Renderer) restore(v *game.View, own int) {
next:
	for _, p := range r.ovl[:r.novl] {
		for _, n := range r.nw[:r.nnw] {
			if n == p {
				continue next
			}
		}
		o := p.unpack()
		for y := o.y0; y < o.y1; y++ {
			r.pfSpan(v, own, y-r.pfTop, o.x0, o.x1)
		}
		r.rst[r.nrst] = p
		r.nrst++
	}
}

// unchanged reports whether the cells of o, one overlay row of this
// frame, still hold what was painted there in the last frame: the frame is
// incremental, o was an overlay of the last frame, no cell of it was
// composed again from the playfield (untouched). An overlay whose text is
// the same need not paint it again then.
func (r *Renderer) unchanged(o rect) bool {
	if !r.inc {
		return false
	}
	was, po := false, o.pack()
	for _, p := range r.ovl[:r.novl] {
		if p == po {
			was = true
			break
		}
	}
	return was && r.untouched(o)
}

// untouched is unchanged for o known to be an overlay of the last frame:
// no cell of it was composed again this frame, neither by the playfield's
// composition (its spans in composed: a cell composed under an overlay
// always differs from the text shown there, or, a blank composed under a
// blank, needs no paint) nor by restore.
func (r *Renderer) untouched(o rect) bool {
	if !r.inc {
		return false
	}
	for _, q := range r.rst[:r.nrst] {
		if o.meets(q.unpack()) {
			return false
		}
	}
	m := spanBits(o.x0, o.x1)
	c := r.composed()
	for y := o.y0; y < o.y1; y++ {
		if c[y]&m != 0 {
			return false
		}
	}
	return true
}

// composed is, per row, the spans the playfield's composition marked in
// this frame (mask before any overlay's marks): kept past mask's length.
func (r *Renderer) composed() []uint64 {
	n := len(r.mask)
	return r.mask[n : 2*n]
}

// pfSpan composes cells [x0, x1) of playfield row sy and marks them.
func (r *Renderer) pfSpan(v *game.View, own, sy, x0, x1 int) {
	mono := r.prof == Mono
	y0, y1 := r.worldRows(v, sy)
	for x, wx := x0, (r.camX+x0)%v.W; x < x1; {
		n := min(x1-x, v.W-wx)
		r.worldSpan(v, own, mono, sy, y0, y1, x, wx, wx+n)
		x += n
		wx = 0
	}
}

// worldSpan composes and marks the cells of playfield row sy from screen
// column xs on that show world columns [p, q) of world rows y0 and y1
// (worldRows).
func (r *Renderer) worldSpan(v *game.View, own int, mono bool, sy, y0, y1, xs, p, q int) {
	y, o0, o1 := r.pfTop+sy, y0*v.W, y1*v.W
	row := r.next[y*r.cols+xs : y*r.cols+xs+q-p]
	r.segment(v, row, v.Pix[o0+p:o0+q], v.Pix[o1+p:o1+q], own, mono, p, y0)
	r.markSpan(y, xs, xs+q-p)
}

// dirtyTiles composes again the playfield cells changed since the last
// frame. When the last frame drew the tick before (a session that keeps
// up) they are the view's listed cells (freshCells), or, in a view without
// the list, the tiles of its Fresh bits (freshTiles); else the tiles with
// Dirty > r.lastTick, run by run of adjacent dirty tiles.
func (r *Renderer) dirtyTiles(v *game.View, own int) {
	th := game.TilesH(v.H)
	fresh := v.Tick == r.lastTick+1 && len(v.Fresh) == game.FreshWords(v.W)*th
	switch {
	case v.Tick == r.lastTick:
		return // the same tick: nothing changed
	case fresh && len(v.FreshAt) == th+1 && len(v.FreshPix) == 2*len(v.FreshX) && len(v.FreshBlk) == game.FreshBlocks(v.W)*th:
		r.freshCells(v, own)
		return
	case fresh:
		r.freshTiles(v, own)
		return
	}
	const tw = game.TileW
	mono, last, w, nt := r.prof == Mono, r.lastTick, r.cols, game.TilesW(v.W)
	for sy := 0; sy < r.pfRows; sy++ {
		y0, y1 := r.worldRows(v, sy)
		t0, t1 := y0/game.TileH, y1/game.TileH
		d0 := v.Dirty[t0*nt : (t0+1)*nt]
		d1 := v.Dirty[t1*nt : (t1+1)*nt]
		// Screen columns [x, x+n) show world columns [wx, wx+n).
		for x, wx := 0, r.camX; x < w; {
			n := min(w-x, v.W-wx)
			a, b := wx/tw, (wx+n-1)/tw
			for t := a; t <= b; t++ {
				if d0[t] <= last && d1[t] <= last {
					continue
				}
				e := t + 1
				for e <= b && (d0[e] > last || d1[e] > last) {
					e++
				}
				// Tiles [t, e) are dirty: world columns [p, q).
				p, q := max(t*tw, wx), min(e*tw, wx+n)
				r.worldSpan(v, own, mono, sy, y0, y1, x+p-wx, p, q)
				t = e
			}
			x += n
			wx = 0
		}
	}
}

// worldRows returns the world's pixel rows that playfield row sy shows:
// the camera's row 2*sy and the one below it, wrapped.
func (r *Renderer) worldRows(v *game.View, sy int) (y0, y1 int) {
	y0 = mod(r.camY+2*sy, v.H)
	if y1 = y0 + 1; y1 == v.H {
		y1 = 0
	}
	return y0, y1
}

// freshTiles is dirtyTiles for a view one tick after the last frame's: the
// dirty tiles are the view's Fresh bits, found a word (64 tiles) at a
// time.
func (r *Renderer) freshTiles(v *game.View, own int) {
	for sy := 0; sy < r.pfRows; sy++ {
		r.freshRow(v, own, sy)
	}
}

// freshRow is freshTiles for playfield row sy.
func (r *Renderer) freshRow(v *game.View, own, sy int) {
	const tw = game.TileW
	mono, w, fw := r.prof == Mono, r.cols, game.FreshWords(v.W)
	y0, y1 := r.worldRows(v, sy)
	t0, t1 := y0/game.TileH, y1/game.TileH
	f0 := v.Fresh[t0*fw : (t0+1)*fw]
	f1 := f0
	if t1 != t0 {
		f1 = v.Fresh[t1*fw : (t1+1)*fw]
	}
	// Screen columns [x, x+n) show world columns [wx, wx+n), tiles [a, b].
	for x, wx := 0, r.camX; x < w; {
		n := min(w-x, v.W-wx)
		a, b := wx/tw, (wx+n-1)/tw
		for k := a / 64; k <= b/64; k++ {
			m := f0[k] | f1[k]
			if k == a/64 {
				m &= ^uint64(0) << (a % 64)
			}
			if k == b/64 && b%64 != 63 {
				m &= 1<<(b%64+1) - 1
			}
			for m != 0 {
				// a run of dirty tiles [t, e) within word k
				s := bits.TrailingZeros64(m)
				run := bits.TrailingZeros64(^(m >> s))
				t := k*64 + s
				p, q := max(t*tw, wx), min((t+run)*tw, wx+n)
				r.worldSpan(v, own, mono, sy, y0, y1, x+p-wx, p, q)
				if s+run == 64 {
					break
				}
				m &^= (1<<run - 1) << s
			}
		}
		x += n
		wx = 0
	}
}

// freshCells is dirtyTiles for a view one tick after the last frame's that
// lists the cells the tick changed (View.FreshX, their pixels in
// View.FreshPix, so that it does not read Pix, where each row's search
// starts in View.FreshBlk): it composes only those,
// and marks for the encoder only the spans where one now differs from
// what the terminal shows (r.next starts as a copy of it).
func (r *Renderer) freshCells(v *game.View, own int) {
	mono, w, nb := r.prof == Mono, r.cols, game.FreshBlocks(v.W)
	// The view's index and the grid in locals: the loops below read them
	// for every row.
	fx, fp, at, blk, next := v.FreshX, v.FreshPix, v.FreshAt, v.FreshBlk, r.next
	// The cells' looks, worked out once for every renderer of v (scene).
	var look []uint32
	if !mono && !r.opt.noScene {
		if s := sceneFor(v); s != nil {
			look = s.fresh
		}
	}
	y0 := mod(r.camY, v.H) - 2
	for sy := 0; sy < r.pfRows; sy++ {
		if y0 += 2; y0 >= v.H {
			y0 -= v.H
		}
		t := uint(y0) / game.TileH
		if y1 := y0 + 1; y1 == v.H || uint(y1)/game.TileH != t {
			// Two tile rows: in a world of odd height the camera's rows
			// can start on odd pixel rows.
			r.freshRow(v, own, sy)
			continue
		}
		a, b := int(at[t]), int(at[t+1])
		if a == b {
			continue
		}
		y := r.pfTop + sy
		row := next[y*w : (y+1)*w]
		// Screen columns [x, x+n) show world columns [wx, wx+n).
		for x, wx := 0, r.camX; x < w; {
			n := min(w-x, v.W-wx)
			// The first column at or right of wx: from the first of its
			// block (View.FreshBlk), a few columns on at most.
			i := int(blk[int(t)*nb+wx/game.FreshBlock])
			for i < b && int(fx[i]) < wx {
				i++
			}
			for ; i < b && int(fx[i]) < wx+n; i++ {
				c := int(fx[i])
				nc := blank
				if look != nil {
					if nc = cell(look[i]); look[i] > 0xffff {
						nc = r.sceneHeads(v, look[i], i, own, c, y0)
					}
				} else if p, q := fp[2*i], fp[2*i+1]; p|q != 0 {
					nc = r.pixCell(v, p, q, own, mono, c, y0)
				}
				if sx := x + c - wx; nc != row[sx] {
					row[sx] = nc
					r.mask[y] |= 1 << (sx / span)
				}
			}
			x += n
			wx = 0
		}
	}
}

// sceneHeads notes the heads of View.FreshX entry i, whose look in the
// scene is e (world column wx, its top pixel in row wy), and returns its
// cell: the scene's, or pixCell's when one of them is the player's.
func (r *Renderer) sceneHeads(v *game.View, e uint32, i, own, wx, wy int) cell {
	p, q := v.FreshPix[2*i], v.FreshPix[2*i+1]
	if e&sceneTop != 0 && p.Slot() == own || e&sceneBot != 0 && q.Slot() == own {
		return r.pixCell(v, p, q, own, false, wx, wy)
	}
	r.seeHeads(v, p, q, wx, wy)
	return cell(e)
}

// canStep reports whether this frame's camera step of dx columns and dy
// rows, from (ox, oy), can be composed from the last frame (stepShift)
// rather than whole, once everything else an incremental frame needs
// holds: the step is the camera's whole move and at most half the
// playfield each way (a larger one, a spectator's jump to another snake,
// leaves little to keep), and the scroll region is the playfield.
func (r *Renderer) canStep(v *game.View, ox, oy, dx, dy int) bool {
	return (dx != 0 || dy != 0) && 2*max(dx, -dx) <= r.cols && 2*max(dy, -dy) <= r.pfRows &&
		mod(ox+dx, v.W) == r.camX && mod(oy+2*dy, v.H) == r.camY &&
		r.vt.scrolls(r.pfTop, r.pfTop+r.pfRows-1)
}

// stepShift composes a camera step of dx columns and dy rows from the
// last frame, which r.next holds (begin): the playfield's rows
// move up by dy (the encoder scrolls them, moveCamera) and each row left
// by dx (the encoder shifts each row that is not blank: a blank row
// shifted is the same), the rows and columns that come in are composed
// from the world, and last frame's overlays, moved with the rest, become
// the places restore composes again. The cells the tick changed are left
// to dirtyTiles. A re-centring of the dead zone's camera is ~4 % of a
// crowd's frames; composed whole and diffed whole, those would take a
// sixth of the renderer's time.
func (r *Renderer) stepShift(v *game.View, own, dx, dy int) {
	w, t, b := r.cols, r.pfTop, r.pfTop+r.pfRows-1
	g := r.next
	// A view of a later tick than the last frame's lists every head that
	// moved, for dirtyTiles to note: noting them here too would spend the
	// room for heads (headsCap) on the same heads twice.
	if v.Tick > r.lastTick {
		r.seeing = false
		defer func() { r.seeing = true }()
	}
	switch {
	case dy > 0:
		copy(g[t*w:(b+1-dy)*w], g[(t+dy)*w:(b+1)*w])
	case dy < 0:
		copy(g[(t-dy)*w:(b+1)*w], g[t*w:(b+1+dy)*w])
	}
	// The rows that came in, then the columns that came in on the rest.
	in0, in1 := b+1-dy, b+1 // rows [in0, in1)
	if dy < 0 {
		in0, in1 = t, t-dy
	}
	c0, c1 := w-dx, w // columns [c0, c1)
	if dx < 0 {
		c0, c1 = 0, -dx
	}
	for y := t; y <= b; y++ {
		if y >= in0 && y < in1 {
			r.pfSpan(v, own, y-t, 0, w)
			continue
		}
		if dx == 0 {
			continue
		}
		row := g[y*w : (y+1)*w]
		if dx > 0 {
			copy(row, row[dx:])
		} else {
			copy(row[-dx:], row)
		}
		r.pfSpan(v, own, y-t, c0, c1)
	}
	// Last frame's overlays, where their cells are now.
	n := 0
	for _, p := range r.ovl[:r.novl] {
		o := p.unpack()
		o = rect{max(o.x0-dx, 0), max(o.y0-dy, t), min(o.x1-dx, w), min(o.y1-dy, b+1)}
		if o.x0 < o.x1 && o.y0 < o.y1 {
			r.ovl[n] = o.pack()
			n++
		}
	}
	r.novl = n
}
