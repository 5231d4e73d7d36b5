package game

import (
	"runtime"
	"slices"
)

// Step advances the world by one tick; tick is the new tick number and must
// grow (a tick not above the previous one is ignored).
func (w *World) Step(tick uint64) {
	if tick <= w.tick {
		return
	}
	w.tick = tick
	w.seq++
	w.mk, w.qk = w.marks[w.seq%logN], w.quick[w.seq%logN]
	clear(w.mk)
	clear(w.qk)
	w.drain(botFill)
	w.spawnAll()
	maxSteps := w.think()
	for ph := 0; ph < maxSteps; ph++ {
		w.phase(ph)
	}
	w.topUpFruit(64 + w.cfg.Fruit/64)
	w.publish()
}

// drain applies the input queued since the last Step, then lets populate
// add at most fill bots. The queue's slots are cut into the parts, which
// apply the turns and dashes of their stretch on the workers (passDrain:
// each slot's input touches its own inbox and record alone) and leave to
// the caller, in queue order, the slots whose input changes what slots
// share: a leave, a join (and the eviction before it) and a respawn of a
// snake waiting for none. A slot left to the caller never keeps input for
// the next drain (it leaves, or its snake is not alive and its turns are
// dropped), so the slots kept are the parts' in queue order, whatever the
// parts, as on one worker.
func (w *World) drain(fill int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.drained = w.tick
	w.nslots = w.slots
	w.runPass(passDrain, 0)
	keep := w.scratch[:0]
	for k := range w.parts {
		keep = append(keep, w.parts[k].keep...)
	}
	for k := range w.parts {
		for _, slot := range w.parts[k].later {
			if w.input(slot) {
				keep = append(keep, slot)
			}
		}
	}
	w.dirty, w.scratch = append(w.dirty[:0], keep...), keep[:0]
	w.populate(fill)
	// Turn checks new turns against the current direction; bots see it
	// in dir0 while they decide.
	copy(w.heading[:w.nslots], w.dirs[:w.nslots])
	copy(w.dir0[:w.nslots], w.dirs[:w.nslots])
}

// drainPart applies the input of part p's stretch of the queue (k of the
// parts) that touches only its own slot, and lists in p.later, in queue
// order, the slots whose input drain applies itself, and in p.keep those
// with turns left for the next drain.
func (w *World) drainPart(p *part, k int) {
	n := len(w.dirty)
	p.keep, p.later = p.keep[:0], p.later[:0]
	for _, slot := range w.dirty[k*n/len(w.parts) : (k+1)*n/len(w.parts)] {
		b, s := &w.box[slot], &w.snakes[slot]
		if b.leave || b.evict || b.join || b.respawn && s.respawns() {
			p.later = append(p.later, slot)
			continue
		}
		b.respawn = false // a snake alive or waiting already: nothing to do
		if w.input(slot) {
			p.keep = append(p.keep, slot)
		}
	}
}

// input applies the input queued in slot's inbox and reports whether the
// slot keeps a turn for the next drain.
func (w *World) input(slot int32) (keep bool) {
	b := &w.box[slot]
	s := &w.snakes[slot]
	if b.leave {
		w.remove(slot)
		*b = inbox{gen: b.gen}
		w.free = append(w.free, slot)
		w.count--
		return false
	}
	if b.evict {
		b.evict = false
		w.remove(slot) // the bot whose slot a Join took
	}
	if b.join {
		b.join = false
		w.initSnake(slot, b)
	}
	if b.respawn {
		b.respawn = false
		if s.respawns() {
			s.wantLife = true
			w.spawnq = append(w.spawnq, slot)
		}
	}
	if b.dash {
		b.dash = false
		if s.alive {
			s.wantDash = true
		}
	}
	for b.nt > 0 {
		d := b.turns[0]
		b.turns[0] = b.turns[1]
		b.nt--
		if !s.alive {
			b.nt = 0
			break
		}
		if d != s.dir && d != reverse(s.dir) {
			w.setDir(slot, s, d)
			break
		}
	}
	if b.nt > 0 {
		return true
	}
	b.dirty = false
	return false
}

// respawns reports whether a respawn asked for s would queue it for a
// life: a snake in use, dead and not waiting already.
func (s *snake) respawns() bool { return s.used && !s.alive && !s.wantLife }

// setDir turns snake s, in slot i, to d: in its record and in dirs.
func (w *World) setDir(i int32, s *snake, d Dir) {
	s.dir, w.dirs[i] = d, d
}

func (w *World) initSnake(slot int32, b *inbox) {
	s := &w.snakes[slot]
	body, moveDir, moveStep := s.body, s.moveDir, s.moveStep
	*s = snake{id: b.id, name: b.name, bot: b.bot, used: true, body: body, killer: -1, targetX: -1, targetY: -1, rival: -1, wantLife: true,
		moveDir: moveDir, moveStep: moveStep, group: b.group}
	w.dirs[slot] = s.dir
	if g := b.group; g > 0 {
		if int(g) >= len(w.groups) {
			w.groups = append(w.groups, make([][]int32, int(g)+1-len(w.groups))...)
		}
		w.groupAt[slot] = int32(len(w.groups[g]))
		w.groups[g] = append(w.groups[g], slot)
	}
	w.touch(slot)
	w.spawnq = append(w.spawnq, slot)
	if b.bot {
		w.bots++
	} else {
		w.players++
	}
}

