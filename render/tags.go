package render

import (
	"snaked/game"
)

// This file keeps the heads on the playfield and draws other snakes' name
// tags next to them.
//
// Heads: segment notes every head it composes (seeHead); each frame
// pruneHeads keeps those still alive and on the playfield. A head comes
// on screen either by moving (its tile is dirty, so it is composed) or by
// the camera moving (the whole playfield is composed), so the set is
// every live head on screen (up to headsCap) without looking at every
// snake: the radar knows from it that nobody is in sight, the tags whom
// to name.
//
// Tags: a tag is the name of another snake (in its colour, '~' first for
// a bot; Mono: in brackets) on one playfield row near its head, anchored
// in the world, so that camera steps move it with the pixels (DCH/ICH,
// scrolling) for free.
//   - It never hides a snake: where a snake (the player's, or any body or
//     head) passes under it, the cell shows the snake, not the letter
//     (putOver). Text cells never go on the HUD's rows.
//   - It is placed where all its cells are empty, a cell apart from other
//     tags and clear of the HUD's other overlays (radar, kill feed, hint;
//     the box covers tags), at the first of tagSpots that fits; when none
//     does there is no room and no tag ("when there is room"), so crowded
//     heads go without.
//   - A screen shows at most tagRoom of them (3 on 80x24, 8 from 120x40),
//     for the snakes nearest the one the camera follows.
//   - It stays put while its snake's head is within leashX columns of its
//     ends and leashY rows of its row, and it stays on the playfield clear
//     of the other overlays; otherwise it is placed again (or dropped).
// Moving a tag costs bytes (its old cells repainted, the new ones drawn:
// ~25-30 bytes for a 6-letter name); the leash keeps that rare. See
// docs/BENCHMARKS.md for what tags cost.

// headAt is a head composed on the playfield: its snake's slot and its
// world pixel, packed in one word (the slot in the top 24 bits, then x
// and y in 20 bits each: game.Config bounds slots below 2^24 and sides
// below 2^20).
type headAt uint64

func mkHead(slot, x, y int) headAt {
	return headAt(uint64(slot)<<40 | uint64(x)&0xfffff<<20 | uint64(y)&0xfffff)
}

func (h headAt) slot() int { return int(h >> 40) }
func (h headAt) x() int    { return int(h >> 20 & 0xfffff) }
func (h headAt) y() int    { return int(h & 0xfffff) }

// headsCap is how many heads a renderer of n cells keeps: last frame's,
// kept while a frame notes the heads it composes (pruneHeads), and those,
// so room for twice what a screen shows at the densities the game runs
// (a 2,048 x 512 world with 2,500 snakes puts ~9 heads on an 80x24
// screen, up to ~30 where it is dense, ~60 on 200x60; with half this room
// dense screens run out and tag other snakes than a whole frame does).
// Beyond it, heads seen later are not kept, and which snakes get tags may
// depend on what was composed when.
func headsCap(n int) int { return max(64, n/32) }

// seeHead notes that the head of snake slot, at world pixel (x, y), was
// composed on the playfield (between compose's start and pruneHeads;
// cells composed again later, under overlays, show heads kept already).
// pruneHeads drops duplicates.
func (r *Renderer) seeHead(slot, x, y int) {
	if r.seeing && len(r.heads) < cap(r.heads) {
		r.heads = append(r.heads, mkHead(slot, x, y))
	}
}

// pruneHeads keeps the heads whose pixel is still a head of their snake
// and on the playfield, once each. It reads pixels only (no SnakeInfo: at
// thousands of sessions each record is a cache miss), and only for the
// heads kept from before whose snake was not seen again.
//
// Heads seen in this frame's composition are valid as they are. A head
// kept from before whose snake was seen again is gone from there (a snake
// has one head pixel): dropped without a look. Only the rest (a frame
// drawn again for the same tick, a snake whose head is out of the
// composed cells) are looked at again, since the world's pixels are 4
// bytes each over the whole world and each look there is a cache miss
// in a daemon drawing thousands of sessions. (In a crowd a frame sees
// ~19 heads and looks again at ~0.6: heads move every tick.)
//
// The heads are in no order: a screen holds tens, and a small hash set of
// their slots answers "seen again?" without sorting them.
func (r *Renderer) pruneHeads(v *game.View) {
	r.seeing = false
	old, hs := r.heads[:r.headsOld], r.heads[r.headsOld:]
	var set slotSet
	m := 0
	for _, h := range hs {
		if set.add(h.slot(), hs[:m]) {
			hs[m] = h
			m++
		}
	}
	hs = hs[:m]
	k := 0
	for _, h := range old {
		if set.has(h.slot(), hs) || h.x() >= v.W || h.y() >= v.H {
			continue
		}
		p := v.Pix[h.y()*v.W+h.x()]
		if p&kindBits == headBits && p.Slot() == h.slot() && r.onPlayfield(v, game.Point{X: h.x(), Y: h.y()}) {
			old[k] = h
			k++
		}
	}
	n := copy(r.heads[k:], hs)
	r.heads = r.heads[:k+n]
}

