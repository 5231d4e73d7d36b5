package game

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
)

// Replica is a copy of a world kept elsewhere (a gateway), built from a
// snapshot and fed the world's deltas in order (see the wire format in
// wire.go). It publishes Views exactly as World does: Acquire returns the
// newest, readers Release it, buffers come from a pool of at most maxViews
// with reference counts, pixels are replayed from the last logN deltas'
// changes and View.Dirty marks every tile those changes touched (and the
// bodies whose spawn protection ended), so a renderer cannot tell a replica
// from the world. Apply must be called from one goroutine; Acquire and
// Release from any.
type Replica struct {
	w, h      int
	maxSnakes int
	nslots    int
	tick      uint64
	seq       uint64 // deltas applied, plus 1 for the snapshot
	grid      []Pixel
	snakes    []SnakeInfo // by slot, Rank unused; len maxSnakes
	logs      [logN][]change
	cells     []uint64 // publish: the last delta's cells (View.index)
	top       [TopN]int32
	ntop      int
	players   int
	bots      int
	best      Entry
	kills     [MaxKills]Kill
	nkills    uint64
	counts    []int32
	pool      []*View
	newest    atomic.Pointer[View]
	skipped   atomic.Uint64

	// Apply's scratch, kept between calls
	recs  []snakeRec
	nkill []Kill
	moves []moveDir
	heads []headMark // by slot
	tries uint64     // Apply calls that decoded grid writes
}

// snakeRec is one decoded snake record: the slot's new info, and whether
// it set the dir.
type snakeRec struct {
	slot int
	info SnakeInfo
	dir  bool
}

// moveDir is one decoded move: the slot and its direction.
type moveDir struct {
	slot int32
	dir  Dir
}

// moveDirs maps a move item's bits 5-6 (vertical, towards the higher
// index) to its direction.
var moveDirs = [4]Dir{Left, Right, Up, Down}

// dims bounds what a message may name.
type dims struct{ w, h, max, nslots int }

// reader decodes a message; the first error sticks and later reads
// return zero values.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrCorrupt, what)
	}
	r.b = nil
}

