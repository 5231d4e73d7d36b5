package wire

import (
	"encoding/binary"
	"fmt"

	"snaked/game"
)

// Replica is a copy of a world kept elsewhere (a gateway), built from a
// snapshot and fed the world's deltas in order. It publishes its Views
// through a game.Views as the World does, its pixels replayed from the
// deltas' writes, so a renderer cannot tell a replica from the world; the
// bodies whose spawn protection ended it files as writes of the pixels
// they hold (the world marks them instead), so their tiles are Dirty too.
// Apply must be called from one goroutine; Acquire and Release from any.
type Replica struct {
	w, h        int
	maxSnakes   int
	rows        game.Rows // a pixel index's column and row (xy)
	nslots      int
	tick        uint64
	seq         uint64 // deltas applied, plus 1 for the snapshot: the step Views has
	unpublished bool   // step seq was applied by ApplyQuiet: no view shows it yet
	grid        []game.Pixel
	snakes      []game.SnakeInfo // by slot; len maxSnakes
	at          []game.Point     // by slot: heads (View.Heads); len maxSnakes (see setHead)
	hot         []slotHot        // by slot: what a move reads of its snake
	lens        game.Lengths     // the live snakes of snakes by length (the views' ranks)
	prot        []int32          // the slots whose protection may not have ended (see protect)
	inProt      []bool           // by slot: in prot

	// changed[s%keptSteps] lists the slots whose record step s changed,
	// and quick[s%keptSteps] those of which it changed only the length
	// and best length (the views' copies are brought up to date from
	// them: a record whole, or those two from hot and bst). A turn changes
	// neither: the dir is in hot alone, since no view carries it.
	changed, quick [keptSteps][]int32
	bst            []int32 // by slot: its best length

	views   *game.Views
	top     [game.TopN]int32
	ntop    int
	players int
	bots    int
	best    game.Entry
	reg     *regional // a follower of regions' state (FollowRegions); nil for a whole world's

	// Apply's scratch, kept between calls
	recs   []snakeRec
	nkill  []game.Kill
	moves  []moveDir
	heads  []headMark // by slot: its last Head write in the writes being decoded, when hmarks has it
	hmarks []uint64   // bitset by slot: the slots heads holds a Head write of (see newTry)
	hslots []int32    // the slots of hmarks' bits
}

// keptSteps is how many steps' changed slots a replica keeps: as many as
// game.Views keeps steps, so every step after a Filler's since has its list.
const keptSteps = game.KeptSteps

// snakeRec is one decoded snake record: the slot's new info, dir (when it
// set one: dir) and head (a snapshot's), whether it set nothing but the
// dir, length and best length (quick), and whether it set nothing but the
// dir (bare: no view shows a change).
type snakeRec struct {
	slot  int
	info  game.SnakeInfo
	way   game.Dir
	head  game.Point
	dir   bool
	quick bool
	bare  bool
}

// slotHot is what decoding a move reads of its snake, in one place (one
// cache line's load for a move of a random slot, as a region's are):
// where its head is, as at has it, its length (a snake of length 0 has
// no head), its colour and its dir.
type slotHot struct {
	head int32 // at's pixel index
	lng  int32
	col  game.Colour
	way  game.Dir
}

// moveDir is one decoded move: the slot and its direction.
type moveDir struct {
	slot int32
	dir  game.Dir
}

// chunkHeader reads a snapshot chunk's header.
func chunkHeader(c []byte) (tick uint64, index, count int, payload []byte, err error) {
	r := reader{b: c}
	r.header(msgChunk)
	tick = r.uvarint("chunk tick")
	i := r.uvarint("chunk index")
	n := r.uvarint("chunk count")
	if r.err != nil {
		return 0, 0, 0, nil, r.err
	}
	if n == 0 || i >= n || n > 1<<30 {
		return 0, 0, 0, nil, fmt.Errorf("%w: chunk %d of %d", ErrCorrupt, i, n)
	}
	return tick, int(i), int(n), r.b, nil
}

// ChunkInfo reads a snapshot chunk's header: the snapshot's tick, the
// chunk's index and the snapshot's chunk count. A follower collecting
// chunks places each by it and builds the replica once all have come.
func ChunkInfo(c []byte) (tick uint64, index, count int, err error) {
	tick, index, count, _, err = chunkHeader(c)
	return tick, index, count, err
}