// remove takes a leaving snake out of the world.
func (w *World) remove(slot int32) {
	s := &w.snakes[slot]
	if !s.used {
		return
	}
	if s.alive {
		for k := 0; k < s.length; k++ {
			w.set(s.at(k), 0)
		}
	}
	if s.bot {
		w.bots--
	} else {
		w.players--
	}
	if g := s.group; g > 0 {
		m := w.groups[g]
		k, last := w.groupAt[slot], m[len(m)-1]
		m[k], w.groupAt[last] = last, k
		w.groups[g] = m[:len(m)-1]
	}
	if s.wantLife {
		for k, q := range w.spawnq {
			if q == slot {
				w.spawnq = append(w.spawnq[:k], w.spawnq[k+1:]...)
				break
			}
		}
	}
	body, moveDir, moveStep := s.body, s.moveDir, s.moveStep
	*s = snake{body: body, killer: -1, targetX: -1, targetY: -1, rival: -1, moveDir: moveDir, moveStep: moveStep}
	w.dirs[slot] = s.dir
	w.touch(slot)
}

// spawnTries bounds the places tried for one snake in one tick; the first
// nearTries of them are near the action (see spawnSpot).
const spawnTries, nearTries = 8, 4

// The ring around a live snake's head where a spawn near the action puts
// the new head: not within nearX columns and nearY rows of that head at
// once, and at most nearFarX columns and nearFarY rows from it for a bot,
// peopleFarX and peopleFarY for a person. A screen of an 80x24 terminal
// spans 40 x 22 pixels either side of its centre, so a person's ring is
// on the screen their camera starts with (the other head is in sight at
// once), and a bot's between half a screen and a screen and a half away.
const (
	nearX, nearY           = 20, 11
	peopleFarX, peopleFarY = 36, 19
	nearFarX, nearFarY     = 60, 33
)

// A random place counts as near the action when a live head is within
// sightX columns and sightY rows of it: on the screen of an 80x24 terminal
// centred there.
const sightX, sightY = 40, 22

// nearSpot returns a place in the ring reaching farX columns and farY rows
// around a live head of the last publish, chosen at random, wrapped onto
// the world.
func (w *World) nearSpot(r *dice, farX, farY int) (x, y int) {
	return w.ringSpot(r, w.heads[r.IntN(len(w.heads))], farX, farY)
}

// ringSpot returns a place in the ring reaching farX columns and farY rows
// around pixel a, chosen at random, wrapped onto the world.
func (w *World) ringSpot(r *dice, a int32, farX, farY int) (x, y int) {
	dy := r.IntN(2*farY+1) - farY
	var dx int
	if abs(dy) < nearY {
		k := r.IntN(2 * (farX - nearX + 1))
		dx = nearX + k/2
		if k&1 == 0 {
			dx = -dx
		}
	} else {
		dx = r.IntN(2*farX+1) - farX
	}
	return wrap(int(a)%w.w+dx, w.w), wrap(int(a)/w.w+dy, w.h)
}

// groupScan bounds the group mates groupSpot looks at for a live one.
const groupScan = 64

// groupSpot returns the place a spawn's try-th try puts the head of snake
// slot of a JoinNear group: for the first nearTries tries, a place in a
// person's ring around the head of a live snake of its group, the first
// alive of up to groupScan of the others from one chosen at random; ok is
// false otherwise (and for a snake of no group), and spawnSpot chooses.
func (w *World) groupSpot(r *dice, try int, slot int32) (x, y int, ok bool) {
	g := w.snakes[slot].group
	if g == 0 || try >= nearTries {
		return 0, 0, false
	}
	m := w.groups[g]
	if len(m) < 2 {
		return 0, 0, false
	}
	k := r.IntN(len(m))
	for n := 0; n < min(len(m), groupScan); n++ {
		o := m[(k+n)%len(m)]
		if o != slot && w.snakes[o].alive {
			x, y = w.ringSpot(r, w.snakes[o].head, peopleFarX, peopleFarY)
			return x, y, true
		}
	}
	return 0, 0, false
}

// spawnSpot returns the place a spawn's try-th try puts its head, and
// whether that is in the ring around a live head: for the first nearTries
// tries, a random place unless no live head is within sight of it
// (sightX, sightY), then a place in the ring around a random live head (a
// person's ring or a bot's); for the rest, a random place. So where the
// world is busy, spawns spread as evenly as snakes do, and where it is
// empty, they go where the others are.
func (w *World) spawnSpot(r *dice, try int, bot bool) (x, y int, ring bool) {
	x, y = r.IntN(w.w), r.IntN(w.h)
	if try < nearTries && len(w.heads) > 0 && !w.near.has(x, y, sightX, sightY) {
		if bot {
			x, y = w.nearSpot(r, nearFarX, nearFarY)
		} else {
			x, y = w.nearSpot(r, peopleFarX, peopleFarY)
		}
		return x, y, true
	}
	return x, y, false
}

// spawnBudget is the number of places all spawns together may try in one
// tick. Each try costs a cache miss or two on a big grid, and in a crowded
// world most tries fail, so without a bound the snakes waiting for a life
// would dominate the tick.
func (w *World) spawnBudget() int { return 1024 + w.cfg.MaxSnakes/8 }