func (r *reader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail(what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// int reads a varint in 0..hi.
func (r *reader) int(what string, hi int) int {
	v := r.uvarint(what)
	if hi < 0 || v > uint64(hi) {
		r.fail(what + " out of range")
		return 0
	}
	return int(v)
}

func (r *reader) byte(what string) byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) == 0 {
		r.fail(what)
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// str reads a string, returning old (no allocation) when it is the same.
func (r *reader) str(what string, old string) string {
	u := r.uvarint(what)
	if r.err == nil && u > uint64(len(r.b)) {
		r.fail(what + " longer than the message")
	}
	if r.err != nil {
		return old
	}
	n := int(u)
	s := r.b[:n]
	r.b = r.b[n:]
	if string(s) == old {
		return old
	}
	return string(s)
}

// header checks the version and kind bytes.
func (r *reader) header(kind byte) {
	v := r.byte("version")
	k := r.byte("kind")
	if r.err != nil {
		return
	}
	if v != WireVersion {
		r.err = fmt.Errorf("%w: version %d, this build reads %d", ErrCorrupt, v, WireVersion)
		r.b = nil
		return
	}
	if k != kind {
		r.fail(fmt.Sprintf("message kind %d, want %d", k, kind))
	}
}

// pix reads one pixel (see appendPix).
func (r *reader) pix(c *pixCoder, d *dims) Pixel {
	b := r.byte("pixel")
	if b&0x80 != 0 {
		r.fail("pixel flags")
		return 0
	}
	k := Kind(b >> 4 & 3)
	slot := 0
	if k >= Body {
		slot = c.slot
	}
	if b&(1<<6) != 0 {
		slot = r.int("pixel slot", 0xffff)
	}
	if k >= Body {
		if slot >= d.nslots {
			r.fail("pixel of a slot not in use")
			return 0
		}
		c.slot = slot
	}
	return Pixel(uint32(k)<<20 | uint32(b&15)<<16 | uint32(slot))
}

// snake reads a record's fields into s, integers that move as differences
// from s, and checks the result. A delta's records hold no head.
func (r *reader) snake(s *SnakeInfo, d *dims, delta bool) uint64 {
	m := r.uvarint("snake mask")
	if m&^fAll != 0 || delta && m&fHead != 0 {
		r.fail("snake mask")
		return 0
	}
	area := d.w * d.h
	if m&fHead != 0 {
		s.Head.X += unzig(r.uvarint("head x"))
		s.Head.Y += unzig(r.uvarint("head y"))
	}
	if m&fDir != 0 {
		s.Dir = Dir(r.byte("dir"))
	}
	if m&fLength != 0 {
		s.Length += unzig(r.uvarint("length"))
	}
	if m&fFlags != 0 {
		f := r.byte("flags")
		if f&0x80 != 0 {
			r.fail("snake flags")
		}
		s.Colour, s.Used, s.Alive, s.Bot = Colour(f&15), f&(1<<4) != 0, f&(1<<5) != 0, f&(1<<6) != 0
	}
	if m&fKills != 0 {
		s.Kills += unzig(r.uvarint("kills"))
	}
	if m&fDash != 0 {
		s.DashReadyAt = r.uvarint("dash")
	}
	if m&fBest != 0 {
		s.BestLength += unzig(r.uvarint("best length"))
	}
	if m&fID != 0 {
		s.ID = ID(r.uvarint("id"))
	}
	if m&fName != 0 {
		s.Name = r.str("name", s.Name)
	}
	if m&fSpawn != 0 {
		s.SpawnTick = r.uvarint("spawn tick")
	}
	if m&fDeath != 0 {
		s.DeathTick = r.uvarint("death tick")
	}
	if m&fProt != 0 {
		s.ProtectedUntil = r.uvarint("protected until")
	}
	if m&fKilledBy != 0 {
		s.KilledBy = r.str("killed by", s.KilledBy)
	}
	s.BestLength = max(s.BestLength, s.Length) // see the Encoder
	if s.Head.X < 0 || s.Head.X >= d.w || s.Head.Y < 0 || s.Head.Y >= d.h || s.Dir > Left ||
		s.Length < 0 || s.Length > area || s.Kills < 0 || s.BestLength < 0 || s.BestLength > area {
		r.fail("snake record out of range")
	}
	return m
}

// snakes reads the snake section: records by increasing slot, then 0.
// base gives a slot's info before its record; delta says the records are
// a delta's.
func (r *reader) snakes(recs []snakeRec, d *dims, base func(int) SnakeInfo, delta bool) []snakeRec {
	last := -1
	for r.err == nil {
		g := r.int("slot gap", d.nslots)
		if g == 0 {
			break
		}
		slot := last + g
		if slot >= d.nslots {
			r.fail("snake slot not in use")
			break
		}
		last = slot
		recs = append(recs, snakeRec{slot: slot, info: base(slot)})
		x := &recs[len(recs)-1]
		x.dir = r.snake(&x.info, d, delta)&fDir != 0
	}
	return recs
}

// tail reads the leaderboard slots, counters, best snake (present when
// best) and kills into t.
func (r *reader) tail(t *tailRec, d *dims, best bool) {
	t.ntop = r.int("leaderboard size", TopN)
	for k := 0; k < t.ntop; k++ {
		t.top[k] = int32(r.int("leaderboard slot", d.nslots-1))
	}
	t.players = r.int("players", d.max)
	t.bots = r.int("bots", d.max)
	t.hasBest = best
	if !best {
		t.hasBest = r.byte("best flag") == 1
	}
	if t.hasBest {
		t.best.Slot = r.int("best slot", d.max-1)
		t.best.Name = r.str("best name", t.best.Name)
		t.best.Length = r.int("best length", d.w*d.h)
	}
	n := r.int("kills", MaxKills)
	for k := 0; k < n && r.err == nil; k++ {
		var x Kill
		x.Tick = r.uvarint("kill tick")
		x.Victim = r.str("victim", "")
		x.VictimSlot = r.int("victim slot", d.max-1)
		f := r.byte("kill flags")
		if f&^7 != 0 {
			r.fail("kill flags")
		}
		x.VictimBot, x.KillerBot, x.HeadOn = f&1 != 0, f&2 != 0, f&4 != 0
		x.Length = r.int("kill length", d.w*d.h)
		x.Killer = r.str("killer", "")
		x.KillerSlot = r.int("killer slot", d.max) - 1
		x.Other = r.str("other", "")
		x.At.X = r.int("kill x", d.w-1)
		x.At.Y = r.int("kill y", d.h-1)
		t.kills = append(t.kills, x)
	}
}

// tailRec is a decoded tail.
type tailRec struct {
	top           [TopN]int32
	ntop          int
	players, bots int
	hasBest       bool
	best          Entry
	kills         []Kill
}

// chunkHeader reads a snapshot chunk's header.
func chunkHeader(c []byte) (tick uint64, index, count int, payload []byte, err error) {
	r := reader{b: c}
	r.header(msgChunk)
	tick = r.uvarint("chunk tick")
	count_ := r.uvarint("chunk index")
	n := r.uvarint("chunk count")
	if r.err != nil {
		return 0, 0, 0, nil, r.err
	}
	if n == 0 || count_ >= n || n > 1<<30 {
		return 0, 0, 0, nil, fmt.Errorf("%w: chunk %d of %d", ErrCorrupt, count_, n)
	}
	return tick, int(count_), int(n), r.b, nil
}

// ChunkInfo reads a snapshot chunk's header: the snapshot's tick, the
// chunk's index and the snapshot's chunk count. A follower collecting
// chunks places each by it and builds the replica once all have come.
func ChunkInfo(c []byte) (tick uint64, index, count int, err error) {
	tick, index, count, _, err = chunkHeader(c)
	return tick, index, count, err
}

// NewReplica builds a replica from the chunks of one snapshot, given in
// any order. A missing, repeated or foreign chunk is an error.
func NewReplica(chunks [][]byte) (*Replica, error) { return NewReplicaWithin(chunks, MaxPixels) }

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

// ErrTooLarge says a snapshot's world is larger than its follower takes.
var ErrTooLarge = errors.New("game: snapshot of a world larger than this follower takes")

// pixRun is one run of equal pixels.
type pixRun struct {
	n int
	p Pixel
}

func decodeSnapshot(b []byte, maxPixels int) (*Replica, error) {
	rd := reader{b: b}
	rd.header(msgSnapshot)
	var d dims
	d.w = rd.int("width", MaxSide)
	d.h = rd.int("height", MaxSide)
	d.max = rd.int("capacity", MaxCapacity)
	if rd.err == nil && (d.w < MinSide || d.h < MinSide || d.w*d.h > MaxPixels || d.max < 1) {
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
	recs := rd.snakes(nil, &d, func(int) SnakeInfo { return SnakeInfo{} }, false)
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
		grid:   make([]Pixel, area),
		snakes: make([]SnakeInfo, d.max),
		heads:  make([]headMark, d.max),
		counts: make([]int32, 512),
	}
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
		r.snakes[x.slot] = x.info
	}
	r.commitTail(&t)
	r.publish()
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
		r.kills[r.nkills%MaxKills] = k
		r.nkills++
	}
}

