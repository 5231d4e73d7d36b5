package render

import (
	"math"
	"strconv"

	"snaked/game"
)

// This file draws the radar. When no other snake's head is on the
// playfield (the heads kept by segment, tags.go, say so without looking
// at every snake), up to two lines at the playfield's top left say where
// the nearest live snake and the leader (View.Top[0]) are, from the
// followed head (a free camera: its centre): a direction (one arrow, two
// for a diagonal; Mono: ^ v < >) and the distance on the torus in screens
// (the playfield's width and height), e.g. "nearest →  2.5 screens".
//
// It shows once nobody has been in sight for radarDelay ticks (a snake
// passing the screen's edge does not make it blink) and goes as soon as
// somebody is.
//
// Cost: finding the nearest snake looks at every snake, so it is done
// only while the radar shows, and only when the answer can change: after
// a scan, the runner-up is g pixels further than the nearest, and as
// heads move a pixel a tick (three in a rare dash) the order cannot change
// for about g/4 ticks; the next scan comes then, but no sooner than
// radarScanMin ticks and no later than radarScanMax (a snake may spawn
// closer). Scans happen only when the text is made again, every
// radarEvery ticks; in between, the text stays (so its bytes are spent
// once a second at most); the leader comes from View.Top. See
// docs/BENCHMARKS.md.

// Radar bounds and rates.
const (
	radarLines   = 2
	radarDelay   = 20 // ticks alone before the radar shows
	radarEvery   = 10 // ticks between refreshes of the text
	radarScanMin = 20 // ticks between scans for the nearest snake, at least
	radarScanMax = 50 // and at most
)

// radar is the radar's state.
type radar struct {
	on    bool    // shown in the last frame
	fresh bool    // this frame shows new text (or shows it for the first time)
	alone bool    // nobody else in sight since tick since
	since uint64  // the tick it started
	shown uint64  // tick the text was made
	scan  uint64  // tick of the last scan
	next  uint64  // tick of the next scan
	near  game.ID // the nearest snake the last scan found; 0: none
	n     int     // lines
	line  [radarLines][24]byte
	ln    [radarLines]int
	scans int // scans done (tests and benchmarks)
}

// radarOrigin is where the radar measures from: the followed snake's head,
// or the free camera's centre; false when following a snake that is dead
// or gone.
func (r *Renderer) radarOrigin(v *game.View, h *HUD) (p game.Point, ok bool) {
	switch {
	case r.focus >= 0:
		return v.Heads[r.focus], v.Snakes[r.focus].Alive
	case h.Follow == 0:
		return game.Point{X: r.camX + r.cols/2, Y: r.camY + r.pfRows}, true
	}
	return game.Point{}, false
}

// layoutRadar decides whether the radar shows, refreshes its text when
// due and records its lines as overlays; it reports whether any shows.
func (r *Renderer) layoutRadar(v *game.View, h *HUD, own int) bool {
	rd := &r.rad
	o, ok := r.radarOrigin(v, h)
	t := v.Tick
	if r.opt.noRadar || !ok || r.others(own) > 0 {
		rd.on, rd.alone = false, false
		return false
	}
	if !rd.alone || t < rd.since {
		rd.alone, rd.since = true, t
	}
	if t < rd.since+radarDelay {
		return false
	}
	rd.fresh = !rd.on
	if !rd.on || t < rd.shown || t >= rd.shown+radarEvery {
		rd.fresh = true
		if !rd.on || t < rd.scan || t >= rd.next || !r.radarTarget(v, own, rd.near) {
			r.scanRadar(v, own, o)
		}
		r.radarText(v, own, o)
		rd.shown = t
	}
	rd.on = true
	for k := range rd.n {
		r.addOvl(rect{1, r.pfTop + k, 1 + rd.ln[k], r.pfTop + k + 1}, false)
	}
	return rd.n > 0
}

// radarTarget reports whether id names a live snake the radar may point
// to.
func (r *Renderer) radarTarget(v *game.View, own int, id game.ID) bool {
	s, ok := v.Snake(id)
	return ok && s.Alive && s.ID.Slot() != own && s.ID.Slot() != r.focus
}