// slotSet is the set of the slots of heads hs (pruneHeads): open
// addressing in 256 entries (slot+1; 0 is empty), up to slotSetMax of
// them; a screen with more heads than that is searched one by one.
type slotSet struct {
	tab  [256]uint32
	n    int
	full bool
}

const slotSetMax = 160

// add puts slot, not yet among hs, the heads added so far, in the set; it
// reports false when it was there already.
func (s *slotSet) add(slot int, hs []headAt) bool {
	if s.has(slot, hs) {
		return false
	}
	if s.n == slotSetMax {
		s.full = true
		return true
	}
	s.n++
	i := slot & 255
	for s.tab[i] != 0 {
		i = (i + 1) & 255
	}
	s.tab[i] = uint32(slot) + 1
	return true
}

// has reports whether slot is in the set of hs's slots.
func (s *slotSet) has(slot int, hs []headAt) bool {
	if s.full {
		_, ok := findHead(hs, slot)
		return ok
	}
	for i := slot & 255; s.tab[i] != 0; i = (i + 1) & 255 {
		if s.tab[i] == uint32(slot)+1 {
			return true
		}
	}
	return false
}

// findHead returns the head of snake slot in hs.
func findHead(hs []headAt, slot int) (headAt, bool) {
	for _, h := range hs {
		if h.slot() == slot {
			return h, true
		}
	}
	return 0, false
}

// head returns the kept head of snake slot.
func (r *Renderer) head(slot int) (headAt, bool) { return findHead(r.heads, slot) }

// onPlayfield reports whether world pixel p is on the playfield.
func (r *Renderer) onPlayfield(v *game.View, p game.Point) bool {
	return wrap1(p.X-r.camX, v.W) < r.cols && wrap1(p.Y-r.camY, v.H) < 2*r.pfRows
}

// Others reports how many other snakes (neither the player's nor the
// followed one) had their head on the playfield in the last frame.
func (r *Renderer) Others() int { return r.others(r.lastOwn) }

// others counts the heads on the playfield besides the player's and the
// followed snake's.
func (r *Renderer) others(own int) int {
	n := 0
	for _, h := range r.heads {
		if h.slot() != own && h.slot() != r.focus {
			n++
		}
	}
	return n
}

// Tag bounds.
const (
	maxTags  = 8   // tags on screen at most
	minTags  = 3   // tags a screen has room for at least (tagRoom)
	tagCells = 500 // playfield cells a tag's room takes (tagRoom)
	tagName  = 12  // a tag shows at most this much of a name
	leashX   = 6   // columns a head may be past either end of its tag
	leashY   = 4   // rows a head may be above or below its tag's row
	tagTries = 4   // snakes a tick may try to place a tag for, at most
)

// tag is one name tag. It keeps its text, colour and where its snake's
// head was, so that keeping it reads no SnakeInfo.
type tag struct {
	id     game.ID // whose; 0: unused
	wx, wy int     // world pixel under its first cell (wy even: the cell's top pixel)
	x, y   int     // this frame: its first cell, its playfield row
	hx, hy int     // its snake's head (world pixel) at tick at
	at     uint64
	kept   bool // kept from the last frame, where it was
	col    uint8
	n      int // cells
	txt    [tagName + 3]byte
}

// dropTags removes every tag.
func (r *Renderer) dropTags() {
	for i := range r.tags {
		r.tags[i].id = 0
	}
}

