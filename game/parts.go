package game

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// This file splits a step's work over workers. The slots are cut into
// parts of consecutive slots (partsPerWorker a worker), each a multiple
// of 64 long (so the slots' mark words are one part's), and each pass of
// the step runs its parts at once, each worker taking the next part not
// yet taken, and ends when all are done. Within a pass a part
// writes only its own snakes' records and grid pixels no other part
// touches in that pass, but for claims, whose adds (in think and aim) and
// clearing (in leave) are atomic: the outcome does not depend on their
// order. A pass whose parts add claims reads the grid atomically too.
// Bots decide from what no part writes during think. What a pass does to
// others (grid writes to log, deaths, kill credits, fruit) goes into its
// part and is merged after the pass in part order, which is slot order,
// and what depends on several bots' choices is settled on the caller in
// slot order. So a step does what it would do with one part, whatever the
// parts. A publish's replay into a view buffer runs in bands of tile rows
// the same way, and its records and ranks in two passes over the parts
// (rank): one counts each part's snakes by length, the other fills each
// part's records and its stretch of the lists of heads, from offsets the
// counts give.

// pass names the work a part does in one pass of a step.
type pass uint8

const (
	passThink   pass = iota // think: dashes, the bots' decisions, phase 0's aims
	passAim                 // phase step 1 after phase 0: aims
	passContest             // phase step 2: contested pixels, growth
	passCollide             // phase step 3: collisions
	passLeave               // phase step 3b: claims cleared, tails leaving
	passAdvance             // phase step 4: deaths and moves
	passPublish             // a publish's replay into a view buffer, a band of rows a part (see Views.band)
	passCount               // a publish's count of the live snakes by length (see rank)
	passRank                // a publish's records, ranks and lists of heads (see rank)
	passSpawn               // the spots of the snakes waiting for a life, a stretch of the queue a part (see spawnAll)
	passDrain               // the input queued since the last step, a stretch of the queue a part (see drain)
)

// part is one share of a step: slots lo..hi-1, and what its
// passes leave for the step to merge.
type part struct {
	lo, hi    int
	log       []Write    // the pass's grid writes, in slot order (part 0 appends to the world's log itself)
	dashers   []int32    // its slots dashing this tick, in slot order
	conflicts []int32    // pixels its phase 0 aims found claimed by another head too
	dead      []int32    // dead bots with something to do (see botDue)
	keep      []int32    // its stretch of the input queue's slots with turns left, in queue order (drain)
	later     []int32    // its stretch's slots whose input drain applies itself, in queue order
	kills     []Kill     // the pass's deaths, in slot order
	fruit     int        // fruit the pass added (deaths) less the fruit eaten
	roomQ     []roomNode // the bots' flood-fill queue (see room), 4*roomCap long

	lens          ranker  // its live snakes by length (rank)
	live, seen    int     // its live snakes and live players (rank)
	liveAt, eyeAt int     // where its heads and eyes go in the world's lists (rank)
	cand          []Entry // its leaderboard candidates, in slot order (rank)
	best          Entry   // its longest snake longer than the world's best, the first of them (rank)

	_ [64]byte // keeps the parts' counters off each other's cache lines
}

func (p *part) init(capacity, parts int) {
	per := (capacity+parts-1)/parts + 64
	p.log = make([]Write, 0, 4*per+1024)
	p.dashers = make([]int32, 0, per)
	p.conflicts = make([]int32, 0, 256)
	p.dead = make([]int32, 0, per)
	p.keep = make([]int32, 0, per)
	p.later = make([]int32, 0, 256)
	p.kills = make([]Kill, 0, 64)
	p.roomQ = make([]roomNode, 0, 4*roomCap)
	p.lens = ranker{longer: make([]int32, 512)}
	p.cand = make([]Entry, 0, 2*TopN)
}

// split cuts the slots in use into the parts: as many 64-slot words to
// each as can be, the first parts one fewer when they do not divide.
func (w *World) split() {
	n := len(w.parts)
	words := (w.nslots + 63) / 64
	for k := range w.parts {
		p := &w.parts[k]
		p.lo, p.hi = min(k*words/n*64, w.nslots), min((k+1)*words/n*64, w.nslots)
	}
}

// runPass runs pass p (of phase ph) over every part: on the workers and the
// calling goroutine at once when the world has a crew and the pass has
// at least Config.ParallelFrom snakes to move, else one part after the other on the
// caller, with the same result.
func (w *World) runPass(p pass, ph int) {
	w.pass, w.ph = p, ph
	if w.crew == nil && w.workers > 1 && !w.closed {
		w.crew = startCrew(w, w.workers)
	}
	c := w.crew
	n := w.nslots
	if ph > 0 {
		n = w.ndash
	}
	if c == nil || n < w.minPar {
		w.par = false
		for k := range w.parts {
			w.runPart(k)
		}
		return
	}
	w.par = true
	c.start(w)
	w.runParts(c)
	c.wait()
	w.par = false
}