// DeltaBase returns the tick a delta applies to (its base): a follower
// that is past it has the delta already and drops it; one that is behind
// it missed a delta and needs a snapshot.
func DeltaBase(msg []byte) (uint64, error) {
	if len(msg) < 3 || msg[0] != Version || msg[1] != msgDelta {
		return 0, fmt.Errorf("%w: not a delta", ErrCorrupt)
	}
	base, n := binary.Uvarint(msg[2:])
	if n <= 0 {
		return 0, fmt.Errorf("%w: base tick", ErrCorrupt)
	}
	return base, nil
}

// NewReplica builds a replica from the chunks of one snapshot, given in
// any order. A missing, repeated or foreign chunk is an error.
func NewReplica(chunks [][]byte) (*Replica, error) {
	return NewReplicaWithin(chunks, game.MaxPixels)
}

// NewReplicaWithin is NewReplica for a follower that takes worlds of at
// most maxPixels pixels: a snapshot of a larger world is refused before
// anything is allocated for it.
func NewReplicaWithin(chunks [][]byte, maxPixels int) (*Replica, error) {
	if len(chunks) == 0 {
		return nil, fmt.Errorf("%w: no snapshot chunks", ErrCorrupt)
	}
	var tick uint64
	parts := make([][]byte, 0, len(chunks))
	total := 0
	for k, c := range chunks {
		t, i, n, p, err := chunkHeader(c)
		if err != nil {
			return nil, err
		}
		if k == 0 {
			tick = t
			if n != len(chunks) {
				return nil, fmt.Errorf("%w: snapshot of tick %d has %d chunks, %d given", ErrCorrupt, t, n, len(chunks))
			}
			parts = parts[:n]
		}
		if t != tick || n != len(parts) {
			return nil, fmt.Errorf("%w: chunks of different snapshots (ticks %d and %d)", ErrCorrupt, tick, t)
		}
		if parts[i] != nil {
			return nil, fmt.Errorf("%w: snapshot chunk %d given twice", ErrCorrupt, i)
		}
		parts[i] = p[:len(p):len(p)]
		total += len(p)
	}
	body := make([]byte, 0, total)
	for i, p := range parts {
		if p == nil {
			return nil, fmt.Errorf("%w: snapshot of tick %d misses chunk %d of %d", ErrCorrupt, tick, i, len(parts))
		}
		body = append(body, p...)
	}
	r, err := decodeSnapshot(body, maxPixels)
	if err == nil && r.tick != tick {
		err = fmt.Errorf("%w: snapshot body of tick %d in chunks of tick %d", ErrCorrupt, r.tick, tick)
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// pixRun is one run of equal pixels.
type pixRun struct {
	n int
	p game.Pixel
}

func decodeSnapshot(b []byte, maxPixels int) (*Replica, error) {
	rd := reader{b: b}
	rd.header(msgSnapshot)
	var d dims
	d.w = rd.int("width", game.MaxSide)
	d.h = rd.int("height", game.MaxSide)
	d.max = rd.int("capacity", game.MaxCapacity)
	if rd.err == nil && (d.w < game.MinSide || d.h < game.MinSide || d.w*d.h > game.MaxPixels || d.max < 1) {
		rd.fail("world size")
	}
	if rd.err == nil && d.w*d.h > maxPixels {
		return nil, fmt.Errorf("%w: %dx%d is %d pixels, more than %d", ErrTooLarge, d.w, d.h, d.w*d.h, maxPixels)
	}
	d.nslots = rd.int("slots", d.max)
	tick := rd.uvarint("tick")
	var runs []pixRun
	var pc pixCoder
	area := d.w * d.h
	for left := area; left > 0 && rd.err == nil; {
		n := rd.int("run", left)
		if n == 0 {
			rd.fail("empty run")
		}
		runs = append(runs, pixRun{n, rd.pix(&pc, &d)})
		left -= n
	}
	recs := rd.snakes(nil, &d, func(int) game.SnakeInfo { return game.SnakeInfo{} }, false)
	var t tailRec
	rd.tail(&t, &d, true)
	if rd.err == nil && len(rd.b) != 0 {
		rd.fail("trailing bytes")
	}
	if rd.err != nil {
		return nil, rd.err
	}
	r := &Replica{
		w: d.w, h: d.h, maxSnakes: d.max, nslots: d.nslots, tick: tick, seq: 1,
		rows:   game.NewRows(d.w),
		grid:   make([]game.Pixel, area),
		snakes: make([]game.SnakeInfo, d.max),
		at:     make([]game.Point, d.max),
		hot:    make([]slotHot, d.max),
		bst:    make([]int32, d.max),
		inProt: make([]bool, d.max),
		heads:  make([]headMark, d.max),
		hmarks: make([]uint64, (d.max+63)/64),
	}
	r.views = game.NewViews(r.grid, r.w, r.h, r.maxSnakes, (*filler)(r))
	i := 0
	for _, x := range runs {
		if x.p != 0 {
			for k := i; k < i+x.n; k++ {
				r.grid[k] = x.p
			}
		}
		i += x.n
	}
	for _, x := range recs {
		r.setRecord(x.slot, x.info)
		r.hot[x.slot].way = x.way
		r.setHead(x.slot, x.head.X, x.head.Y)
	}
	r.commitTail(&t)
	r.views.Publish(r.seq, r.tick, nil)
	return r, nil
}

// commitTail takes a decoded tail in.
func (r *Replica) commitTail(t *tailRec) {
	r.top, r.ntop = t.top, t.ntop
	r.players, r.bots = t.players, t.bots
	if t.hasBest {
		r.best = t.best
	}
	for _, k := range t.kills {
		r.views.AddKill(k)
	}
}

// Apply applies a delta and publishes the view of its tick. A delta
// whose base is not the replica's tick is refused with an error wrapping
// ErrGap; a delta that does not decode, with one wrapping ErrCorrupt.
// Either way the replica is left unchanged.
func (r *Replica) Apply(msg []byte) error { return r.apply(msg, true) }

// ApplyQuiet is Apply without the view: for a follower behind the stream
// with the next delta at hand, whose sessions would draw only the newest
// view anyway. The views show its tick from the next Apply, ApplyRegions
// or Publish on.
func (r *Replica) ApplyQuiet(msg []byte) error { return r.apply(msg, false) }

// Publish publishes the view of the replica's tick if ApplyQuiet applied
// it without one, and reports whether it did.
func (r *Replica) Publish() bool {
	if !r.unpublished {
		return false
	}
	r.unpublished = false
	r.views.Publish(r.seq, r.tick, r.views.Writes(r.seq))
	return true
}

func (r *Replica) apply(msg []byte, publish bool) error {
	rd := reader{b: msg}
	rd.header(msgDelta)
	base := rd.uvarint("base tick")
	tick := rd.uvarint("tick")
	if rd.err != nil {
		return rd.err
	}
	if base != r.tick {
		return fmt.Errorf("%w (delta from tick %d to %d, replica at %d)", ErrGap, base, tick, r.tick)
	}
	if tick <= base {
		return fmt.Errorf("%w: delta from tick %d to %d", ErrCorrupt, base, tick)
	}
	var t tailRec
	d := r.decodeRecords(&rd, &t)
	log := r.decodeWrites(&rd, &d, r.views.Log(r.seq+1))
	if rd.err == nil && len(rd.b) != 0 {
		rd.fail("trailing bytes")
	}
	if rd.err != nil {
		return rd.err
	}
	// valid: commit. A snake's head is its slot's last Head pixel, if
	// the delta wrote one, and none when it has no length.
	r.commitRecords(r.moves)
	for _, c := range log {
		r.grid[c.Index()] = c.Pixel()
		r.takeHead(c)
	}
	r.noHeads()
	r.nslots = d.nslots
	log = r.expired(log, base, tick)
	r.commitTail(&t)
	r.tick = tick
	r.seq++
	r.file(log, publish)
	return nil
}

// file hands the views log as the writes of step r.seq, which brought the
// replica to r.tick, and publishes its view when publish is set.
func (r *Replica) file(log []game.Write, publish bool) {
	r.unpublished = !publish
	if publish {
		r.views.Publish(r.seq, r.tick, log)
	} else {
		r.views.File(r.seq, log)
	}
}

// decodeRecords reads what a delta and a global message (ApplyRegions)
// share after their ticks: the slot count, which never shrinks, the
// records that changed (into r.recs) and the tail (into t). It returns the
// message's dims; on an error it leaves rd.err set.
func (r *Replica) decodeRecords(rd *reader, t *tailRec) dims {
	d := dims{w: r.w, h: r.h, max: r.maxSnakes}
	d.nslots = rd.int("slots", r.maxSnakes)
	if rd.err == nil && d.nslots < r.nslots {
		rd.fail("slot count shrinks")
	}
	r.recs = rd.snakes(r.recs[:0], &d, func(s int) game.SnakeInfo { return r.snakes[s] }, true)
	*t = tailRec{kills: r.nkill[:0], best: r.best}
	rd.tail(t, &d, false)
	r.nkill = t.kills
	return d
}

// commitRecords commits, once a message is valid, the dirs of its moves
// and the records decodeRecords read, as the changes of step r.seq+1: a
// snake's dir is its last move's, unless its record sets it.
func (r *Replica) commitRecords(moves []moveDir) {
	k := (r.seq + 1) % keptSteps
	chg, q := r.changed[k][:0], r.quick[k][:0]
	for _, m := range moves {
		r.hot[m.slot].way = m.dir
	}
	for _, x := range r.recs {
		if x.dir {
			r.hot[x.slot].way = x.way
		}
		if x.bare {
			continue
		}
		r.setRecord(x.slot, x.info)
		if x.quick {
			q = append(q, int32(x.slot))
		} else {
			chg = append(chg, int32(x.slot))
		}
	}
	r.changed[k], r.quick[k] = chg, q
}

// setRecord makes in slot's record, keeping the count of lengths, the
// dense arrays and the list of protections.
func (r *Replica) setRecord(slot int, in game.SnakeInfo) {
	if old := &r.snakes[slot]; old.Alive {
		r.lens.Add(old.Length, -1)
	}
	if in.Alive {
		r.lens.Add(in.Length, 1)
	}
	r.snakes[slot] = in
	h := &r.hot[slot]
	h.col, h.lng = in.Colour, int32(in.Length)
	r.bst[slot] = int32(in.BestLength)
	if in.ProtectedUntil > r.tick && !r.inProt[slot] {
		r.inProt[slot] = true
		r.prot = append(r.prot, int32(slot))
	}
}

// takeHead makes a committed Head write its slot's head, when the snake
// has a length (noHeads clears the heads of those that lost theirs).
func (r *Replica) takeHead(c game.Write) {
	if p := c.Pixel(); p.Kind() == game.Head {
		if s := p.Slot(); r.hot[s].lng > 0 {
			x, y := r.xy(c.Index())
			r.setHead(s, x, y)
		}
	}
}

// setHead puts slot's head at (x, y), in at and in hot.
func (r *Replica) setHead(slot, x, y int) {
	r.at[slot] = game.Point{X: x, Y: y}
	r.hot[slot].head = int32(y*r.w + x)
}

// noHeads moves the heads of the snakes whose records this message left
// without length to the origin.
func (r *Replica) noHeads() {
	for _, x := range r.recs {
		if x.info.Length == 0 {
			r.setHead(x.slot, 0, 0)
		}
	}
}

// decodeWrites reads a delta's grid writes onto log and returns it, with
// the moves (r.moves) and the last Head pixel of each slot (r.heads) it
// found; on an error it leaves rd.err set.
func (r *Replica) decodeWrites(rd *reader, d *dims, log []game.Write) []game.Write {
	n := rd.uvarint("pixel count") // grid writes, a move's two (in 1 byte or more)
	if rd.err == nil && n > 2*uint64(len(rd.b)) {
		rd.fail("pixel count")
	}
	var pc pixCoder
	area := r.w * r.h
	r.newTry()
	r.moves = r.moves[:0]
	n += uint64(len(log)) // the writes go after those log has
	for rd.err == nil && uint64(len(log)) < n {
		u := rd.uvarint("grid write")
		if u < itemWrite {
			// a move: the Body at the snake's head, the Head one pixel on
			m, ok := r.move(rd, d, u, pc.slot, uint64(len(log))+2 <= n)
			if !ok {
				break
			}
			log = r.appendMove(log, m)
			pc.i, pc.slot = int32(m.y*r.w+m.x), m.s
			r.moves = append(r.moves, moveDir{int32(m.s), m.d})
			continue
		}
		i := int(pc.i) + unzig(u-itemWrite)
		p := rd.pix(&pc, d)
		if rd.err != nil {
			break
		}
		if i < 0 || i >= area {
			rd.fail("pixel index")
			break
		}
		pc.i = int32(i)
		log = append(log, game.MakeWrite(i, p, game.None))
		if p.Kind() == game.Head {
			r.markHead(p.Slot(), int32(i), p)
		}
	}
	return log
}

// moved is a decoded move: the moving snake's slot and colour, its head's
// index h and place (hx, hy) (see headAt), and the pixel it enters, at
// x, y, in dir d.
type moved struct {
	s, h, hx, hy, x, y int
	c                  game.Colour
	d                  game.Dir
}

// appendMove appends move m's two writes to log, the Body at its head and
// the Head it enters, and notes the Head (markHead).
func (r *Replica) appendMove(log []game.Write, m moved) []game.Write {
	i := m.y*r.w + m.x
	head := game.MakePixel(game.Head, m.s, m.c)
	r.markHead(m.s, int32(i), head)
	return append(log, game.MakeWrite(m.h, game.MakePixel(game.Body, m.s, m.c), m.d), game.MakeWrite(i, head, game.None))
}

// move decodes move item u, which follows the move of slot last, given
// room for its two writes. Without room, or for a snake without a head,
// it leaves rd.err set and ok false.
func (r *Replica) move(rd *reader, d *dims, u uint64, last int, room bool) (m moved, ok bool) {
	m.s = last + 1 + int(u&moveGap)
	if u&moveGap == moveGap {
		m.s = rd.int("move slot", game.MaxCapacity-1)
	}
	m.h = -1
	if rd.err == nil && m.s < d.nslots {
		m.h, m.c = r.headAt(m.s)
	}
	if m.h < 0 || !room {
		rd.fail("move of a snake without a head")
		return moved{}, false
	}
	m.hx, m.hy = r.xy(m.h)
	m.d = moveDirs[u>>5&3]
	m.x, m.y = r.step(m.hx, m.hy, m.d)
	return m, true
}

// step returns the pixel next to (x, y) in dir d (Up to Left), wrapping
// onto the world.
func (r *Replica) step(x, y int, d game.Dir) (int, int) {
	x, y = x+stepX[d], y+stepY[d]
	if x < 0 {
		x += r.w
	} else if x >= r.w {
		x -= r.w
	}
	if y < 0 {
		y += r.h
	} else if y >= r.h {
		y -= r.h
	}
	return x, y
}

// xy returns pixel index i's column and row, without a division.
func (r *Replica) xy(i int) (x, y int) { return r.rows.XY(i) }

// headMark is where the writes being decoded last wrote a slot's Head
// pixel.
type headMark struct {
	i int32
	p game.Pixel
}

// newTry starts the decoding of a message's writes: no slot has a Head
// write in them yet.
func (r *Replica) newTry() {
	for _, s := range r.hslots {
		r.hmarks[s/64] = 0
	}
	r.hslots = r.hslots[:0]
}

// markHead notes slot's Head write of pixel p at i.
func (r *Replica) markHead(slot int, i int32, p game.Pixel) {
	if w := &r.hmarks[slot/64]; *w>>(slot%64)&1 == 0 {
		*w |= 1 << (slot % 64)
		r.hslots = append(r.hslots, int32(slot))
	}
	r.heads[slot] = headMark{i, p}
}

// headAt returns the pixel index of slot's head as the writes decoded so
// far leave it, and its colour: its last Head pixel in the message, else
// the snake's head and colour from before it (a live snake's Head pixel
// has its record's colour, so the grid is not read); -1 when the snake
// has no length (no head).
func (r *Replica) headAt(slot int) (int, game.Colour) {
	if r.hmarks[slot/64]>>(slot%64)&1 != 0 {
		m := r.heads[slot]
		return int(m.i), m.p.Colour()
	}
	if h := r.hot[slot]; h.lng > 0 {
		return int(h.head), h.col
	}
	return -1, 0
}

// expired appends to log, as writes of the pixels they already hold, the
// bodies of the snakes whose spawn protection ended after tick from and at
// or before tick to: their look changes without a grid write, and a view
// marks the tiles of every pixel its log writes (the world marks the same
// tiles through game.Filler.Expired). A snake's body is the pixels of its
// slot connected to its head: no other pixel holds its slot.
func (r *Replica) expired(log []game.Write, from, to uint64) []game.Write {
	const seen = 1 << 31 // above a Pixel's bits: set while a fill runs
	r.protect(from)
	for _, slot := range r.prot {
		i := int(slot)
		s := &r.snakes[i]
		if !s.Alive || s.ProtectedUntil <= from || s.ProtectedUntil > to || s.Length == 0 {
			continue
		}
		h := int(r.hot[i].head)
		if p := r.grid[h]; p.Kind() < game.Body || p.Slot() != i {
			continue
		}
		start := len(log)
		log = append(log, game.MakeWrite(h, r.grid[h], game.None))
		r.grid[h] |= seen
		for k := start; k < len(log); k++ {
			c := log[k].Index()
			x, y := c%r.w, c/r.w
			for _, n := range [4]int{
				y*r.w + (x+1)%r.w, y*r.w + (x+r.w-1)%r.w,
				(y+1)%r.h*r.w + x, (y+r.h-1)%r.h*r.w + x,
			} {
				if p := r.grid[n]; p&seen == 0 && p.Kind() >= game.Body && p.Slot() == i {
					log = append(log, game.MakeWrite(n, p, game.None))
					r.grid[n] = p | seen
				}
			}
		}
		for _, c := range log[start:] {
			r.grid[c.Index()] &^= seen
		}
	}
	return log
}

// Tick is the tick the replica is at (the base the next delta must have).
// Call it from the goroutine that calls Apply.
func (r *Replica) Tick() uint64 { return r.tick }

// Size returns the world's width and height in pixels.
func (r *Replica) Size() (w, h int) { return r.w, r.h }

// Acquire returns the newest published view; never nil. The caller must
// call Release exactly once when done reading it.
func (r *Replica) Acquire() *game.View { return r.views.Acquire() }

// SetWorld names the world instance the replica follows in its views
// (game.View.World). Call it before any reader acquires a view.
func (r *Replica) SetWorld(id uint64) { r.views.SetWorld(id) }

// Skipped reports how many deltas were not published because every view
// buffer was held by a reader.
func (r *Replica) Skipped() uint64 { return r.views.Skipped() }

// Unindex has the views the replica publishes from now on carry no render
// index (game.Views.Unindex): for a follower nothing draws from. Call it
// from the goroutine that applies.
func (r *Replica) Unindex() { r.views.Unindex() }

// filler is the Replica as its Views' Filler.
type filler Replica

// Fill brings v's records up to date (whole when since is 0, else the
// slots changed in the steps after since: a record whole, or its
// length and best length), copies the heads, gives v the count by length
// for its ranks, marks the shields of the protected slots, and fills the
// leaderboard from its slots and the counters.
func (f *filler) Fill(v *game.View, since uint64) {
	r := (*Replica)(f)
	n := r.nslots
	if old := len(v.Snakes); since == 0 || old > n {
		v.Snakes = append(v.Snakes[:0], r.snakes[:n]...)
	} else {
		v.Snakes = append(v.Snakes, r.snakes[old:n]...)
		for s := since + 1; s <= r.seq; s++ {
			for _, slot := range r.changed[s%keptSteps] {
				v.Snakes[slot] = r.snakes[slot]
			}
			for _, slot := range r.quick[s%keptSteps] { // from the dense arrays: no load of a record
				in := &v.Snakes[slot]
				in.Length, in.BestLength = int(r.hot[slot].lng), int(r.bst[slot])
			}
		}
	}
	v.Heads = append(v.Heads[:0], r.at[:n]...)
	v.SetRanks(&r.lens)
	r.protect(v.Tick)
	if nw := (n + 63) / 64; cap(v.Shield) >= nw {
		v.Shield = v.Shield[:nw]
		clear(v.Shield)
	} else {
		v.Shield = make([]uint64, nw)
	}
	for _, s := range r.prot {
		if v.Tick < r.snakes[s].ProtectedUntil {
			v.Shield[s/64] |= 1 << (s % 64)
		}
	}
	v.Top = v.Top[:0]
	for _, s := range r.top[:r.ntop] {
		in := &v.Snakes[s]
		v.Top = append(v.Top, game.Entry{Slot: int(s), Name: in.Name, Length: in.Length})
	}
	v.Players, v.Bots, v.Best = r.players, r.bots, r.best
}

// protect drops from r.prot the slots whose protection ended at or before
// tick: it then holds every slot protected after tick (and maybe more).
func (r *Replica) protect(tick uint64) {
	keep := r.prot[:0]
	for _, s := range r.prot {
		if r.snakes[s].ProtectedUntil > tick {
			keep = append(keep, s)
		} else {
			r.inProt[s] = false
		}
	}
	r.prot = keep
}

// Expired marks nothing: Apply filed the pixels of the protections that
// ended as writes (expired).
func (f *filler) Expired(*game.Views, uint64, uint64) {}
