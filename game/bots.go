package game

import "slices"

// This file holds the bots' policy. A bot is only input generated inside
// Step: decide runs for every live bot in think, and sets its direction
// (and, sometimes, a dash) for this tick from the grid and the records as
// they were when think began; settle then runs, in slot order, what
// depends on the others' choices.

// Bot tuning.
const (
	lookL     = 3  // pixels a bot wants free ahead in the direction it takes
	scanEvery = 16 // ticks between a bot's looks around (staggered by slot)

	// The box a bot looks for fruit and rivals in, along its heading and
	// across it: rows of the flat box are cheap to read, so a bot heading
	// left or right looks further.
	scanAlongH, scanAcrossH = 10, 1 // heading left or right: 21 x 3 pixels
	scanAlongV, scanAcrossV = 3, 3  // heading up or down: 7 x 7 pixels

	// A cut-off: the rival heads the same way as the bot, 2..cutAhead
	// pixels behind it and 1..cutSide lanes beside it, no more lanes than
	// pixels behind (so the bot reaches the rival's lane first).
	cutAhead, cutSide = 6, 2

	// dashFruit: a bold bot dashes towards fruit straight ahead within
	// this many pixels, one tick in dashOdds.
	dashFruit, dashOdds = 6, 4

	// roomCap bounds the free pixels room counts (see decide).
	roomCap = 16
)

// decide picks live bot s's direction for this tick (slot i, in part p),
// and sometimes a dash.
//
// When it reaches its fruit, and every scanEvery ticks while it has none,
// the bot looks around (see scan): the nearest fruit not behind it becomes
// its target and the nearest other head its rival. It scores going
// straight on (a little), towards the target, a random turn now and then
// (1 tick in 16 without a target) and, for a bold bot (half of them, drawn
// at each spawn), a cut-off of its rival (see cutoff); then it takes the
// best candidate (see pick). A bold bot whose dash is ready dashes when it
// cuts off a rival two lanes away, or one tick in dashOdds towards fruit
// straight ahead, when DashLen+1 pixels are free in front of it. Its
// chance draws come from botRand: they depend on the seed, the tick and
// the slot alone.
func (w *World) decide(p *part, i int, s *snake) {
	if w.scanDue(i, s) {
		w.scan(i, s)
	}
	rnd := w.botRand(i)
	dirs := [3]Dir{s.dir, left(s.dir), right(s.dir)}
	score := [3]int{1, 0, 0}
	if s.targetX >= 0 {
		for k, d := range dirs {
			dx, dy := delta(d) // dist wraps s.headX+dx etc. itself
			score[k] -= 4 * w.dist(s.headX+int32(dx), s.headY+int32(dy), s.targetX, s.targetY)
		}
	} else if r := rnd % 32; r < 2 {
		score[1+r] = 2
	}
	cut, lanes := -1, 0
	if s.rival >= 0 && s.bold {
		if cut, lanes = w.cutoff(s); cut > 0 {
			score[cut] += 1 << 20
		}
	}
	// candidates best first; ties keep the order straight, left, right.
	ord := [3]int{0, 1, 2}
	for a := 1; a < 3; a++ {
		for b := a; b > 0 && score[ord[b]] > score[ord[b-1]]; b-- {
			ord[b], ord[b-1] = ord[b-1], ord[b]
		}
	}
	s.cut, s.lanes = None, int8(lanes)
	if cut > 0 {
		s.cut = dirs[cut]
	}
	for k, o := range ord {
		s.pref[k], s.need[k] = dirs[o], lookL
		if o == cut {
			s.need[k] = int8(max(lookL, lanes+1))
		}
	}
	d, pn, px, py, ok := w.pick(p, s, false)
	if !ok {
		return // boxed in: straight on it goes
	}
	w.setDir(int32(i), s, d)
	if !s.bold || w.tick < s.dashReadyAt {
		return
	}
	dash := d == s.cut && lanes >= 2
	if !dash && s.targetX >= 0 && w.ahead(s, s.targetX, s.targetY) {
		dash = rnd>>8%dashOdds == 0
	}
	if !dash {
		return
	}
	if r, _ := w.run(pn, px, py, s.dir, DashLen+1); r <= DashLen {
		return
	}
	s.steps = DashLen
	s.dashReadyAt = w.tick + uint64(w.cfg.DashCooldown)
	w.touch(int32(i))
}