// partsPerWorker is how many parts a pass is cut into for each worker:
// a worker takes the next part not yet taken until none is left, so a
// worker the machine holds up (another process on its core, the Go
// scheduler running something else on its P) holds up its pass by one
// part, not by a whole worker's share, and the others take what it would
// have. Sixteen stepped 100,000 snakes on two workers 3-7 % faster than
// four (docs/BENCHMARKS.md, "The game's tick on workers").
const partsPerWorker = 16

// setWorkers gives the world n workers (Config.Workers; 0 is 1) and the
// parts for them: one for one worker, partsPerWorker a worker for more.
// A world with a crew must Close it first.
func (w *World) setWorkers(n int) {
	w.cfg.Workers, w.workers = n, max(n, 1)
	parts := 1
	if w.workers > 1 {
		parts = w.workers * partsPerWorker
	}
	w.parts = make([]part, parts)
	for k := range w.parts {
		w.parts[k].init(w.cfg.MaxSnakes, parts)
	}
	w.views.setBands(parts, w.publishBands)
}

// runParts runs parts of the current pass, each the next not yet taken,
// until every part is taken.
func (w *World) runParts(c *crew) {
	for {
		k := int(c.taken.Add(1)) - 1
		if k >= len(w.parts) {
			return
		}
		w.runPart(k)
	}
}

// DefaultParallelFrom is Config.ParallelFrom's default: for fewer snakes
// the workers cost more than they save (two workers were measured slower
// than one at 10,000 and 30,000 bots, and 1.5 times as fast at 100,000;
// see docs/BENCHMARKS.md).
const DefaultParallelFrom = 50000

// runPart runs the current pass over part k.
func (w *World) runPart(k int) {
	p := &w.parts[k]
	switch w.pass {
	case passThink:
		w.thinkPart(p)
	case passAim:
		w.aimDashers(p, w.ph)
	case passContest:
		w.contest(p, w.ph)
	case passCollide:
		w.collide(p, w.ph)
	case passLeave:
		w.leave(p, w.ph)
	case passAdvance:
		w.advance(p, w.ph)
	case passPublish:
		w.views.band(k, len(w.parts))
	case passCount:
		w.countPart(p)
	case passRank:
		w.rankPart(p)
	case passSpawn:
		w.findPart(k)
	case passDrain:
		w.drainPart(p, k)
	}
}

// publishBands runs a publish's replay on the parts (see Views.setBands).
func (w *World) publishBands() { w.runPass(passPublish, 0) }

// logged runs pass p, whose parts write the grid, and appends their
// writes to the step's log in part order.
func (w *World) logged(p pass, ph int) {
	w.parts[0].log = w.chg
	for k := 1; k < len(w.parts); k++ {
		w.parts[k].log = w.parts[k].log[:0]
	}
	w.runPass(p, ph)
	w.chg = w.parts[0].log
	w.parts[0].log = nil
	for k := 1; k < len(w.parts); k++ {
		w.chg = append(w.chg, w.parts[k].log...)
	}
}

// crew is the goroutines that run a pass's parts beside the caller.
// Between passes a worker spins on the count of passes for up to handOff
// before it sleeps, and the caller spins as long for the workers to end a
// pass: asleep, a worker here took about 150 us to start on a pass handed
// to it, and the caller 40-270 us to go on after the last worker ended,
// against passes of 0.3-6 ms at 100,000 snakes. A worker holds the world
// only while it runs a pass (the crew's world is nil between passes), so
// a world nobody holds is collected, and its cleanup stops the crew.
type crew struct {
	passes atomic.Uint64         // passes started; each worker runs every one
	world  atomic.Pointer[World] // the running pass's world; nil between passes
	taken  atomic.Int32          // the parts of the running pass taken so far (see runParts)
	left   atomic.Int32          // workers not done with the running pass
	stop   atomic.Bool           // the workers end (close)
	asleep []atomic.Bool         // asleep[k]: worker k waits on wake[k]; whoever clears it sends
	wake   []chan struct{}
	idle   atomic.Bool // the caller waits on done; whoever clears it sends
	done   chan struct{}
	wg     sync.WaitGroup
}

// handOff is how long a worker waits for the next pass, or the caller for
// the workers, by spinning before it sleeps: longer than most of the
// caller's work between two passes of a step, short beside a tick.
const handOff = time.Millisecond