// spawnAll places the snakes waiting for a life, first come first
// served, within the tick's spawn budget; the rest keep their place in the
// queue for the next tick. It runs in two steps. On the workers, each
// waiting snake (as many as the budget could reach, at least a try each)
// finds the first of its tries that fits the grid as the tick found it
// (find): its tries are drawn from its own dice, so what it finds does not
// depend on the others. Then, in queue order, each takes its place if the
// budget covers its tries and the place still fits after the spawns
// before it (clear again); the tries it spent come off the budget either
// way.
func (w *World) spawnAll() {
	q := w.spawnq
	budget := w.spawnBudget()
	w.found = w.found[:min(len(q), budget)]
	w.runPass(passSpawn, 0)
	keep := q[:0]
	for i, slot := range q {
		if s := &w.snakes[slot]; !s.used || s.alive || !s.wantLife {
			continue // not waiting (any more): a stale entry
		}
		if i >= len(w.found) || budget <= 0 {
			keep = append(keep, slot)
			continue
		}
		f := &w.found[i]
		if f.ok && budget >= int(f.tries) && w.clear(int(f.x), int(f.y), f.d) {
			w.place(slot, f)
		} else {
			keep = append(keep, slot)
		}
		budget -= min(budget, int(f.tries))
	}
	w.spawnq = keep
}

// spot is where a waiting snake's life may start (find): after tries
// tries (the one found included), when ok, with its head at x, y heading
// d, in colour, bold (a bot's).
type spot struct {
	x, y   int32
	tries  int8
	ok     bool
	d      Dir
	colour Colour
	bold   bool
}

// findPart finds the spots of part p's stretch of the spawn queue (as
// much of it as w.found covers).
func (w *World) findPart(k int) {
	n := len(w.found)
	for i := k * n / len(w.parts); i < (k+1)*n/len(w.parts); i++ {
		w.found[i] = w.find(w.spawnq[i])
	}
}

// dice draws the random numbers of one snake's spawn this tick:
// splitmix64 over a counter started from a hash of the seed, the tick and
// the slot, so that a spawn's tries depend on nothing another spawn of the
// tick draws.
type dice struct{ z uint64 }

func (w *World) dice(slot int32) dice {
	return dice{w.cfg.Seed ^ w.tick*0xd1b54a32d192ed03 ^ uint64(slot)*0x9e3779b97f4a7c15 ^ 0x5851f42d4c957f2d}
}

// IntN returns a number in 0..n-1 (0 < n < 2^32).
func (r *dice) IntN(n int) int {
	r.z += 0x9e3779b97f4a7c15
	z := r.z
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	return int((z >> 32) * uint64(n) >> 32)
}

// find returns the first of snake slot's spawnTries tries that fits the
// grid (clear), with the direction and colour survey gives it, or a spot
// that is not ok. It reads the grid and the snakes and writes nothing.
func (w *World) find(slot int32) spot {
	s := &w.snakes[slot]
	r := w.dice(slot)
	for try := 0; try < spawnTries; try++ {
		hx, hy, ok := w.groupSpot(&r, try, slot)
		if !ok {
			hx, hy, _ = w.spawnSpot(&r, try, s.bot)
		}
		d0 := Dir(1 + r.IntN(4))
		if !w.clear(hx, hy, d0) {
			continue
		}
		d, colour := w.survey(&r, hx, hy)
		if d != d0 && !w.clear(hx, hy, d) {
			d = d0
		}
		return spot{x: int32(hx), y: int32(hy), tries: int8(try + 1), ok: true, d: d, colour: colour, bold: r.IntN(2) == 0}
	}
	return spot{tries: spawnTries}
}

// place starts snake slot's life at spot f.
func (w *World) place(slot int32, f *spot) {
	s := &w.snakes[slot]
	hx, hy, d := int(f.x), int(f.y), f.d
	dx, dy := delta(d)
	s.colour = f.colour
	w.shrink(s)
	s.tail, s.length, s.grow = 0, 0, 0
	// the head is written first: a Body write of a slot followed by a
	// Head write of the same slot is a move, in the log (see set)
	w.set(w.idx(hx, hy), MakePixel(Head, int(slot), s.colour))
	for k := w.cfg.StartLen - 1; k >= 0; k-- {
		i := w.idx(hx-dx*k, hy-dy*k)
		s.push(i, int32(int(i)%w.w), int32(int(i)/w.w))
		if k > 0 {
			w.set(i, MakePixel(Body, int(slot), s.colour))
		}
	}
	w.setDir(slot, s, d)
	w.dir0[slot] = d
	s.alive, s.wantLife = true, false
	s.spawnTick = w.tick
	s.protectedUntil = w.tick + uint64(w.cfg.Protect)
	w.touch(slot)
	w.prot = append(w.prot, protection{slot, s.protectedUntil})
	s.killedBy, s.killer = "", -1
	s.targetX, s.targetY, s.rival = -1, -1, -1
	if s.bot {
		s.bold = f.bold
	}
	if s.length > s.best {
		s.best = s.length
	}
}