// Apply applies a delta. A delta whose base is not the replica's tick is
// refused with an error wrapping ErrGap; a delta that does not decode,
// with one wrapping ErrCorrupt. Either way the replica is left unchanged.
func (r *Replica) Apply(msg []byte) error {
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
	d := dims{w: r.w, h: r.h, max: r.maxSnakes}
	d.nslots = rd.int("slots", r.maxSnakes)
	if rd.err == nil && d.nslots < r.nslots {
		rd.fail("slot count shrinks")
	}
	r.recs = rd.snakes(r.recs[:0], &d, func(s int) SnakeInfo { return r.snakes[s] }, true)
	t := tailRec{kills: r.nkill[:0], best: r.best}
	rd.tail(&t, &d, false)
	r.nkill = t.kills
	n := rd.uvarint("pixel count") // grid writes, a move's two (in 1 byte or more)
	if rd.err == nil && n > 2*uint64(len(rd.b)) {
		rd.fail("pixel count")
	}
	slot := (r.seq + 1) % logN
	log := r.logs[slot][:0]
	var pc pixCoder
	area := r.w * r.h
	r.tries++
	r.moves = r.moves[:0]
	for rd.err == nil && uint64(len(log)) < n {
		u := rd.uvarint("grid write")
		if u < 128 {
			// a move: the Body at the snake's head, the Head one pixel on
			s := pc.slot + 1 + int(u&31)
			if u&31 == 31 {
				s = rd.int("move slot", 0xffff)
			}
			h, hp := -1, Pixel(0)
			if rd.err == nil && s < d.nslots {
				h, hp = r.headAt(s)
			}
			if h < 0 || uint64(len(log))+2 > n {
				rd.fail("move of a snake without a head")
				break
			}
			x, y := h%r.w, h/r.w
			step := int(u>>5&1)*2 - 1 // Right, Down: +1
			if u&(1<<6) != 0 {
				y = (y + step + r.h) % r.h
			} else {
				x = (x + step + r.w) % r.w
			}
			i := y*r.w + x
			c := Pixel(uint32(hp&(15<<16)) | uint32(s))
			log = append(log, change{int32(h), Pixel(Body)<<20 | c}, change{int32(i), Pixel(Head)<<20 | c})
			pc.i, pc.slot = int32(i), s
			r.heads[s] = headMark{r.tries, int32(i), Pixel(Head)<<20 | c}
			r.moves = append(r.moves, moveDir{int32(s), moveDirs[u>>5&3]})
			continue
		}
		i := int(pc.i) + unzig(u-128)
		p := rd.pix(&pc, &d)
		if rd.err != nil {
			break
		}
		if i < 0 || i >= area {
			rd.fail("pixel index")
			break
		}
		pc.i = int32(i)
		log = append(log, change{int32(i), p})
		if p.Kind() == Head {
			r.heads[p.Slot()] = headMark{r.tries, int32(i), p}
		}
	}
	r.logs[slot] = log[:0] // keep the capacity, whatever happens
	if rd.err == nil && len(rd.b) != 0 {
		rd.fail("trailing bytes")
	}
	if rd.err != nil {
		return rd.err
	}
	// valid: commit. A snake's head is its slot's last Head pixel, if
	// the delta wrote one, and none when it has no length; its dir is its
	// last move's, unless its record sets it.
	r.logs[slot] = log
	for _, m := range r.moves {
		r.snakes[m.slot].Dir = m.dir
	}
	for _, x := range r.recs {
		dir := r.snakes[x.slot].Dir
		r.snakes[x.slot] = x.info
		if !x.dir {
			r.snakes[x.slot].Dir = dir
		}
	}
	for _, c := range log {
		r.grid[c.i] = c.p
		if c.p.Kind() == Head {
			if s := &r.snakes[c.p.Slot()]; s.Length > 0 {
				s.Head = Point{int(c.i) % r.w, int(c.i) / r.w}
			}
		}
	}
	for _, x := range r.recs {
		if x.info.Length == 0 {
			r.snakes[x.slot].Head = Point{}
		}
	}
	r.nslots = d.nslots
	r.logs[slot] = r.expired(log, base, tick)
	r.commitTail(&t)
	r.tick = tick
	r.seq++
	r.publish()
	return nil
}