func startCrew(w *World, n int) *crew {
	c := &crew{asleep: make([]atomic.Bool, n), wake: make([]chan struct{}, n), done: make(chan struct{}, 1)}
	for k := 1; k < n; k++ {
		c.wake[k] = make(chan struct{}, 1)
		c.wg.Add(1)
		go c.worker(k)
	}
	runtime.AddCleanup(w, func(c *crew) { c.close() }, c)
	return c
}

// start hands the workers w's current pass.
func (c *crew) start(w *World) {
	c.taken.Store(0)
	c.left.Store(int32(len(c.wake) - 1))
	c.world.Store(w)
	c.passes.Add(1)
	c.rouse()
}

// rouse wakes the workers that sleep.
func (c *crew) rouse() {
	for k := 1; k < len(c.wake); k++ {
		if c.asleep[k].CompareAndSwap(true, false) {
			c.wake[k] <- struct{}{}
		}
	}
}

// wait returns once every worker is done with the running pass.
func (c *crew) wait() {
	if !spin(func() bool { return c.left.Load() == 0 }) {
		c.idle.Store(true)
		if c.left.Load() != 0 || !c.idle.CompareAndSwap(true, false) {
			<-c.done // the last worker cleared idle, and sends
		}
	}
	c.world.Store(nil)
}

func (c *crew) worker(k int) {
	defer c.wg.Done()
	var seen uint64
	for c.next(k, &seen) {
		c.world.Load().runParts(c)
		if c.left.Add(-1) == 0 && c.idle.CompareAndSwap(true, false) {
			c.done <- struct{}{}
		}
	}
}

// next waits for the pass after seen, for worker k, and notes it in seen;
// it reports false when the crew stops instead.
func (c *crew) next(k int, seen *uint64) bool {
	ready := func() bool { return c.passes.Load() != *seen || c.stop.Load() }
	if !spin(ready) {
		for !ready() {
			c.asleep[k].Store(true)
			if !ready() || !c.asleep[k].CompareAndSwap(true, false) {
				<-c.wake[k] // whoever cleared asleep sends
			}
		}
	}
	if c.stop.Load() {
		return false
	}
	*seen = c.passes.Load()
	return true
}

// spin reports whether ready turned true within handOff, asking it again
// and again, letting other goroutines run now and then.
func spin(ready func() bool) bool {
	t0 := time.Now()
	for i := 1; ; i++ {
		if ready() {
			return true
		}
		if i%64 == 0 {
			if time.Since(t0) > handOff {
				return false
			}
			runtime.Gosched()
		}
	}
}

// close ends the workers once they are idle.
func (c *crew) close() {
	c.stop.Store(true)
	c.rouse()
}

// Close stops the world's workers (Config.Workers) and waits for them to
// end. Call it from the goroutine that calls Step, not during a Step; a
// world needs no Close to be collected. Steps after Close run on the
// caller alone, with the same results.
func (w *World) Close() {
	w.closed = true
	if c := w.crew; c != nil {
		w.crew = nil
		c.close()
		c.wg.Wait()
	}
}

// load reads grid pixel i; a pass whose parts may write pixels the others
// read reads the grid with it.
func (w *World) load(i int32) Pixel {
	return Pixel(atomic.LoadUint32((*uint32)(&w.grid[i])))
}

// claim adds unit (nUnit or pUnit) to the claim count of pixel i and
// returns the pixel.
func (w *World) claim(i int32, unit Pixel) Pixel {
	if w.par {
		return Pixel(atomic.AddUint32((*uint32)(&w.grid[i]), uint32(unit)))
	}
	w.grid[i] += unit
	return w.grid[i]
}

// unclaim drops the claim counts of pixel i.
func (w *World) unclaim(i int32) {
	if w.par {
		atomic.AndUint32((*uint32)(&w.grid[i]), pixBits)
		return
	}
	w.grid[i] &= pixBits
}

// put writes grid pixel i, which no other part touches in this pass, and
// logs it.
func (w *World) put(p *part, i int32, px Pixel) {
	w.grid[i] = px
	p.log = append(p.log, Write{i, px})
}

// putMove writes the Body pixel px at a snake's old head, the first of a
// move's two writes (the Head at the new head must follow at once, with
// put), and logs it with the move's direction d, so that a reader of the
// log knows a move without comparing the pair.
func (w *World) putMove(p *part, i int32, px Pixel, d Dir) {
	w.grid[i] = px
	p.log = append(p.log, Write{i, px | Pixel(d)<<moveDirShift})
}