// clear reports whether a snake with its head at (x, y) heading d fits:
// its body runs back from the head over empty pixels, and no other snake
// has a pixel within 2 of it sideways, 2 behind it or 4 ahead of the head
// (fruit there is fine: it is food, not danger). The body line is checked
// first so most failures are cheap. Before it, pixels of the lines the
// check may read are loaded, so that their misses overlap rather than
// come one after the other behind the check's early exits: every pixel
// of a column, and both ends of each row's stretch of StartLen+6 pixels
// (every line of a stretch that spans two; one that spans three keeps
// its middle line's miss).
func (w *World) clear(x, y int, d Dir) bool {
	dx, dy := delta(d)
	var lines Pixel
	if dx == 0 { // a column: a line a row
		for k := -4; k < w.cfg.StartLen+2; k++ {
			lines |= w.grid[w.idx(x, y-dy*k)]
		}
	} else { // five rows: each row's stretch at both ends
		for o := -2; o <= 2; o++ {
			lines |= w.grid[w.idx(x+4*dx, y+o)] | w.grid[w.idx(x-dx*(w.cfg.StartLen+1), y+o)]
		}
	}
	runtime.KeepAlive(lines)
	for _, o := range [5]int{0, -1, 1, -2, 2} {
		for k := -4; k < w.cfg.StartLen+2; k++ {
			cx, cy := x-dx*k, y-dy*k
			p := w.grid[w.idx(cx+dy*o, cy+dx*o)]
			if p.Kind() >= Body || (p != 0 && o == 0 && k >= 0 && k < w.cfg.StartLen) {
				return false
			}
		}
	}
	return true
}

func delta(d Dir) (int, int) {
	switch d {
	case Up:
		return 0, -1
	case Down:
		return 0, 1
	case Left:
		return -1, 0
	}
	return 1, 0
}

func (w *World) idx(x, y int) int32 {
	return int32(wrap(y, w.h)*w.w + wrap(x, w.w))
}

func abs(a int) int {
	if a < 0 {
		return -a
	}
	return a
}

// surveyR is the radius of the box a spawn looks at.
const surveyR = 6

// survey looks at the box of radius surveyR around (x, y) and returns the
// direction away from the nearest body pixel (random when there is none)
// and the palette colour least used by the bodies in the box (ties broken
// from a random start).
func (w *World) survey(r *dice, x, y int) (Dir, Colour) {
	var n [16]int
	near, nx, ny := 1<<30, 0, 0
	for dy := -surveyR; dy <= surveyR; dy++ {
		row := int(w.idx(0, y+dy))
		for dx := -surveyR; dx <= surveyR; dx++ {
			px := x + dx
			if px < 0 {
				px += w.w
			} else if px >= w.w {
				px -= w.w
			}
			if p := w.grid[row+px]; p.Kind() >= Body {
				n[p.Colour()]++
				if d := abs(dx) + abs(dy); d < near {
					near, nx, ny = d, dx, dy
				}
			}
		}
	}
	var d Dir
	switch {
	case near == 1<<30:
		d = Dir(1 + r.IntN(4))
	case abs(nx) >= abs(ny) && nx > 0:
		d = Left
	case abs(nx) >= abs(ny):
		d = Right
	case ny > 0:
		d = Up
	default:
		d = Down
	}
	start := r.IntN(len(palette))
	best := palette[start]
	for k := range palette {
		if c := palette[(start+k)%len(palette)]; n[c] < n[best] {
			best = c
		}
	}
	return d, best
}

// move returns the pixel one step from (i at x, y) in direction d, wrapping,
// without dividing.
func (w *World) move(i, x, y int32, d Dir) (int32, int32, int32) {
	W, H := int32(w.w), int32(w.h)
	switch d {
	case Up:
		if y == 0 {
			return i + (H-1)*W, x, H - 1
		}
		return i - W, x, y - 1
	case Down:
		if y == H-1 {
			return i - (H-1)*W, x, 0
		}
		return i + W, x, y + 1
	case Left:
		if x == 0 {
			return i + W - 1, W - 1, y
		}
		return i - 1, x - 1, y
	}
	if x == W-1 {
		return i - (W - 1), 0, y
	}
	return i + 1, x + 1, y
}

// ray returns the 3 pixels ahead of s's head in its direction.
func (w *World) ray(s *snake) (a, b, c int32) {
	i, W := s.head, int32(w.w)
	switch s.dir {
	case Right:
		if s.headX+3 < W {
			return i + 1, i + 2, i + 3
		}
	case Left:
		if s.headX >= 3 {
			return i - 1, i - 2, i - 3
		}
	case Down:
		if s.headY+3 < int32(w.h) {
			return i + W, i + 2*W, i + 3*W
		}
	case Up:
		if s.headY >= 3 {
			return i - W, i - 2*W, i - 3*W
		}
	}
	a, x, y := w.move(i, s.headX, s.headY, s.dir)
	b, x, y = w.move(a, x, y, s.dir)
	c, _, _ = w.move(b, x, y, s.dir)
	return a, b, c
}

// think runs the dash requests, the bots' decisions and phase 0's aiming
// (see aim) for every snake, part by part (see thinkPart), then settles
// in slot order what the parts left, and returns the number of phases
// this tick needs.
func (w *World) think() int {
	w.split()
	w.runPass(passThink, 0)
	w.settle()
	w.ndash = 0
	for k := range w.parts {
		w.ndash += len(w.parts[k].dashers)
	}
	if w.ndash > 0 {
		return DashLen
	}
	return 1
}