// layoutTags keeps, moves, drops and places tags for this frame (see the
// file's comment) and records them as overlays; it reports whether any is
// shown. The other overlays but the box must have been laid out.
//
// A tag is kept for the snake whose head is in the slot it was placed
// for, as long as that head moved no faster than a snake can (game.DashLen
// pixels a tick): a slot given to a new snake, whose head appears
// anywhere, loses the old tag.
func (r *Renderer) layoutTags(v *game.View, own int) bool {
	for i := range r.tags {
		t := &r.tags[i]
		if t.id == 0 {
			continue
		}
		sl := t.id.Slot()
		h, ok := r.head(sl)
		if !ok || sl == own || sl == r.focus || v.Tick < t.at ||
			max(abs(wrapDelta(h.x()-t.hx, v.W)), abs(wrapDelta(h.y()-t.hy, v.H))) > game.DashLen*int(v.Tick-t.at) {
			t.id = 0
			continue
		}
		t.hx, t.hy, t.at = h.x(), h.y(), v.Tick
		x, py := wrap1(t.wx-r.camX, v.W), wrap1(t.wy-r.camY, v.H)
		y := py / 2
		hx, hy := wrap1(t.hx-r.camX, v.W), wrap1(t.hy-r.camY, v.H)/2
		if py%2 != 0 || x+t.n > r.cols || y >= r.pfRows ||
			hx < x-leashX || hx > x+t.n-1+leashX || hy < y-leashY || hy > y+leashY ||
			r.tagBlocked(x, y, t.n, i, 0) {
			t.id = 0
			continue
		}
		t.x, t.y, t.kept = x, y, true
	}
	r.placeTags(v, own)
	any := false
	for i := range r.tags {
		if t := &r.tags[i]; t.id != 0 {
			r.addOvl(rect{t.x, r.pfTop + t.y, t.x + t.n, r.pfTop + t.y + 1}, false)
			any = true
		}
	}
	return any
}

// tagRoom is how many tags a screen shows at most: one for every
// tagCells cells of its playfield, at least minTags and at most maxTags
// (3 on 80x24, 5 on 100x30, 8 from 120x40). A crowd puts ~9 heads on an
// 80x24 screen: a name on each, every one moving on within a second (its
// leash), would be a screen of jumping words and ~a fifth of the cells a
// frame changes.
func (r *Renderer) tagRoom() int { return max(minTags, min(maxTags, r.cols*r.pfRows/tagCells)) }

// placeTags tries to place tags for the snakes on the playfield without
// one, nearest first to the snake the camera follows (else to the
// screen's middle): the names that matter are of the snakes about to
// meet it. At most tagTries a tick: each try reads the snake's SnakeInfo
// (its name), so a crowd costs a few reads a tick, not one per head per
// frame; a frame drawn again for the same tick tries nothing new.
func (r *Renderer) placeTags(v *game.View, own int) {
	if v.Tick != r.tagTick {
		r.tagTick, r.tagBudget = v.Tick, tagTries
	}
	if len(r.heads) == 0 || r.tagBudget == 0 {
		return
	}
	free := r.tagRoom()
	for i := range r.tags {
		if r.tags[i].id != 0 {
			free--
		}
	}
	// The middle of attention, in screen cells.
	cx, cy := r.cols/2, r.pfRows/2
	if h, ok := r.head(r.focus); ok {
		cx, cy = wrap1(h.x()-r.camX, v.W), wrap1(h.y()-r.camY, v.H)/2
	}
	// The nearest candidates, nearest first, in one pass over the heads;
	// at the same distance the lower slot first, so that the choice does
	// not depend on the order the heads were seen in (a camera step
	// composed from the last frame sees them in another order than a
	// whole frame does).
	var near [tagTries]headAt
	var dist [tagTries]int
	n, want := 0, min(r.tagBudget, free)
	if want <= 0 {
		return
	}
	for _, h := range r.heads {
		dx, dy := wrap1(h.x()-r.camX, v.W)-cx, wrap1(h.y()-r.camY, v.H)/2-cy
		d := (max(dx, -dx)+2*max(dy, -dy))<<16 | h.slot() // a row is two columns' height
		if n == want && d >= dist[n-1] {
			continue
		}
		if sl := h.slot(); sl == own || sl == r.focus || sl >= len(v.Snakes) || r.tagged(sl) {
			continue
		}
		j := min(n, want-1)
		for ; j > 0 && dist[j-1] > d; j-- {
			near[j], dist[j] = near[j-1], dist[j-1]
		}
		near[j], dist[j] = h, d
		n = min(n+1, want)
	}
	for _, h := range near[:n] {
		r.tagBudget--
		i := 0
		for r.tags[i].id != 0 {
			i++
		}
		r.placeTag(v, &v.Snakes[h.slot()], h, i) // want <= free: a slot is free
	}
}

// tagged reports whether snake slot has a tag.
func (r *Renderer) tagged(slot int) bool {
	for i := range r.tags {
		if r.tags[i].id != 0 && r.tags[i].id.Slot() == slot {
			return true
		}
	}
	return false
}

func abs(a int) int { return max(a, -a) }

// tagSpots are where a tag may go, best first, relative to the head's
// cell: centred on the row above, on the row below, right of the head,
// left of it. x is hx + a*n/2 + b for a tag of n cells. Placing it ahead
// of a moving head (so the head runs alongside its tag for longer) does
// not pay: snakes turn too often.
var tagSpots = [...]struct{ a, b, dy int }{{-1, 0, -1}, {-1, 0, 1}, {0, 2, 0}, {-2, -1, 0}}