// botRand returns the random bits of slot i's decision this tick: a hash
// of the seed, the tick and the slot (splitmix64's finaliser), so a bot's
// chances do not depend on the order the bots decide in.
func (w *World) botRand(i int) uint64 {
	z := w.cfg.Seed ^ w.tick*0x9e3779b97f4a7c15 ^ uint64(i)*0xd1b54a32d192ed03
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// pick returns the first of bot s's candidates (s.pref, best first) whose
// next pixel is free (no body or head; with claimed, no other head aims
// there either) and that has s.need[k] free pixels in a row from there.
// When none has, it takes the free candidate with the most room behind
// it (a bounded flood fill), then the longest run, preferring one that
// ends beside a free pixel (a way out) over a dead end. It returns the
// direction and next pixel (index, column, row); false when no next pixel
// is free.
func (w *World) pick(p *part, s *snake, claimed bool) (d Dir, n, x, y int32, ok bool) {
	var short [3]struct {
		d    Dir
		n    int32
		x, y int32
		v    int
	}
	ns := 0
	for k, d := range s.pref {
		n, x, y := w.move(s.head, s.headX, s.headY, d)
		if px := w.load(n); px.Kind() >= Body || claimed && px&claimBits != 0 {
			continue
		}
		need := int(s.need[k])
		var r, v int
		if !claimed && d == s.dir && s.ahead2.Kind() < Body && s.ahead3.Kind() < Body {
			r = lookL // think loaded the pixels ahead, and nothing has moved since
		} else {
			r, v = w.run(n, x, y, d, need)
		}
		if r >= need {
			return d, n, x, y, true
		}
		short[ns].d, short[ns].n, short[ns].x, short[ns].y, short[ns].v = d, n, x, y, v
		ns++
	}
	if ns == 0 {
		return None, 0, 0, 0, false
	}
	// Every way is short: compare the room behind each (a bounded flood
	// fill), then the runs.
	best := -1
	for _, c := range short[:ns] {
		if v := 8*w.room(p, c.n, c.x, c.y, roomCap) + c.v; v > best {
			d, n, x, y, best = c.d, c.n, c.x, c.y, v
		}
	}
	return d, n, x, y, true
}

// again makes bot i, whose pixel another head aims at too, pick again
// from its candidates, this time passing over every pixel a head aims at;
// it keeps its pixel when no other is free. A bot that turns keeps its
// dash only if DashLen+1 pixels are free ahead of it in the new
// direction. It runs on the caller, in slot order.
func (w *World) again(i int) {
	s := &w.snakes[i]
	unit := Pixel(nUnit)
	if w.tick < s.protectedUntil {
		unit = pUnit
	}
	w.grid[s.next] -= unit
	d, pn, px, py, ok := w.pick(&w.parts[0], s, true)
	if !ok || d == s.dir {
		w.grid[s.next] += unit
		return
	}
	w.setDir(int32(i), s, d)
	w.aim(nil, i, 0)
	if s.steps > 1 {
		if r, _ := w.run(pn, px, py, d, DashLen+1); r <= DashLen {
			s.steps = 1
			for k := range w.parts {
				if j := slices.Index(w.parts[k].dashers, int32(i)); j >= 0 {
					w.parts[k].dashers = slices.Delete(w.parts[k].dashers, j, j+1)
				}
			}
		}
	}
}

// botDue reports whether dead bot s has something to do this tick: a
// respawn to queue, or to step aside (see botDead).
func (w *World) botDue(s *snake) bool {
	return !s.wantLife && (w.bots > w.want || w.tick >= s.deathTick+BotRespawn)
}

// botDead queues dead bot slot i's respawn when it is due, or retires it
// while there are more bots than wanted. It runs on the caller, in slot
// order.
func (w *World) botDead(i int32) {
	s := &w.snakes[i]
	if s.wantLife || w.bots > w.want && w.retireDead(i) {
		return
	}
	if w.tick >= s.deathTick+BotRespawn {
		s.wantLife = true
		w.spawnq = append(w.spawnq, i)
	}
}

// run counts the free pixels in a row from pixel n (free, at x, y) in
// direction d, up to need, and values the run: twice its length, plus one
// when it ends short of need beside a free pixel (a way out).
func (w *World) run(n, x, y int32, d Dir, need int) (r, v int) {
	r = 1
	for r < need {
		m, mx, my := w.move(n, x, y, d)
		if w.load(m).Kind() >= Body {
			break
		}
		n, x, y = m, mx, my
		r++
	}
	v = 2 * r
	if r < need {
		if a, _, _ := w.move(n, x, y, left(d)); w.load(a).Kind() < Body {
			v++
		} else if a, _, _ := w.move(n, x, y, right(d)); w.load(a).Kind() < Body {
			v++
		}
	}
	return r, v
}

// ahead reports whether (tx, ty) lies straight ahead of s's head in its
// direction, 1..dashFruit pixels away.
func (w *World) ahead(s *snake, tx, ty int32) bool {
	dx, dy := delta(s.dir)
	ox, oy := off(int(tx-s.headX), w.w), off(int(ty-s.headY), w.h)
	along, side := ox*dx+oy*dy, ox*dy+oy*dx
	return along >= 1 && along <= dashFruit && side == 0
}

// off maps a difference of coordinates onto -n/2..n/2-1 (the shortest way
// round the torus).
func off(a, n int) int {
	a = wrap(a, n)
	if a >= n-n/2 {
		a -= n
	}
	return a
}

// cutoff returns the candidate (1 left, 2 right) that turns s across its
// rival's path, and how many lanes away the rival's lane is; -1 when there
// is no cut-off to make: the rival must be alive, unprotected, heading the
// same way as s, 2..cutAhead pixels behind s and 1..cutSide lanes beside
// it, fewer lanes than pixels behind.
func (w *World) cutoff(s *snake) (int, int) {
	r := &w.snakes[s.rival]
	rdir := w.dir0[s.rival] // r's own decision may be under way
	ox, oy := off(int(s.headX-r.headX), w.w), off(int(s.headY-r.headY), w.h)
	if !r.alive || abs(ox)+abs(oy) > 2*cutAhead {
		s.rival = -1 // gone, or left behind: forget it
		return -1, 0
	}
	if rdir != s.dir || w.tick < r.protectedUntil {
		return -1, 0
	}
	ux, uy := delta(s.dir)
	along := ox*ux + oy*uy
	side := ox*abs(uy) + oy*abs(ux)
	if along < 2 || along > cutAhead || side == 0 || abs(side) > cutSide || abs(side) >= along {
		return -1, 0
	}
	// turn towards the rival's lane
	var t Dir
	switch {
	case ux != 0 && side > 0:
		t = Up
	case ux != 0:
		t = Down
	case side > 0:
		t = Left
	default:
		t = Right
	}
	if t == left(s.dir) {
		return 1, abs(side)
	}
	return 2, abs(side)
}

// scanDue reports whether bot s (slot i) looks around this tick (see
// decide): at its target, or every scanEvery ticks while it has none.
func (w *World) scanDue(i int, s *snake) bool {
	return (s.headX == s.targetX && s.headY == s.targetY) || s.targetX < 0 && (w.seq+uint64(i))%scanEvery == 0
}

// scanBox returns the half-width and half-height of the box a bot heading
// in d looks around in (see scan).
func scanBox(d Dir) (ax, ay int) {
	if d == Up || d == Down {
		return scanAcrossV, scanAlongV
	}
	return scanAlongH, scanAcrossH
}

// loadBox loads the first and last pixel of each row of bot s's scan box
// (think's first loop, so that scan finds the rows in the cache), and
// returns them ORed.
func (w *World) loadBox(s *snake) Pixel {
	ax, ay := scanBox(s.dir)
	x, y := int(s.headX), int(s.headY)
	var px Pixel
	for dy := -ay; dy <= ay; dy++ {
		px |= w.load(w.idx(x-ax, y+dy)) | w.load(w.idx(x+ax, y+dy))
	}
	return px
}

// scan looks around bot s (slot i): the nearest fruit in its box becomes
// its target (an earlier target is kept when there is none), the nearest
// other snake's head its rival (-1 when none). The box is flat for a bot
// heading left or right, taller for one heading up or down.
func (w *World) scan(i int, s *snake) {
	ax, ay := scanBox(s.dir)
	ux, uy := delta(s.dir)
	x, y := int(s.headX), int(s.headY)
	fx, fy, fd := -1, -1, 1<<30
	rival, rd := int32(-1), 1<<30
	for dy := -ay; dy <= ay; dy++ {
		row := int(w.idx(0, y+dy))
		for dx := -ax; dx <= ax; dx++ {
			px := x + dx
			if px < 0 {
				px += w.w
			} else if px >= w.w {
				px -= w.w
			}
			p := w.load(int32(row + px))
			if p == 0 {
				continue
			}
			switch p.Kind() {
			case Fruit:
				if d := abs(dx) + abs(dy); d < fd && d > 0 && dx*ux+dy*uy >= 0 {
					fx, fy, fd = px, row/w.w, d
				}
			case Head:
				if d := abs(dx) + abs(dy); d < rd && p.Slot() != i {
					rival, rd = int32(p.Slot()), d
				}
			}
		}
	}
	if fx >= 0 || s.headX == s.targetX && s.headY == s.targetY {
		s.targetX, s.targetY = int32(fx), int32(fy)
	}
	s.rival = rival
}

// room counts (with part p's queue), up to most (at most roomCap), the free pixels reachable
// from pixel n (free, at x, y) through free pixels, within 15 pixels of n
// in each direction: a bounded flood fill over the grid as it is.
func (w *World) room(p *part, n, x, y int32, most int) int {
	var seen [16]uint64 // bit (rx+16)*32 + ry+16 for offsets rx, ry from n
	q := p.roomQ[:0]
	seen[(16*32+16)>>6] |= 1 << ((16*32 + 16) & 63)
	q = append(q, roomNode{n, x, y, 0, 0})
	count := 1
	for h := 0; h < len(q) && count < most; h++ {
		c := q[h]
		for d := Up; d <= Left; d++ {
			dx, dy := delta(d)
			rx, ry := c.rx+int8(dx), c.ry+int8(dy)
			if rx < -15 || rx > 15 || ry < -15 || ry > 15 {
				continue
			}
			b := int(rx+16)*32 + int(ry+16)
			if seen[b>>6]&(1<<(b&63)) != 0 {
				continue
			}
			seen[b>>6] |= 1 << (b & 63)
			m, mx, my := w.move(c.i, c.x, c.y, d)
			if w.load(m).Kind() >= Body {
				continue
			}
			count++
			q = append(q, roomNode{m, mx, my, rx, ry})
		}
	}
	return min(count, most)
}

// roomNode is a pixel in room's queue: index, column, row, and offsets
// from the starting pixel.
type roomNode struct {
	i, x, y int32
	rx, ry  int8
}