// scanRadar finds the live snake nearest to o and when to look again.
func (r *Renderer) scanRadar(v *game.View, own int, o game.Point) {
	rd := &r.rad
	best, second := -1, -1
	rd.near = 0
	for i := range v.Snakes {
		s := &v.Snakes[i]
		if !s.Alive || !s.Used || i == own || i == r.focus {
			continue
		}
		dx, dy := wrapDelta(v.Heads[i].X-o.X, v.W), wrapDelta(v.Heads[i].Y-o.Y, v.H)
		switch d := dx*dx + dy*dy; {
		case best < 0 || d < best:
			best, second, rd.near = d, best, s.ID
		case second < 0 || d < second:
			second = d
		}
	}
	wait := radarScanMax
	if second >= 0 {
		gap := math.Sqrt(float64(second)) - math.Sqrt(float64(best))
		wait = min(max(int(gap/4), radarScanMin), radarScanMax)
	}
	rd.scan, rd.next = v.Tick, v.Tick+uint64(wait)
	rd.scans++
}

// radarText makes the radar's lines: the nearest snake (unless it leads)
// and the leader (unless it is the followed snake).
func (r *Renderer) radarText(v *game.View, own int, o game.Point) {
	rd := &r.rad
	rd.n = 0
	lead := game.ID(0)
	if len(v.Top) > 0 {
		if sl := v.Top[0].Slot; sl >= 0 && sl < len(v.Snakes) && r.radarTarget(v, own, v.Snakes[sl].ID) {
			lead = v.Snakes[sl].ID
		}
	}
	if rd.near != 0 && rd.near != lead && r.radarTarget(v, own, rd.near) {
		r.radarLine(v, o, v.Heads[rd.near.Slot()], "nearest ", "near ")
	}
	if lead != 0 {
		r.radarLine(v, o, v.Heads[lead.Slot()], "leader  ", "lead ")
	}
}

// radarLine appends a line pointing from o to p.
func (r *Renderer) radarLine(v *game.View, o, p game.Point, label, short string) {
	rd := &r.rad
	dx, dy := wrapDelta(p.X-o.X, v.W), wrapDelta(p.Y-o.Y, v.H)
	b := rd.line[rd.n][:0]
	compact := r.cols < compactCols
	if compact {
		b = append(b, short...)
	} else {
		b = append(b, label...)
	}
	b = appendArrow(b, dx, dy)
	d := math.Hypot(float64(dx)/float64(r.cols), float64(dy)/float64(2*r.pfRows))
	b = appendTenths(append(b, ' '), min(int(d*10+0.5), 9999))
	if compact {
		b = append(b, " scr"...)
	} else {
		b = append(b, " screens"...)
	}
	rd.ln[rd.n] = len(b)
	rd.n++
}

// appendArrow appends two cells pointing along (dx, dy) (y grows down):
// one arrow and a space, or two arrows (vertical, horizontal) for a
// diagonal. A component shows when it is at least 0.4 of the other (the
// 8 sectors are then about equal).
func appendArrow(b []byte, dx, dy int) []byte {
	ax, ay := max(dx, -dx), max(dy, -dy)
	n := len(b)
	if 5*ay >= 2*ax && ay > 0 {
		if dy < 0 {
			b = append(b, gUp)
		} else {
			b = append(b, gDown)
		}
	}
	if 5*ax >= 2*ay && ax > 0 {
		if dx < 0 {
			b = append(b, gLeft)
		} else {
			b = append(b, gRight)
		}
	}
	for len(b) < n+2 {
		b = append(b, ' ')
	}
	return b
}

// appendTenths appends t/10 with one decimal, right-aligned in 4 cells.
func appendTenths(b []byte, t int) []byte {
	if t < 100 {
		b = append(b, ' ')
	}
	b = strconv.AppendInt(b, int64(t/10), 10)
	return append(b, '.', byte('0'+t%10))
}

// paintRadar draws the radar's lines.
// Lines that are the same as in the last frame, on cells nothing composed
// again, are left as they are.
func (r *Renderer) paintRadar(v *game.View, own int) {
	rd := &r.rad
	for k := range rd.n {
		if !rd.fresh && r.unchanged(rect{1, r.pfTop + k, 1 + rd.ln[k], r.pfTop + k + 1}) {
			continue
		}
		putOver(r, v, own, 1, r.pfTop+k, rd.line[k][:rd.ln[k]], brightCyan)
	}
}