// placeTag puts s's tag, its head at h, in tag slot i at the first free
// spot near its head; it reports whether there was one.
func (r *Renderer) placeTag(v *game.View, s *game.SnakeInfo, h headAt, i int) bool {
	t := &r.tags[i]
	n := r.tagLen(s) // the name's bytes are read only for a tag that fits
	if n == 0 {
		return false
	}
	hx, hy := mod(h.x()-r.camX, v.W), mod(h.y()-r.camY, v.H)/2
	for _, sp := range tagSpots {
		x, y := hx+sp.a*n/2+sp.b, hy+sp.dy
		// x < W and 2y+1 < H: on a world smaller than the screen, which
		// then shows it more than once, the anchor must map back to
		// this cell.
		if x < 0 || y < 0 || x+n > r.cols || y >= r.pfRows || x >= v.W || 2*y+1 >= v.H ||
			r.tagBlocked(x, y, n, len(r.tags), 1) || !r.tagFree(v, x, y, n) {
			continue
		}
		r.appendTag(t.txt[:0], s)
		t.id, t.wx, t.wy, t.x, t.y, t.n, t.kept = s.ID, mod(r.camX+x, v.W), mod(r.camY+2*y, v.H), x, y, n, false
		t.hx, t.hy, t.at, t.col = h.x(), h.y(), v.Tick, snakePal[s.Colour&15]
		return true
	}
	return false
}

// tagBlocked reports whether cells [x, x+n) of playfield row y, widened by
// gap cells each side, meet this frame's other overlays or tags 0..upto-1
// (those laid out already; for a new tag, all).
func (r *Renderer) tagBlocked(x, y, n, upto, gap int) bool {
	a := rect{x - gap, r.pfTop + y, x + n + gap, r.pfTop + y + 1}
	for _, p := range r.nw[:r.nnw] {
		if a.meets(p.unpack()) {
			return true
		}
	}
	for j := range r.tags[:upto] {
		t := &r.tags[j]
		if t.id != 0 && t.y == y && a.x0 < t.x+t.n && t.x < a.x1 {
			return true
		}
	}
	return false
}

// tagFree reports whether cells [x, x+n) of playfield row y show nothing
// (no pixel of anything). Before the overlays are painted, a cell shows
// the world as it is now (composed this frame, or unchanged since it
// was) unless one of last frame's overlays covered it: its text, or a
// space of it that looks blank, may hide something. So only cells under
// those read the world's pixels; the rest are blank when empty.
func (r *Renderer) tagFree(v *game.View, x, y, n int) bool {
	sy := r.pfTop + y
	a := rect{x, sy, x + n, sy + 1}
	old := false
	for _, p := range r.ovl[:r.novl] {
		if a.meets(p.unpack()) {
			old = true
			break
		}
	}
	if !old {
		for _, c := range r.next[sy*r.cols+x : sy*r.cols+x+n] {
			if c != blank {
				return false
			}
		}
		return true
	}
	top, bot := v.Row(r.camY+2*y), v.Row(r.camY+2*y+1)
	wx := mod(r.camX+x, v.W)
	for range n {
		if top[wx]|bot[wx] != 0 {
			return false
		}
		if wx++; wx == v.W {
			wx = 0
		}
	}
	return true
}

// paintTags draws the tags laid out for this frame (never over a snake:
// putOver).
// A tag kept where it was, whose cells nothing composed again, is left as
// it is.
func (r *Renderer) paintTags(v *game.View, own int) {
	for i := range r.tags {
		t := &r.tags[i]
		// A kept tag is where it was, whole on the playfield: an overlay
		// of the last frame.
		if t.id == 0 || t.kept && r.untouched(rect{t.x, r.pfTop + t.y, t.x + t.n, r.pfTop + t.y + 1}) {
			continue
		}
		putOver(r, v, own, t.x, r.pfTop+t.y, t.txt[:t.n], t.col)
	}
}

// tagLen is the length of s's tag (appendTag), from the name's length
// alone (TestTagLen).
func (r *Renderer) tagLen(s *game.SnakeInfo) int {
	n := min(len(s.Name), tagName)
	if s.Bot {
		n++
	}
	if r.prof == Mono {
		n += 2
	}
	return n
}

// appendTag appends s's tag: its name cut to tagName, '~' first for a
// bot (as on the leaderboard); Mono: in brackets.
func (r *Renderer) appendTag(b []byte, s *game.SnakeInfo) []byte {
	if r.prof == Mono {
		b = append(b, '[')
	}
	if s.Bot {
		b = append(b, '~')
	}
	b = game.AppendName(b, s.Name, tagName)
	if r.prof == Mono {
		b = append(b, ']')
	}
	return b
}
