package game

import "sync/atomic"

// Views publishes the Views of one world after each of its steps: the
// World's own, and a replica's of a world stepped elsewhere, so that a
// reader cannot tell the two apart.
//
// Views are published through a small pool of View buffers (at most 8),
// each with an atomic reference count, and an atomic pointer to the
// newest. Acquire loads the newest, increments its count and
// re-checks that it is still the newest (else undoes and retries).
// Publish only writes a buffer that is not the newest and has no
// references, so readers never see a change. A buffer's pixels are
// brought up to date by replaying the Writes of the steps since it was
// last written (the last 16 steps' are kept), so publishing costs
// O(pixels written + snakes), not O(area); a buffer older than that is
// copied from the grid whole (rare). If every buffer is held, Publish
// skips the step rather than wait (Skipped counts it). Readers must
// Release each view exactly once and should not hold one for longer than
// a frame: a held view pins a buffer.
//
// Publish, Log, Writes, Mark, AddKill and Rank are called from the one
// goroutine that changes the world; Acquire, Release and Skipped from any.
type Views struct {
	grid     []Pixel // the world's grid, copied whole into a buffer too old to replay
	w, h     int
	capacity int
	fill     Filler

	pool    []*View // every buffer, at most maxViews
	newest  atomic.Pointer[View]
	skipped atomic.Uint64 // steps not published because every buffer was held

	world uint64 // every view's World (SetWorld)

	unindexed bool // no render index (Config.Unindexed): buffers carry pixels, not Dirty, Fresh or the cell index
	lazy      bool // pixels on demand (Config.LazyPixels; implies unindexed): a publish brings a buffer's pixels up to date only when want is set, and only the buffer Lazy made has pixels
	want      bool // the next publish into a buffer with pixels brings them up to date (World.WantPixels)

	logs  [logN][]Write // logs[s%logN] holds step s's writes, for the last logN steps
	cells []uint64      // the last step's cells (View.index); clear between publishes
	hit   []bool        // by tile row: a bit of it in cells may be set; all false between publishes

	rank ranker // the views' and the world's ranks

	// the last MaxKills deaths: kills[k%MaxKills] for k below nkills
	kills  [MaxKills]Kill
	nkills uint64

	// The replay sync hands to band: the buffer, and the step and tick it
	// is brought to; bands runs the bands (nil: in turn, on the caller).
	bv          *View
	bseq, btick uint64
	bands       func()
	bidx        []bandIndex // one a band; band k > 0 indexes into bidx[k] (see band)

	// Mark's target while Publish calls Filler.Expired: the view being
	// published, its tick, and the world's width as recip has it
	cur  *View
	tick uint64
	inv  uint64
}

// A Filler is the part of publishing that differs between a world and a
// replica of it. Views.Publish calls it on its own goroutine.
type Filler interface {
	// Fill sets what the view v shows besides its pixels and deaths, as
	// of v.Tick: Snakes and Heads (one per slot in use), Shield, ranks
	// (View.SetRanks), Top, Players, Bots and Best. v held them as of step
	// since before (0: v holds nothing it may keep; else one of the last
	// KeptSteps-1 steps published), so a Filler that knows what changed
	// since may write only that.
	Fill(v *View, since uint64)

	// Expired is called when the view being published is brought up to
	// date by replaying the writes since its tick from: it calls
	// Views.Mark for each pixel whose look changed without a write after
	// from, up to the tick being published (the body of a snake whose
	// spawn protection ended then). No buffer that Publish may replay is
	// older than tick oldest, so what it keeps for earlier ticks may go.
	// Publishes that replay nothing call it too, with from the tick being
	// published: it then marks nothing, and only drops.
	Expired(vs *Views, from, oldest uint64)
}

// NewViews returns the publisher of the views of a w x h world of at most
// capacity snakes whose grid (W*H pixels, row-major) is grid; fill
// completes each view. Nothing is published until the first Publish.
func NewViews(grid []Pixel, w, h, capacity int, fill Filler) *Views {
	return &Views{grid: grid, w: w, h: h, capacity: capacity, fill: fill,
		cells: cellMap(nil, w, h), hit: make([]bool, TilesH(h)), inv: recip(w), rank: ranker{longer: make([]int32, 512)}}
}