// thinkPart runs think over part p's slots, batch by batch. In each batch
// a first tight loop settles how far each snake moves and loads the
// pixels ahead of every live snake (three for a bot, one for a person),
// and the rows of the box of each bot that looks around this tick, so the
// cache misses overlap; the second decides and aims while those
// pixels are still in the cache. A bot decides from the grid's pixels
// alone, not from where other heads aim this tick, so that no part waits
// on another (settle sorts out two heads aiming at one pixel).
func (w *World) thinkPart(p *part) {
	const batch = 64
	p.dashers, p.conflicts, p.dead = p.dashers[:0], p.conflicts[:0], p.dead[:0]
	var warm Pixel // the pixels loaded only to be in the cache
	for base := p.lo; base < p.hi; base += batch {
		end := min(base+batch, p.hi)
		for i := base; i < end; i++ {
			s := &w.snakes[i]
			s.steps = 0
			if !s.alive {
				continue
			}
			s.steps = 1
			if s.wantDash {
				s.wantDash = false
				if w.tick >= s.dashReadyAt {
					s.steps = DashLen
					s.dashReadyAt = w.tick + uint64(w.cfg.DashCooldown)
					w.touch(int32(i))
				}
			}
			if s.bot {
				// the pixels a bot going straight on looks at
				a, b, c := w.ray(s)
				warm |= w.load(a)
				s.ahead2, s.ahead3 = w.load(b), w.load(c)
				if w.scanDue(i, s) {
					warm |= w.loadBox(s)
				}
			} else {
				warm |= w.loadAhead(s) // which aim's claim would otherwise wait for alone
			}
		}
		for i := base; i < end; i++ {
			s := &w.snakes[i]
			if s.bot && s.used {
				if s.alive {
					w.decide(p, i, s)
				} else if w.botDue(s) {
					p.dead = append(p.dead, int32(i))
				}
			}
			if s.steps > 1 {
				p.dashers = append(p.dashers, int32(i))
			}
			w.aim(p, i, 0)
		}
	}
	runtime.KeepAlive(warm)
}

// settle finishes think in slot order: the dead bots respawn or retire
// (see botDead), then each bot whose pixel another head also aims at,
// a person or a bot of a lower slot, picks again (see again).
func (w *World) settle() {
	for k := range w.parts {
		for _, i := range w.parts[k].dead {
			w.botDead(i)
		}
	}
	r := w.repick[:0]
	for k := range w.parts {
		for _, c := range w.parts[k].conflicts {
			w.share(c)
			r = w.yielders(c, r)
		}
	}
	slices.Sort(r)
	r = slices.Compact(r)
	for _, i := range r {
		w.again(int(i))
	}
	w.repick = r[:0]
}

// yielders appends to r the bots aiming at pixel c that yield it: those
// with another head aiming there that is a person's or a lower slot's.
func (w *World) yielders(c int32, r []int32) []int32 {
	var who [4]int32
	n := 0
	x, y := c%int32(w.w), c/int32(w.w)
	for d := Up; d <= Left; d++ {
		m, _, _ := w.move(c, x, y, d)
		p := w.grid[m]
		if p.Kind() != Head {
			continue
		}
		if f := &w.snakes[p.Slot()]; f.moved && !f.wait && f.next == c {
			who[n] = int32(p.Slot())
			n++
		}
	}
	for a := 0; a < n; a++ {
		if !w.snakes[who[a]].bot {
			continue
		}
		for b := 0; b < n; b++ {
			if b != a && (!w.snakes[who[b]].bot || who[b] < who[a]) {
				r = append(r, who[a])
				break
			}
		}
	}
	return r
}

// dist is the wrapped Manhattan distance between two points.
func (w *World) dist(ax, ay, bx, by int32) int {
	dx, dy := abs(int(ax-bx)), abs(int(ay-by))
	dx = min(dx, w.w-dx)
	dy = min(dy, w.h-dy)
	return dx + dy
}

// phase moves every snake with more than ph steps this tick by one pixel,
// simultaneously (see docs/RULES.md), in five passes over the parts:
// aim (phase 0 aims in think), contest, collide, leave and advance. Phase 0
// visits every slot; later phases only the dashing snakes (think lists
// them in the parts' dashers), since every other snake's moved flag is
// false after phase 0.
func (w *World) phase(ph int) {
	if ph > 0 {
		w.runPass(passAim, ph)
	}
	w.runPass(passContest, ph)
	w.runPass(passCollide, ph)
	w.logged(passLeave, ph)
	w.logged(passAdvance, ph)
	for k := range w.parts {
		p := &w.parts[k]
		w.fruit += p.fruit
		for _, r := range p.kills {
			if r.KillerSlot >= 0 {
				w.snakes[r.KillerSlot].kills++
				w.touch(int32(r.KillerSlot))
			}
			w.views.AddKill(r)
		}
	}
}

// slots returns how many snakes part p visits in phase ph, and the k-th
// of them is p.slot(ph, k).
func (p *part) slots(ph int) int {
	if ph > 0 {
		return len(p.dashers)
	}
	return p.hi - p.lo
}

func (p *part) slot(ph, k int) int {
	if ph > 0 {
		return int(p.dashers[k])
	}
	return p.lo + k
}