// headMark is where a delta being decoded last wrote a slot's Head pixel.
type headMark struct {
	try uint64 // the Apply that wrote it (Replica.tries); else stale
	i   int32
	p   Pixel
}

// headAt returns the pixel index of slot's head as the delta being decoded
// has it so far, and the pixel there: its last Head pixel, else the
// snake's head before the delta; -1 when the snake has no length (no head).
func (r *Replica) headAt(slot int) (int, Pixel) {
	if m := r.heads[slot]; m.try == r.tries {
		return int(m.i), m.p
	}
	if s := &r.snakes[slot]; s.Length > 0 {
		i := s.Head.Y*r.w + s.Head.X
		return i, r.grid[i]
	}
	return -1, 0
}

// expired appends to log, as writes of the pixels they already hold, the
// bodies of the snakes whose spawn protection ended after tick from and at
// or before tick to: their look changes without a grid write, and a view
// marks the tiles of every pixel its log writes (World.markExpired marks
// the same tiles). A snake's body is the pixels of its slot connected to
// its head: no other pixel holds its slot.
func (r *Replica) expired(log []change, from, to uint64) []change {
	const seen = 1 << 31 // above pixBits: set while a fill runs
	for i := range r.snakes[:r.nslots] {
		s := &r.snakes[i]
		if !s.Alive || s.ProtectedUntil <= from || s.ProtectedUntil > to || s.Length == 0 {
			continue
		}
		h := int32(s.Head.Y*r.w + s.Head.X)
		if p := r.grid[h]; p.Kind() < Body || p.Slot() != i {
			continue
		}
		start := len(log)
		log = append(log, change{h, r.grid[h]})
		r.grid[h] |= seen
		for k := start; k < len(log); k++ {
			c := int(log[k].i)
			x, y := c%r.w, c/r.w
			for _, n := range [4]int{
				y*r.w + (x+1)%r.w, y*r.w + (x+r.w-1)%r.w,
				(y+1)%r.h*r.w + x, (y+r.h-1)%r.h*r.w + x,
			} {
				if p := r.grid[n]; p&seen == 0 && p.Kind() >= Body && p.Slot() == i {
					log = append(log, change{int32(n), p})
					r.grid[n] = p | seen
				}
			}
		}
		for _, c := range log[start:] {
			r.grid[c.i] &^= seen
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
func (r *Replica) Acquire() *View {
	for {
		v := r.newest.Load()
		v.st.refs.Add(1)
		if r.newest.Load() == v {
			return v
		}
		v.st.refs.Add(-1)
	}
}

// Skipped reports how many deltas were not published because every view
// buffer was held by a reader.
func (r *Replica) Skipped() uint64 { return r.skipped.Load() }

// publish brings a free view buffer up to date and makes it the newest, as
// World.publish does.
func (r *Replica) publish() {
	v := nextView(&r.pool, r.newest.Load(), r.w, r.h, r.maxSnakes)
	if v == nil {
		r.skipped.Add(1)
		return
	}
	r.cells = cellMap(r.cells, r.w, r.h)
	v.index(v.sync(r.grid, &r.logs, r.seq, r.tick, r.cells), r.cells)
	v.st.seq = r.seq
	v.Tick = r.tick
	v.Snakes = append(v.Snakes[:0], r.snakes[:r.nslots]...)
	r.rank(v.Snakes)
	v.MarkShields()
	v.Top = v.Top[:0]
	for _, s := range r.top[:r.ntop] {
		in := &v.Snakes[s]
		v.Top = append(v.Top, Entry{Slot: int(s), Name: in.Name, Length: in.Length})
	}
	v.Players, v.Bots, v.Best = r.players, r.bots, r.best
	v.Kills = v.Kills[:0]
	for k := r.nkills - min(r.nkills, MaxKills); k < r.nkills; k++ {
		if x := &r.kills[k%MaxKills]; x.Tick+KillTicks > r.tick {
			v.Kills = append(v.Kills, *x)
		}
	}
	r.newest.Store(v)
}

// rank sets each live snake's Rank: 1 + the number of live snakes longer
// (World.rank's rule, equal lengths share a rank).
func (r *Replica) rank(ss []SnakeInfo) {
	maxLen := 0
	for i := range ss {
		if ss[i].Alive {
			maxLen = max(maxLen, ss[i].Length)
		}
	}
	if maxLen+2 > len(r.counts) {
		r.counts = make([]int32, 2*(maxLen+2))
	}
	cnt := r.counts[:maxLen+2]
	clear(cnt)
	for i := range ss {
		if ss[i].Alive {
			cnt[ss[i].Length]++
		}
	}
	var above int32
	for l := maxLen + 1; l >= 0; l-- {
		c := cnt[l]
		cnt[l] = above
		above += c
	}
	for i := range ss {
		ss[i].Rank = 0
		if ss[i].Alive {
			ss[i].Rank = int(cnt[ss[i].Length]) + 1
		}
	}
}