// viewState is the bookkeeping a View buffer carries for its Views.
type viewState struct {
	refs atomic.Int32 // readers holding the view
	seq  uint64       // the step whose grid Pix holds; 0 = never written
	tick uint64       // and its tick: the view's Tick, unless NoPixels
	rec  uint64       // the step whose records (Snakes) it holds; 0 = none
}

// Acquire returns the newest published view; never nil once Publish has
// run. The caller must call Release exactly once when done reading it.
func (vs *Views) Acquire() *View {
	for {
		v := vs.newest.Load()
		v.st.refs.Add(1)
		if vs.newest.Load() == v {
			return v
		}
		v.st.refs.Add(-1)
	}
}

// Release tells the publisher the reader is done with v.
func (v *View) Release() { v.st.refs.Add(-1) }

// Skipped reports how many steps were not published because every view
// buffer was held by a reader.
func (vs *Views) Skipped() uint64 { return vs.skipped.Load() }

// SetWorld names the world instance the views show (View.World): the
// newest view already published, and every view published after. Call it
// before any reader acquires a view.
func (vs *Views) SetWorld(id uint64) {
	vs.world = id
	if v := vs.newest.Load(); v != nil {
		v.World = id
	}
}

// Log returns the buffer for the writes of step: empty, with the capacity
// of the buffer of the step 16 before, whose writes it overwrites. The
// caller appends the step's writes to it and hands it to Publish.
func (vs *Views) Log(step uint64) []Write { return vs.logs[step%logN][:0] }

// Writes returns the writes of step, one of the last 16 steps Publish was
// given, in the order they were made; the slice is the publisher's, valid
// until Log is asked for the step 16 after.
func (vs *Views) Writes(step uint64) []Write { return vs.logs[step%logN] }

// File files log as the writes of step (one more than the last step filed
// or published) without publishing a view of it: for a publisher that
// has the next step at hand already, whose view of this one nobody would
// draw. The next Publish brings its buffer past this step as it does past
// any step it did not publish.
func (vs *Views) File(step uint64, log []Write) { vs.logs[step%logN] = log }

// Publish files log as the writes of step (one more than the last step
// published or filed, or the first), which brought the grid to tick, then brings a
// free buffer up to date and makes it the newest view. Step 0 is a
// world's start: a buffer written then is copied whole the next time.
func (vs *Views) Publish(step, tick uint64, log []Write) {
	vs.logs[step%logN] = log
	v := vs.next()
	if v == nil {
		vs.skipped.Add(1)
		vs.expire(step, tick)
		return
	}
	since := v.st.rec // the step of v's records (a lazy world's may be later than its pixels')
	if step-since > logN-1 {
		since = 0 // further back than what a Filler keeps
	}
	switch {
	case vs.lazy && (!vs.want || v.Pix == nil): // not asked, or no buffer with pixels free: the ask waits
		v.NoPixels = true
		vs.expire(step, tick)
	default:
		if vs.sync(v, step, tick) {
			since = 0
			vs.expire(step, tick)
		}
		v.st.seq, v.st.tick, v.NoPixels, vs.want = step, tick, false, false
		if step == 0 {
			v.st.seq = 0 // no log reaches back to before the start
		}
	}
	v.Tick, v.World = tick, vs.world
	vs.fill.Fill(v, since)
	v.st.rec = step
	v.Kills = v.Kills[:0]
	for k := vs.nkills - min(vs.nkills, MaxKills); k < vs.nkills; k++ {
		if r := &vs.kills[k%MaxKills]; r.Tick+KillTicks > tick {
			v.Kills = append(v.Kills, *r)
		}
	}
	vs.newest.Store(v)
}