// contest is a phase's step 2: contested protected snakes wait; contested
// normal heads that still share a pixel meet head-on; growth decides
// whether tails leave. It reads the claims and writes only p's snakes.
func (w *World) contest(p *part, ph int) {
	for k, n := 0, p.slots(ph); k < n; k++ {
		i := p.slot(ph, k)
		s := &w.snakes[i]
		if !s.moved || s.wait {
			continue
		}
		c := s.nextPx // phase 0: its claim alone, the pixel otherwise unchanged since aim
		if ph > 0 || s.shared {
			c = w.grid[s.next]
			s.nextPx = c
		}
		np, pp := c&nMask/nUnit, c&pMask/pUnit
		if w.tick < s.protectedUntil {
			if np > 0 || pp > 1 {
				s.wait = true
				w.touchQuick(int32(i))
				continue
			}
		} else if np > 1 {
			s.headOn, s.killer = true, w.partner(i)
		}
		s.tailLeaves = s.grow == 0
		if !s.tailLeaves {
			s.grow--
		}
		s.tailPixel = s.at(0)
	}
}

// collide is a phase's step 3: collisions against the start of the phase
// (a leaving tail is free). It reads the grid and writes only p's snakes;
// leave then empties the tails.
func (w *World) collide(p *part, ph int) {
	for k, n := 0, p.slots(ph); k < n; k++ {
		i := p.slot(ph, k)
		s := &w.snakes[i]
		if !s.moved {
			continue
		}
		if s.wait {
			s.clearNext = !s.blocked // a blocked snake claimed nothing
			continue
		}
		px := s.nextPx // nothing writes the grid between contest and collide
		tail := false  // s.next is a tail that leaves this phase
		if px.Kind() == Body {
			f := &w.snakes[px.Slot()]
			tail = f.moved && !f.wait && f.tailLeaves && f.tailPixel == s.next
		}
		if w.tick >= s.protectedUntil && !s.headOn && !tail && px.Kind() >= Body {
			o := int32(px.Slot())
			f := &w.snakes[o]
			if px.Kind() == Head && o != int32(i) && f.moved && !f.wait && f.next == s.head {
				s.die, s.headOn, s.killer = true, true, o // swap
			} else {
				s.die, s.killer = true, o
			}
		}
		if s.headOn {
			s.die = true
		}
		// a mover's Head clears its pixel's claims, and so does a leaving
		// tail; any other pixel aimed at is cleared by leave
		s.clearNext = s.die && !tail
	}
}

// leave is a phase's step 3b: the claims on the pixels nobody enters are
// cleared, and each mover's tail leaves (the snake's own included: it
// leaves after the snake's check). The pixels it writes are p's snakes'
// tails, and pixels aimed at that are no leaving tail; two snakes may
// clear one pixel, atomically then.
func (w *World) leave(p *part, ph int) {
	for k, n := 0, p.slots(ph); k < n; k++ {
		i := p.slot(ph, k)
		s := &w.snakes[i]
		if !s.moved {
			continue
		}
		if s.clearNext {
			s.clearNext = false
			w.unclaim(s.next)
		}
		if s.tailLeaves && !s.wait {
			w.put(p, s.tailPixel, 0)
			s.tail = (s.tail + 1) & (len(s.body) - 1)
			s.length--
		}
	}
}

// advance is a phase's step 4: the dead turn into fruit, the others
// advance; nobody has moved in the next phase until aim says so. The
// pixels it writes are the movers' own: a head enters a pixel no other
// head enters and that is no dead snake's body, since a head entering a
// body dies, and two entering one pixel both die or wait.
func (w *World) advance(p *part, ph int) {
	p.kills, p.fruit = p.kills[:0], 0
	for k, n := 0, p.slots(ph); k < n; k++ {
		i := p.slot(ph, k)
		s := &w.snakes[i]
		if !s.moved || s.wait {
			s.moved = false
			continue
		}
		s.moved = false
		if s.die {
			w.kill(p, s, i)
			continue
		}
		w.putMove(p, s.head, MakePixel(Body, i, s.colour), s.dir) // then Head at next
		// leave empties tails and claims, never fruit, so next still
		// holds what contest read
		if s.nextPx.Kind() == Fruit {
			p.fruit--
			s.grow += FruitGrow
		}
		w.put(p, s.next, MakePixel(Head, i, s.colour))
		if s.length == len(s.body) {
			w.grow(s)
		}
		s.push(s.next, s.nextX, s.nextY)
		s.moveDir, s.moveStep = s.dir, uint32(w.seq)
		if !s.tailLeaves { // it grew
			w.touchQuick(int32(i))
			if s.length > s.best {
				s.best = s.length
			}
		}
	}
}

// kill ends snake s (slot i) in this phase: its body after the tail turns
// partly into fruit, and the death goes into p (phase credits the killer).
func (w *World) kill(p *part, s *snake, i int) {
	start := 0
	if s.tailLeaves {
		s.length++ // report the length the snake had
		s.tail = (s.tail - 1) & (len(s.body) - 1)
		start = 1
	}
	for k := start; k < s.length; k++ {
		if (k-start)%2 == 0 {
			w.put(p, s.at(k), MakePixel(Fruit, 0, 0))
			p.fruit++
		} else {
			w.put(p, s.at(k), 0)
		}
	}
	s.alive = false
	s.deathTick = w.tick
	s.killedBy = ""
	w.touch(int32(i))
	r := Kill{Tick: w.tick, Victim: s.name, VictimSlot: i, VictimBot: s.bot, Length: s.length, KillerSlot: -1, HeadOn: s.headOn, At: w.point(s.head)}
	if s.killer >= 0 && s.killer != int32(i) {
		k := &w.snakes[s.killer]
		s.killedBy = k.name
		if s.headOn {
			r.Other = k.name
		} else {
			r.Killer, r.KillerSlot, r.KillerBot = k.name, int(s.killer), k.bot
		}
	}
	p.kills = append(p.kills, r)
}

