package render

import "snaked/game"

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
//   - It stays put while its snake's head is within leashX columns of its
//     ends and leashY rows of its row, and it stays on the playfield clear
//     of the other overlays; otherwise it is placed again (or dropped).
// Moving a tag costs bytes (its old cells repainted, the new ones drawn:
// ~25-30 bytes for a 6-letter name); the leash keeps that rare. See
// docs/BENCHMARKS-render.md for what tags cost.

// headsCap is how many heads a renderer of n cells keeps: far more than a
// screen shows at the densities the game runs (a 2,048 x 512 world with
// 2,500 snakes puts ~9 heads on an 80x24 screen, ~60 on 200x60). Beyond
// it, heads seen later are not kept, and which snakes get tags may depend
// on what was composed when.
func headsCap(n int) int { return max(16, n/32) }

// seeHead notes that the head of snake slot was composed on the playfield.
func (r *Renderer) seeHead(slot int) {
	s := int32(slot)
	for _, h := range r.heads {
		if h == s {
			return
		}
	}
	if len(r.heads) < cap(r.heads) {
		r.heads = append(r.heads, s)
	}
}

// pruneHeads keeps the heads that are still alive and on the playfield,
// in slot order.
func (r *Renderer) pruneHeads(v *game.View) {
	k := 0
	for _, s := range r.heads {
		if int(s) >= len(v.Snakes) {
			continue
		}
		sn := &v.Snakes[s]
		if p := v.At(sn.Head.X, sn.Head.Y); sn.Used && sn.Alive && p.Kind() == game.Head && p.Slot() == int(s) && r.onPlayfield(v, sn.Head) {
			r.heads[k] = s
			k++
		}
	}
	r.heads = r.heads[:k]
	for i := 1; i < k; i++ {
		for j := i; j > 0 && r.heads[j] < r.heads[j-1]; j-- {
			r.heads[j], r.heads[j-1] = r.heads[j-1], r.heads[j]
		}
	}
}

// onPlayfield reports whether world pixel p is on the playfield.
func (r *Renderer) onPlayfield(v *game.View, p game.Point) bool {
	return mod(p.X-r.camX, v.W) < r.cols && mod(p.Y-r.camY, v.H) < 2*r.pfRows
}

// others counts the heads on the playfield besides the player's and the
// followed snake's.
func (r *Renderer) others(own int) int {
	n := 0
	for _, s := range r.heads {
		if int(s) != own && int(s) != r.focus {
			n++
		}
	}
	return n
}

// Tag bounds.
const (
	maxTags = 8  // tags on screen at most
	tagName = 12 // a tag shows at most this much of a name
	leashX  = 6  // columns a head may be past either end of its tag
	leashY  = 4  // rows a head may be above or below its tag's row
)

// tag is one name tag.
type tag struct {
	id     game.ID // whose; 0: unused
	wx, wy int     // world pixel under its first cell (wy even: the cell's top pixel)
	n      int     // cells
	x, y   int     // this frame: its first cell, its playfield row
}

// dropTags removes every tag.
func (r *Renderer) dropTags() {
	for i := range r.tags {
		r.tags[i].id = 0
	}
}

// tagLen is how many cells s's tag takes (appendTag).
func (r *Renderer) tagLen(s *game.SnakeInfo) int {
	n := min(len(s.Name), tagName)
	if r.prof == Mono {
		n += 2
	}
	if s.Bot {
		n++
	}
	return n
}

// headCell is where s's head is on the playfield (cell, playfield row).
func (r *Renderer) headCell(v *game.View, s *game.SnakeInfo) (x, y int) {
	return mod(s.Head.X-r.camX, v.W), mod(s.Head.Y-r.camY, v.H) / 2
}