// expire has the Filler drop what no buffer a later publish may replay
// needs (Filler.Expired with from = tick, which marks nothing): for the
// publishes that replay nothing (a buffer copied whole, one without
// pixels, or none free), so that what the Filler keeps for replays stays
// bounded however long no publish replays.
func (vs *Views) expire(step, tick uint64) {
	vs.fill.Expired(vs, tick, vs.oldest(step, tick))
}

// oldest returns the earliest tick of the buffers that a publish after
// step may bring up to date by replaying, or from when that is earlier.
func (vs *Views) oldest(step, from uint64) uint64 {
	oldest := from
	for _, b := range vs.pool {
		if b.st.seq != 0 && step-b.st.seq <= logN-1 { // replayable, not copied
			oldest = min(oldest, b.st.tick)
		}
	}
	return oldest
}

// Mark marks pixel i of the view being published as changed at its tick
// (View.Dirty, Fresh and FreshX). Call it only from Filler.Expired.
func (vs *Views) Mark(i int) {
	if vs.unindexed {
		return
	}
	v := vs.cur
	tw, fw, cw := uint(TilesW(vs.w)), uint(FreshWords(vs.w)), uint(cellWords(vs.w))
	y := uint(uint64(i) * vs.inv >> recipShift) // y = i / w, see recip
	x := uint(i) - y*uint(vs.w)
	tx, ty := x/TileW, y/TileH
	v.Dirty[ty*tw+tx] = vs.tick
	v.Fresh[ty*fw+tx/64] |= 1 << (tx % 64)
	vs.cells[ty*cw+x/64] |= 1 << (x % 64)
	vs.hit[ty] = true
}

// Unindex has the buffers published from now on carry no render index
// (View.Dirty, Fresh and the cell index), as a world built with
// Config.Unindexed: for the views of a replica nothing draws from. Call it
// from the goroutine that publishes.
func (vs *Views) Unindex() { vs.unindexed = true }

// AddKill files a death for the views' kill feed: each view shows those
// of its last KillTicks ticks (Tick+KillTicks > View.Tick), oldest first,
// at most MaxKills (the newest when there were more). Deaths are filed in
// the order they happened.
func (vs *Views) AddKill(k Kill) {
	vs.kills[vs.nkills%MaxKills] = k
	vs.nkills++
}

// Lazy has the views publish the world's pixels only when asked (see
// Config.LazyPixels), and makes the one buffer that will carry them, its
// pixels and records' arrays written now: a buffer's first write into
// fresh memory faults in its pages (0.5-1 s of a step asked for pixels
// at 100,000 snakes here), which a step asked for pixels must not pay.
// One is enough for a simulation: its snapshot writer holds the view
// while it writes, and no new ask comes until it is done
// (cluster.Publisher). An ask while a reader holds it, or on the tick
// after the last ask (it is then the newest), waits a tick. The buffers
// made later carry no pixels. Call it before the first Publish.
func (vs *Views) Lazy() {
	vs.lazy, vs.unindexed = true, true
	v := vs.newView()
	v.Pix = make([]Pixel, vs.w*vs.h)
	copyPix(v.Pix, vs.grid) // v.st.seq 0 still has sync copy it whole
	clear(v.Snakes[:cap(v.Snakes)])
	clear(v.Heads[:cap(v.Heads)])
	clear(v.Shield[:cap(v.Shield)])
	vs.pool = append(vs.pool, v)
}

// next returns the buffer to publish into: of those that are not the
// newest and have no reader, the best (see better); else a new one while
// the pool has room (it joins the pool); else nil (every buffer is held).
// A lazy world's publish without pixels takes a new buffer rather than
// the one with pixels, so that it stays free for an ask.
func (vs *Views) next() *View {
	cur := vs.newest.Load()
	var v *View
	for _, b := range vs.pool {
		if b != cur && b.st.refs.Load() == 0 && (v == nil || vs.better(b, v)) {
			v = b
		}
	}
	if (v == nil || vs.lazy && !vs.want && v.Pix != nil) && len(vs.pool) < maxViews {
		v = vs.newView()
		if !vs.lazy {
			v.Pix = make([]Pixel, vs.w*vs.h)
		}
		vs.pool = append(vs.pool, v)
	}
	if v != nil {
		v.Serial = serials.Add(1)
	}
	return v
}