// open reports whether a protected head may enter pixel i.
func (w *World) open(i int32) bool { return w.load(i).Kind() < Body }

// aim sets where snake i heads in phase ph and counts its claim on that
// pixel; protected snakes steer around obstacles or wait. In phase 0 a
// claim that finds the pixel claimed already goes into p's conflicts.
func (w *World) aim(p *part, i, ph int) {
	s := &w.snakes[i]
	s.moved = s.alive && int(s.steps) > ph
	if !s.moved {
		return
	}
	s.wait, s.blocked, s.die, s.headOn, s.shared, s.killer = false, false, false, false, false, -1
	s.next, s.nextX, s.nextY = w.move(s.head, s.headX, s.headY, s.dir)
	prot := w.tick < s.protectedUntil
	if prot && !w.open(s.next) {
		if n, x, y := w.move(s.head, s.headX, s.headY, left(s.dir)); w.open(n) {
			w.setDir(int32(i), s, left(s.dir))
			s.next, s.nextX, s.nextY = n, x, y
		} else if n, x, y := w.move(s.head, s.headX, s.headY, right(s.dir)); w.open(n) {
			w.setDir(int32(i), s, right(s.dir))
			s.next, s.nextX, s.nextY = n, x, y
		} else {
			s.wait, s.blocked = true, true
			w.touchQuick(int32(i))
			return
		}
	}
	unit := Pixel(nUnit)
	if prot {
		unit = pUnit
	}
	c := w.claim(s.next, unit)
	s.nextPx = c
	if ph == 0 && claims(c) > 1 {
		if p != nil {
			p.conflicts = append(p.conflicts, s.next)
		} else {
			w.share(s.next) // again's claim, after settle's
		}
	}
}

// aimDashers runs phase ph's aim (ph > 0) over part p's dashers, batch by
// batch: a first loop loads the pixel ahead of each dasher still moving,
// so that their cache misses overlap, and the second aims.
func (w *World) aimDashers(p *part, ph int) {
	const batch = 64
	var warm Pixel
	for b := 0; b < len(p.dashers); b += batch {
		ds := p.dashers[b:min(b+batch, len(p.dashers))]
		for _, i := range ds {
			if s := &w.snakes[i]; s.alive && int(s.steps) > ph {
				warm |= w.loadAhead(s)
			}
		}
		for _, i := range ds {
			w.aim(p, int(i), ph)
		}
	}
	runtime.KeepAlive(warm)
}

// loadAhead loads the pixel ahead of s's head in its direction, the one
// aim claims, and returns it: a load only to have its line in the cache
// (the caller keeps the result alive with runtime.KeepAlive, as clear
// does its own loads).
func (w *World) loadAhead(s *snake) Pixel {
	n, _, _ := w.move(s.head, s.headX, s.headY, s.dir)
	return w.load(n)
}

// share marks every head aiming at pixel c as shared: contest must load
// c's claims, which its claim's own value may not count in full.
func (w *World) share(c int32) {
	x, y := c%int32(w.w), c/int32(w.w)
	for d := Up; d <= Left; d++ {
		m, _, _ := w.move(c, x, y, d)
		if p := w.grid[m]; p.Kind() == Head {
			if f := &w.snakes[p.Slot()]; f.moved && !f.wait && f.next == c {
				f.shared = true
			}
		}
	}
}

// partner returns the slot of another unprotected head entering the same
// pixel as snake i this phase (head-on), or -1.
func (w *World) partner(i int) int32 {
	s := &w.snakes[i]
	for d := Up; d <= Left; d++ {
		n, _, _ := w.move(s.next, s.nextX, s.nextY, d)
		p := w.grid[n]
		if p.Kind() != Head || p.Slot() == i {
			continue
		}
		// protection first: a protected snake's wait may change in this pass
		if f := &w.snakes[p.Slot()]; w.tick >= f.protectedUntil && f.moved && !f.wait && f.next == s.next {
			return int32(p.Slot())
		}
	}
	return -1
}

// topUpFruit adds up to max fruit at random empty pixels towards the target.
func (w *World) topUpFruit(max int) {
	need := min(w.cfg.Fruit-w.fruit, max)
	for k := 0; k < need; k++ {
		for try := 0; try < 4; try++ {
			i := int32(w.rng.IntN(len(w.grid)))
			if w.grid[i] == 0 {
				w.set(i, MakePixel(Fruit, 0, 0))
				w.fruit++
				break
			}
		}
	}
}