// layoutTags keeps, moves, drops and places tags for this frame (see the
// file's comment) and records them as overlays; it reports whether any is
// shown. The other overlays but the box must have been laid out.
func (r *Renderer) layoutTags(v *game.View, own int) bool {
	for i := range r.tags {
		t := &r.tags[i]
		if t.id == 0 {
			continue
		}
		s, ok := v.Snake(t.id)
		if !ok || !s.Alive || s.ID.Slot() == own || s.ID.Slot() == r.focus || !r.tracked(s.ID.Slot()) || r.tagLen(s) != t.n {
			t.id = 0
			continue
		}
		x, py := mod(t.wx-r.camX, v.W), mod(t.wy-r.camY, v.H)
		y := py / 2
		hx, hy := r.headCell(v, s)
		if py%2 != 0 || x+t.n > r.cols || y >= r.pfRows ||
			hx < x-leashX || hx > x+t.n-1+leashX || hy < y-leashY || hy > y+leashY ||
			r.tagBlocked(x, y, t.n, i, 0) {
			t.id = 0
			continue
		}
		t.x, t.y = x, y
	}
	for _, sl := range r.heads {
		if int(sl) == own || int(sl) == r.focus {
			continue
		}
		s := &v.Snakes[sl]
		free := -1
		for i := range r.tags {
			if r.tags[i].id == s.ID {
				free = -2
				break
			}
			if r.tags[i].id == 0 && free == -1 {
				free = i
			}
		}
		if free < 0 {
			continue
		}
		r.placeTag(v, s, free)
	}
	any := false
	for i := range r.tags {
		if t := &r.tags[i]; t.id != 0 {
			r.addOvl(rect{t.x, r.pfTop + t.y, t.x + t.n, r.pfTop + t.y + 1})
			any = true
		}
	}
	return any
}

// tracked reports whether slot's head is on the playfield.
func (r *Renderer) tracked(slot int) bool {
	for _, h := range r.heads {
		if int(h) == slot {
			return true
		}
	}
	return false
}

// tagSpots are where a tag may go, best first, relative to the head's
// cell: centred on the row above, on the row below, right of the head,
// left of it. x is hx + a*n/2 + b for a tag of n cells. Placing it ahead
// of a moving head (so the head runs alongside its tag for longer) was
// measured and does not pay: snakes turn too often (see
// docs/BENCHMARKS-render.md).
var tagSpots = [...]struct{ a, b, dy int }{{-1, 0, -1}, {-1, 0, 1}, {0, 2, 0}, {-2, -1, 0}}

// placeTag puts s's tag in slot i at the first free spot near its head, if
// any.
func (r *Renderer) placeTag(v *game.View, s *game.SnakeInfo, i int) {
	n := r.tagLen(s)
	if n == 0 {
		return
	}
	hx, hy := r.headCell(v, s)
	for _, sp := range tagSpots {
		x, y := hx+sp.a*n/2+sp.b, hy+sp.dy
		if x < 0 || y < 0 || x+n > r.cols || y >= r.pfRows || r.tagBlocked(x, y, n, len(r.tags), 1) || !r.tagFree(v, x, y, n) {
			continue
		}
		r.tags[i] = tag{id: s.ID, wx: mod(r.camX+x, v.W), wy: mod(r.camY+2*y, v.H), n: n, x: x, y: y}
		return
	}
}

// tagBlocked reports whether cells [x, x+n) of playfield row y, widened by
// gap cells each side, meet this frame's other overlays or tags 0..upto-1
// (those laid out already; for a new tag, all).
func (r *Renderer) tagBlocked(x, y, n, upto, gap int) bool {
	a := rect{x - gap, r.pfTop + y, x + n + gap, r.pfTop + y + 1}
	for _, o := range r.nw[:r.nnw] {
		if a.x0 < o.x1 && o.x0 < a.x1 && a.y0 < o.y1 && o.y0 < a.y1 {
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
// (no pixel of anything).
func (r *Renderer) tagFree(v *game.View, x, y, n int) bool {
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
func (r *Renderer) paintTags(v *game.View, own int) {
	for i := range r.tags {
		t := &r.tags[i]
		if t.id == 0 {
			continue
		}
		s := &v.Snakes[t.id.Slot()]
		r.num = r.appendTag(r.num[:0], s)
		putOver(r, v, own, t.x, r.pfTop+t.y, r.num, snakePal[s.Colour&15])
	}
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
	b = appendName(b, s.Name, tagName)
	if r.prof == Mono {
		b = append(b, ']')
	}
	return b
}