// better reports whether buffer b is a better one to publish into than v:
// in a lazy world, one with pixels when they are asked for and one
// without otherwise (which leaves the one with pixels free for an ask);
// then the one whose pixels are the more up to date.
func (vs *Views) better(b, v *View) bool {
	if bp := b.Pix != nil; vs.lazy && bp != (v.Pix != nil) {
		return bp == vs.want
	}
	return b.st.seq > v.st.seq
}

// newView returns a buffer for the views, without pixels.
func (vs *Views) newView() *View {
	w, h := vs.w, vs.h
	v := &View{
		W: w, H: h,
		Snakes: make([]SnakeInfo, 0, vs.capacity),
		Heads:  make([]Point, 0, vs.capacity),
		Top:    make([]Entry, 0, TopN),
		Kills:  make([]Kill, 0, MaxKills),
		Shield: make([]uint64, 0, (vs.capacity+63)/64),
	}
	if !vs.unindexed {
		v.Dirty = make([]uint64, TilesW(w)*TilesH(h))
		v.Fresh = make([]uint64, FreshWords(w)*TilesH(h))
	}
	return v
}

// serials numbers the publishes of every world and replica (View.Serial).
var serials atomic.Uint64

// sync brings v's pixels, tile marks and index of changed cells to the
// grid as of step seq (tick). When v is new, further behind than the logs
// reach or not older than tick, it copies the grid whole and marks every
// tile. Else the Filler marks what changed without a write (Expired), and
// the logs of the steps since v's are replayed, noting the last step's
// cells in vs.cells, and indexed (see index): in bands of tile rows (see
// band), on the world's workers when it has them (setBands); the bands'
// indexes are then joined. It does not set v's step or tick; it reports
// whether it copied v whole.
func (vs *Views) sync(v *View, seq, tick uint64) (whole bool) {
	if vs.unindexed && v.Dirty != nil { // a buffer made before Unindex
		v.Dirty, v.Fresh, v.FreshX, v.FreshAt, v.FreshBlk, v.FreshPix = nil, nil, nil, nil, nil, nil
	}
	clear(v.Fresh)
	if v.st.seq == 0 || seq-v.st.seq > logN-1 || tick <= v.st.tick {
		copyPix(v.Pix, vs.grid)
		if !vs.unindexed {
			v.markAll(tick)
		}
		v.FreshAt, v.FreshBlk = v.FreshAt[:0], v.FreshBlk[:0]
		return true
	}
	from := v.st.tick
	vs.cur, vs.tick = v, tick
	vs.fill.Expired(vs, from, vs.oldest(seq, from))
	vs.cur = nil
	vs.bv, vs.bseq, vs.btick = v, seq, tick
	switch {
	case vs.bands != nil:
		vs.bands()
		if !vs.unindexed {
			v.join(vs.bidx[1:])
		}
	default:
		vs.band(0, 1)
		if !vs.unindexed {
			v.join(nil)
		}
	}
	vs.bv = nil
	return false
}

// setBands has the replay of each publish (see sync) run by run, which
// must call band(k, n) for every k in 0..n-1, at once or in turn, and
// return when all are done. Call it before the first Publish.
func (vs *Views) setBands(n int, run func()) {
	vs.bands, vs.bidx = run, make([]bandIndex, n)
}