// rank fills dst (one SnakeInfo per slot) and shield (View.Shield, one bit
// a slot), the ranks, the leaderboard, the best snake, the lists of heads
// and eyes and the index of heads near places, without allocating. dst
// holds the records of step since (0: none): only those the steps after
// since marked (touch, touchQuick) are written again. It works in
// two passes over the parts: one counts the live snakes by length (a
// counting sort, the parts' counts then added up), and one fills, each
// part its own slots and its own stretch of the lists (see rankPart);
// what it finds for the leaderboard and the best is merged in part
// order, which is slot order.
func (w *World) rank(dst []SnakeInfo, heads []Point, shield []uint64, since uint64) {
	w.split()
	w.runPass(passCount, 0)
	r := &w.views.rank
	r.reset()
	live, eyes := 0, 0
	for k := range w.parts {
		p := &w.parts[k]
		r.add(&p.lens)
		p.liveAt, p.eyeAt = live, eyes
		live += p.live
		eyes += p.seen
	}
	r.sum()
	// leaderboard threshold: the smallest length still in the top N.
	thr := 0
	for l := r.longest; l >= 1; l-- {
		if r.above(l-1) >= TopN || l == 1 {
			thr = l
			break
		}
	}
	w.heads, w.eyes = w.heads[:live], w.eyes[:eyes]
	w.near.size(live)
	w.rdst, w.rheads, w.rshield, w.rthr, w.rsince = dst, heads, shield, thr, since
	w.runPass(passRank, 0)
	w.rdst, w.rheads, w.rshield = nil, nil, nil
	w.near.build()
	w.ntop = 0
	ties := 0
	for k := range w.parts {
		p := &w.parts[k]
		for _, c := range p.cand {
			if w.ntop < TopN && (c.Length > thr || r.above(thr)+ties < TopN) {
				if c.Length == thr {
					ties++
				}
				w.top[w.ntop] = c
				w.ntop++
			}
		}
		if p.best.Length > w.best.Length {
			w.best = p.best
		}
	}
	// insertion sort of at most TopN entries: longer first, then lower slot.
	t := w.top[:w.ntop]
	for a := 1; a < len(t); a++ {
		for b := a; b > 0 && t[b].Length > t[b-1].Length; b-- {
			t[b], t[b-1] = t[b-1], t[b]
		}
	}
}

// countPart is rank's first pass over part p: its live snakes counted
// by length, and its live snakes and live players.
func (w *World) countPart(p *part) {
	p.lens.reset()
	p.live, p.seen = 0, 0
	for i := p.lo; i < p.hi; i++ {
		if s := &w.snakes[i]; s.alive {
			p.lens.count(s.length)
			p.live++
			if !s.bot {
				p.seen++
			}
		}
	}
}

// rankPart is rank's second pass over part p: its slots' SnakeInfos,
// view heads and shield words, its live heads and eyes in their stretches
// of the world's lists (from p.liveAt and p.eyeAt), and, in slot order, its leaderboard
// candidates (every snake longer than the threshold and the first TopN
// at it: enough for any leaderboard) and its first snake longer than any
// before it and the world's best.
func (w *World) rankPart(p *part) {
	dst, heads, shield, thr := w.rdst, w.rheads, w.rshield, w.rthr
	clear(shield[p.lo/64 : (p.hi+63)/64])
	h, e := p.liveAt, p.eyeAt
	p.cand = p.cand[:0]
	p.best = w.best
	ties := 0
	var redo uint64 // the slots of i's word whose records are written
	for i := p.lo; i < p.hi; i++ {
		if i == p.lo || i%64 == 0 {
			redo = w.redo(i / 64)
		}
		s := &w.snakes[i]
		in := &dst[i]
		write := redo>>(i%64)&1 != 0
		if !s.used {
			if write {
				*in = SnakeInfo{}
			}
			heads[i] = Point{}
			continue
		}
		if s.alive {
			w.heads[h] = s.head
			w.near.put(h, s.headX, s.headY)
			h++
			if !s.bot {
				w.eyes[e] = eye{s.headX, s.headY}
				e++
			}
			if s.length > thr || s.length == thr && ties < TopN {
				if s.length == thr {
					ties++
				}
				p.cand = append(p.cand, Entry{Slot: i, Name: s.name, Length: s.length})
			}
			if s.length > p.best.Length {
				p.best = Entry{Slot: i, Name: s.name, Length: s.length}
			}
		}
		if w.tick < s.protectedUntil {
			shield[i/64] |= 1 << (uint(i) % 64)
		}
		if write {
			*in = s.info()
		}
		heads[i] = s.headPoint()
	}
}

// redo returns the bits of slot word k (slots 64k to 64k+63) whose
// records rankPart writes: every slot when the records hold nothing
// (rsince 0), else those the steps after rsince marked (touch,
// touchQuick; a slot put in use is marked too).
func (w *World) redo(k int) uint64 {
	if w.rsince == 0 {
		return ^uint64(0)
	}
	var m uint64
	for s := w.rsince + 1; s <= w.seq; s++ {
		m |= w.marks[s%logN][k] | w.quick[s%logN][k]
	}
	return m
}

// info returns s's record as a view shows it.
func (s *snake) info() SnakeInfo {
	return SnakeInfo{
		ID: s.id, Name: s.name, Colour: s.colour, Bot: s.bot, Used: true,
		Alive: s.alive, Length: s.length, Kills: s.kills,
		SpawnTick: s.spawnTick, DeathTick: s.deathTick, ProtectedUntil: s.protectedUntil,
		DashReadyAt: s.dashReadyAt, KilledBy: s.killedBy, BestLength: s.best,
	}
}