// band replays the tile rows of band k of n into the buffer being
// published: bands write disjoint pixels, tiles and cells, so they may
// run at once. Call it only from the function given to setBands.
func (vs *Views) band(k, n int) {
	v := vs.bv
	th := TilesH(v.H)
	r0, r1 := k*th/n, (k+1)*th/n
	lo, hi := int32(r0*TileH*v.W), int32(min(r1*TileH, v.H)*v.W)
	if vs.unindexed {
		for s := v.st.seq + 1; s <= vs.bseq; s++ {
			v.applyPix(vs.logs[s%logN], lo, hi)
		}
		return
	}
	for s := v.st.seq + 1; s < vs.bseq; s++ {
		v.apply(vs.logs[s%logN], vs.btick, lo, hi)
	}
	v.applyFresh(vs.logs[vs.bseq%logN], vs.btick, vs.cells, vs.hit, lo, hi)
	if k == 0 { // the first band indexes into v, the others aside
		x := bandIndex{v.FreshAt[:0], v.FreshBlk[:0], v.FreshX[:0], v.FreshPix[:0]}
		v.index(&x, r0, r1, vs.cells, vs.hit)
		v.FreshAt, v.FreshBlk, v.FreshX, v.FreshPix = x.at, x.blk, x.xs, x.ps
		return
	}
	x := &vs.bidx[k]
	x.at, x.blk, x.xs, x.ps = x.at[:0], x.blk[:0], x.xs[:0], x.ps[:0]
	v.index(x, r0, r1, vs.cells, vs.hit)
}

// bandIndex is the index of changed cells (View.FreshAt, FreshBlk, FreshX,
// FreshPix) of one band's tile rows, its offsets counted from the band's
// first cell.
type bandIndex struct {
	at, blk []int32
	xs      []uint16
	ps      []Pixel
}

// ranker ranks live snakes by length with a counting sort, allocating only
// when a length passes the longest it has seen: reset, count each live
// snake's length, sum, then above(l) is the number of live snakes longer
// than l: a view's ranks (View.Rank).
type ranker struct {
	longer  []int32 // by length: the snakes counted of that length; after sum, those longer
	longest int     // the longest length counted
}

func (r *ranker) reset() {
	clear(r.longer)
	r.longest = 0
}

func (r *ranker) count(length int) {
	if length+2 > len(r.longer) {
		r.grow(length)
	}
	r.longer[length]++
	r.longest = max(r.longest, length)
}

// grow makes room for lengths up to length+1 (sum reads one past the
// longest).
func (r *ranker) grow(length int) {
	c := make([]int32, 2*(length+2))
	copy(c, r.longer)
	r.longer = c
}

// add adds the counts of o (reset and counted, not summed) to r's.
func (r *ranker) add(o *ranker) {
	if o.longest+2 > len(r.longer) {
		r.grow(o.longest)
	}
	for l, c := range o.longer[:o.longest+1] {
		r.longer[l] += c
	}
	r.longest = max(r.longest, o.longest)
}

// sum turns the counts into, by length, the number of snakes longer.
func (r *ranker) sum() { suffix(r.longer[:r.longest+2]) }

// suffix turns counts by length into, by length, the count of those
// longer: what is after each entry.
func suffix(a []int32) {
	var above int32
	for l := len(a) - 1; l >= 0; l-- {
		c := a[l]
		a[l] = above
		above += c
	}
}

// above returns the number of counted snakes longer than length (after
// sum; length at most the longest + 1).
func (r *ranker) above(length int) int { return int(r.longer[length]) }

// copyChunk is how many pixels copyPix copies at once: 4 MB. A copy of
// more than 1 MB bypasses the caches (the runtime's memmove uses
// non-temporal stores there); in chunks of 256 KB a 140 MB copy took 3x
// as long.
const copyChunk = 1 << 20

// copyPix copies src into dst as copy does, a chunk at a time. A copy is
// a memmove, where the runtime cannot preempt a goroutine: a collection
// that stops every goroutine waits for the whole of it, and the whole
// process with it. A large world's grid (140 MB at 100,000 snakes) copied
// by a thread short of CPU takes seconds (docs/SCALING.md, "Late
// heartbeats"). Each chunk is a call of copyRun, whose entry is a point
// where a goroutine asked to stop stops.
func copyPix(dst, src []Pixel) {
	n := min(len(dst), len(src))
	for i := 0; i < n; i += copyChunk {
		j := min(i+copyChunk, n)
		copyRun(dst[i:j], src[i:j])
	}
}

// copyRun is copy, not inlined: a call whose entry checks for a pending
// preemption.
//
//go:noinline
func copyRun(dst, src []Pixel) { copy(dst, src) }
