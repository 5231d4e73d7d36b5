package wire

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"

	"snaked/game"
)

// # Regions
//
// The same steps a delta carries can be written in a regional form, for
// followers that show only parts of the world: the world is cut into a
// fixed grid of regions (Regions, RW x RH pixels, the last column and row
// cut short by the world's edge), and each step's delta into
//
//   - a global message (kind 4): the base and new tick, the region grid's
//     RW and RH, a bitset of the regions that have a message this time
//     (region r at bit r%8 of byte r/8), then the delta's slot count,
//     snake records and tail exactly as the delta has them, then the
//     heads, which is what a follower needs to know every snake's head
//     and dir without any pixel: a bitset by slot (its byte count, the
//     bytes) of the snakes whose only Head write of the steps was one
//     move in the dir they had, then every move and every other write of
//     a Head pixel of the other snakes, in order, as the delta's
//     grid-write items (count, items);
//   - a region message (kind 5) for each region that changed: the region,
//     the tick, then the grid writes that fall in it, in the steps' order
//     (count, items). A move whose two writes fall in the region is one
//     item, as in a delta, when the follower can find the snake's head
//     from this message alone or from the heads before the steps: the
//     last Head pixel of its slot among this message's writes, where the
//     last of the slot's Head writes was this region's move item, else
//     its head before the steps; otherwise its two writes go as two
//     items, each in its region. Any other write is u = itemWrite +
//     2*zig(d) + e, d its index in the region (row by row across the
//     region's width) less the last item's (a move's: its Head's), then,
//     when e is 0, its pixel; e is 1 for an Empty pixel, which needs none.
//     After the steps' writes, the pixels of the bodies whose spawn
//     protection ended in these steps (their look changes without a write)
//     follow as writes of the pixel they hold, so a follower's views mark
//     them as the world's do.
//
// A region snapshot (kind 6) is one region's pixels at one tick: the
// region, the tick, then runs (length, pixel) covering the region's
// pixels row by row. A follower of regions starts from a whole snapshot,
// then takes each tick's global message with the messages of the regions
// it follows (ApplyRegions); it starts following a region with that
// region's snapshot of the tick it is at (ApplyRegionSnapshot) and stops
// at will (Unfollow). The pixels of a region it does not follow are
// stale; everything else it has is the world's.

// Message kinds of the regional form.
const (
	msgGlobal     = 4
	msgRegion     = 5
	msgRegionSnap = 6
)

// Region grids a follower accepts: regions of at least minRegion pixels
// a side, at most maxRegions of them.
const (
	minRegion  = 16
	maxRegions = 1 << 16
)

// Regions is a grid of regions over a W x H world: NX x NY regions of
// RW x RH pixels, numbered row by row from the top left.
type Regions struct{ W, H, RW, RH, NX, NY int }

// NewRegions returns the grid of rw x rh regions over a w x h world.
func NewRegions(w, h, rw, rh int) (Regions, error) {
	if rw < minRegion || rh < minRegion || rw%game.TileW != 0 || rh%game.TileH != 0 || w < 1 || h < 1 {
		return Regions{}, fmt.Errorf("wire: regions of %dx%d pixels: want at least %d, in whole tiles", rw, rh, minRegion)
	}
	g := Regions{W: w, H: h, RW: rw, RH: rh, NX: (w + rw - 1) / rw, NY: (h + rh - 1) / rh}
	if g.NX*g.NY > maxRegions {
		return Regions{}, fmt.Errorf("wire: %d regions of %dx%d pixels, more than %d", g.NX*g.NY, rw, rh, maxRegions)
	}
	return g, nil
}

// Count is the number of regions.
func (g Regions) Count() int { return g.NX * g.NY }

// Of returns the region of pixel index i.
func (g Regions) Of(i int) int {
	y := i / g.W
	return y/g.RH*g.NX + (i-y*g.W)/g.RW
}

// At returns the region of pixel (x, y), both wrapped onto the world.
func (g Regions) At(x, y int) int {
	x, y = (x%g.W+g.W)%g.W, (y%g.H+g.H)%g.H
	return y/g.RH*g.NX + x/g.RW
}

// Rect returns region r's top left pixel and its size.
func (g Regions) Rect(r int) (x, y, w, h int) {
	x, y = r%g.NX*g.RW, r/g.NX*g.RH
	return x, y, min(g.RW, g.W-x), min(g.RH, g.H-y)
}

// Split is the regional form of one delta (see Regions): the global
// message and one message a region that changed. Encoder.AppendDeltaSplit
// fills it; what it holds is valid until the next call. It is not safe
// for concurrent use.
type Split struct {
	g       Regions
	global  []byte
	msgs    [][]byte       // by region: its message, empty when it has none
	items   [][]game.Write // by region: its writes, a move's two with the move's Dir
	changed []int32
	bits    []byte

	round uint64     // splits made
	stamp []uint64   // by slot: the round of its last Head write
	hreg  []int32    // by slot: that write's region
	hn    []int32    // by slot: its Head writes this round
	hone  []bool     // by slot: its first Head write this round is a move in dir
	dir   []game.Dir // by slot: its dir before this round, as a follower has it
	heads []game.Write
	hbits []byte
	prot  []protected // snakes whose spawn protection may end
	until []uint64    // by slot: the end of the protection prot lists for it (0: none)
	fill  []int32     // scratch: a body being found

	// of's tables, by a pixel's row and column (rows finds them)
	rows     game.Rows
	rowFirst []int32 // by row: the first region of its band
	colReg   []int32 // by column: its region in a band
	rowY0    []int32 // by row: the first row of its band
	colX0    []int32 // by column: the first column of its region
}

// tables makes of's tables for s's grid.
func (s *Split) tables() {
	g := s.g
	s.rows = game.NewRows(g.W)
	s.rowFirst, s.rowY0 = make([]int32, g.H), make([]int32, g.H)
	for y := range g.H {
		s.rowFirst[y], s.rowY0[y] = int32(y/g.RH*g.NX), int32(y/g.RH*g.RH)
	}
	s.colReg, s.colX0 = make([]int32, g.W), make([]int32, g.W)
	for x := range g.W {
		s.colReg[x], s.colX0[x] = int32(x/g.RW), int32(x/g.RW*g.RW)
	}
}

// of returns the region of pixel index i, and i's place in it: its row and
// column there. Regions.Of without a division.
func (s *Split) of(i int) (r, ly, lx int) {
	x, y := s.rows.XY(i)
	return int(s.rowFirst[y] + s.colReg[x]), y - int(s.rowY0[y]), x - int(s.colX0[x])
}

// protected is a snake whose spawn protection ends at until.
type protected struct {
	slot  int32
	id    game.ID
	until uint64
}

// NewSplit returns a Split of e's world into regions of rw x rh pixels.
func NewSplit(e *Encoder, rw, rh int) (*Split, error) {
	w, h := e.f.Size()
	g, err := NewRegions(w, h, rw, rh)
	if err != nil {
		return nil, err
	}
	n := g.Count()
	c := e.f.Capacity()
	s := &Split{g: g, msgs: make([][]byte, n), items: make([][]game.Write, n), bits: make([]byte, (n+7)/8),
		stamp: make([]uint64, c), hreg: make([]int32, c), hn: make([]int32, c), hone: make([]bool, c), dir: make([]game.Dir, c),
		until: make([]uint64, c)}
	s.tables()
	s.rebase(e.f)
	return s, nil
}

// rebase takes the world now as what followers have: the snakes' dirs
// and the spawn protections still running.
func (s *Split) rebase(f game.Feed) {
	s.prot = s.prot[:0]
	clear(s.dir)
	clear(s.until)
	for i := range f.Slots() {
		s.watch(f, i)
		s.dir[i] = f.Shape(i).Dir
	}
}

// Regions is the split's grid.
func (s *Split) Regions() Regions { return s.g }

// Global is the global message; empty when the delta was.
func (s *Split) Global() []byte { return s.global }

// Changed lists the regions that have a message, in increasing order.
func (s *Split) Changed() []int32 { return s.changed }

// Region returns region r's message, empty when it has none.
func (s *Split) Region(r int) []byte { return s.msgs[r] }

func (s *Split) reset() {
	for _, r := range s.changed {
		s.msgs[r] = s.msgs[r][:0]
	}
	s.changed = s.changed[:0]
	s.global = s.global[:0]
}

// watch notes slot i's snake when its spawn protection has not ended and
// is not noted yet (a record changes more than once while protected).
func (s *Split) watch(f game.Feed, i int) {
	r := f.Record(i)
	if r.Used && r.Alive && r.ProtectedUntil > f.Tick() && s.until[i] != r.ProtectedUntil {
		s.prot = append(s.prot, protected{int32(i), r.ID, r.ProtectedUntil})
		s.until[i] = r.ProtectedUntil
	}
}

// split writes the regional form of the steps after e's baseline up to
// seq; recs is the delta's slot count, records and tail.
func (s *Split) split(e *Encoder, recs []byte, seq uint64) {
	f := e.f
	base, tick := e.tick, f.Tick()
	s.round++
	s.heads = s.heads[:0]
	for k := e.seq + 1; k <= seq; k++ {
		s.splitLog(f.Writes(k))
	}
	// protections that ended: the full marks name the snakes that spawned
	nw := (f.Slots() + 63) / 64
	for k, word := range e.marked[:nw] {
		for ; word != 0; word &= word - 1 {
			s.watch(f, k*64+bits.TrailingZeros64(word))
		}
	}
	keep := s.prot[:0]
	for _, p := range s.prot {
		if p.until > tick {
			keep = append(keep, p)
			continue
		}
		if s.until[p.slot] == p.until {
			s.until[p.slot] = 0
		}
		if p.until > base {
			s.expire(f, p)
		}
	}
	s.prot = keep
	// the messages
	clear(s.bits)
	for r := range s.items {
		if len(s.items[r]) == 0 {
			continue
		}
		s.changed = append(s.changed, int32(r))
		s.bits[r/8] |= 1 << (r % 8)
		m := append(s.msgs[r][:0], Version, msgRegion)
		m = binary.AppendUvarint(m, uint64(r))
		m = binary.AppendUvarint(m, tick)
		m = binary.AppendUvarint(m, uint64(len(s.items[r])))
		s.msgs[r] = s.appendRegion(m, r, s.items[r])
		s.items[r] = s.items[r][:0]
	}
	g := append(s.global[:0], Version, msgGlobal)
	g = binary.AppendUvarint(g, base)
	g = binary.AppendUvarint(g, tick)
	g = binary.AppendUvarint(g, uint64(s.g.RW))
	g = binary.AppendUvarint(g, uint64(s.g.RH))
	g = binary.AppendUvarint(g, uint64(len(s.bits)))
	g = append(g, s.bits...)
	g = append(g, recs...)
	s.turned(f, e.marked[:2*nw])
	s.global = s.appendHeads(g, f.Slots())
}

// turned brings the dirs up to the world's after the steps split: the
// last move's, unless the slot is marked (game.Feed). Call it before
// appendHeads, which reorders the heads.
func (s *Split) turned(f game.Feed, marked []uint64) {
	for _, c := range s.heads {
		if d := c.Dir(); d != game.None {
			s.dir[c.Pixel().Slot()] = d
		}
	}
	nw := len(marked) / 2
	for k, word := range marked {
		for ; word != 0; word &= word - 1 {
			i := k%nw*64 + bits.TrailingZeros64(word)
			s.dir[i] = f.Shape(i).Dir
		}
	}
}

// appendHeads appends the heads of the steps split (see Regions): a
// bitset of the slots whose only Head write was one move in the dir they
// had, then the other slots' moves and Head writes as grid-write items.
func (s *Split) appendHeads(dst []byte, slots int) []byte {
	nb := (slots + 7) / 8
	s.hbits = append(s.hbits[:0], make([]byte, nb)...)
	n := 0
	for k := 0; k < len(s.heads); k++ {
		slot := s.heads[k].Pixel().Slot()
		if s.hn[slot] == 1 && s.hone[slot] {
			s.hbits[slot/8] |= 1 << (slot % 8)
			k++ // the move's Head write
			continue
		}
		if s.heads[k].Dir() != game.None {
			s.heads[n], s.heads[n+1] = s.heads[k], s.heads[k+1]
			n += 2
			k++
			continue
		}
		s.heads[n] = s.heads[k]
		n++
	}
	dst = binary.AppendUvarint(dst, uint64(nb))
	dst = append(dst, s.hbits...)
	dst = binary.AppendUvarint(dst, uint64(n))
	var pc pixCoder
	return pc.appendLog(dst, s.heads[:n])
}

// splitLog files one step's writes into the regions' lists and the
// heads.
func (s *Split) splitLog(log []game.Write) {
	for k := 0; k < len(log); k++ {
		c := log[k]
		if c.Dir() != game.None && k+1 < len(log) { // a move
			h := log[k+1]
			slot := c.Pixel().Slot()
			s.heads = append(s.heads, c, h)
			k++
			a, _, _ := s.of(c.Index())
			b, _, _ := s.of(h.Index())
			first := s.stamp[slot] != s.round
			if a == b && (first || s.hreg[slot] == int32(a)) {
				s.items[a] = append(s.items[a], c, h)
			} else {
				s.items[a] = append(s.items[a], game.MakeWrite(c.Index(), c.Pixel(), game.None))
				s.items[b] = append(s.items[b], h)
			}
			s.head(slot, b, first, c.Dir() == s.dir[slot])
			continue
		}
		r, _, _ := s.of(c.Index())
		if c.Pixel().Kind() == game.Head {
			slot := c.Pixel().Slot()
			s.heads = append(s.heads, c)
			s.head(slot, r, s.stamp[slot] != s.round, false)
		}
		s.items[r] = append(s.items[r], c)
	}
}

// appendRegion appends region r's writes as a region message's items
// (see Regions).
func (s *Split) appendRegion(dst []byte, r int, log []game.Write) []byte {
	_, _, rw, _ := s.g.Rect(r)
	dst = slices.Grow(dst, 9*len(log))
	var pc pixCoder
	prev := 0 // the last item's index in the region
	for k := 0; k < len(log); k++ {
		c := log[k]
		if c.Dir() != game.None && k+1 < len(log) { // a move, as encodeLog writes it
			slot := c.Pixel().Slot()
			g := slot - pc.slot - 1
			pc.slot = slot
			if h := moveBits[c.Dir()]; uint(g) < moveGap {
				dst = append(dst, h|byte(g))
			} else {
				dst = binary.AppendUvarint(append(dst, h|moveGap), uint64(slot))
			}
			k++
			_, ly, lx := s.of(log[k].Index())
			prev = ly*rw + lx
			continue
		}
		_, ly, lx := s.of(c.Index())
		l := ly*rw + lx
		u := itemWrite + 2*zig(l-prev)
		prev = l
		p := c.Pixel()
		if p == 0 {
			dst = binary.AppendUvarint(dst, u+1)
			continue
		}
		dst = pc.appendPix(binary.AppendUvarint(dst, u), p)
	}
	return dst
}

// head notes a Head write of slot in region r: the first of the round, a
// move in the slot's dir.
func (s *Split) head(slot, r int, first, straight bool) {
	if first {
		s.stamp[slot], s.hn[slot], s.hone[slot] = s.round, 0, straight
	}
	s.hreg[slot] = int32(r)
	s.hn[slot]++
}

// expire files the pixels of p's body, as they are, in their regions'
// messages: the pixels of its slot connected to its head.
func (s *Split) expire(f game.Feed, p protected) {
	r := f.Record(int(p.slot))
	if !r.Used || !r.Alive || r.ID != p.id || r.ProtectedUntil != p.until || r.Length == 0 {
		return
	}
	w, h := f.Size()
	pix := f.Pixels()
	slot := int(p.slot)
	at := r.Head.Y*w + r.Head.X
	if q := pix[at]; q.Kind() < game.Body || q.Slot() != slot {
		return
	}
	s.fill = append(s.fill[:0], int32(at))
	for k := 0; k < len(s.fill) && len(s.fill) < maxFill; k++ {
		c := int(s.fill[k])
		x, y := c%w, c/w
		for _, n := range [4]int{y*w + (x+1)%w, y*w + (x+w-1)%w, (y+1)%h*w + x, (y+h-1)%h*w + x} {
			if q := pix[n]; q.Kind() >= game.Body && q.Slot() == slot && !slices.Contains(s.fill, int32(n)) {
				s.fill = append(s.fill, int32(n))
			}
		}
	}
	for _, c := range s.fill {
		r, _, _ := s.of(int(c))
		s.items[r] = append(s.items[r], game.MakeWrite(int(c), pix[c], game.None))
	}
}

// maxFill bounds the body expire looks for: a snake's spawn protection
// ends while it is short.
const maxFill = 4096

// AppendRegionSnapshot appends the snapshot of region r of world w now.
// Call it between Steps on the goroutine that calls Step: it applies to a
// follower at the tick of the last delta encoded.
func AppendRegionSnapshot(dst []byte, w *game.World, g Regions, r int) []byte {
	f := w.Feed()
	x0, y0, rw, rh := g.Rect(r)
	dst = append(dst, Version, msgRegionSnap)
	dst = binary.AppendUvarint(dst, uint64(r))
	dst = binary.AppendUvarint(dst, f.Tick())
	pix := f.Pixels()
	var pc pixCoder
	n, last := 0, game.Pixel(0)
	for y := y0; y < y0+rh; y++ {
		for _, p := range pix[y*g.W+x0 : y*g.W+x0+rw] {
			if n > 0 && p != last {
				dst = pc.appendPix(binary.AppendUvarint(dst, uint64(n)), last)
				n = 0
			}
			last = p
			n++
		}
	}
	return pc.appendPix(binary.AppendUvarint(dst, uint64(n)), last)
}

// RegionSnapshotInfo returns the region and tick of a region snapshot.
func RegionSnapshotInfo(msg []byte) (region int, tick uint64, err error) {
	rd := reader{b: msg}
	rd.header(msgRegionSnap)
	region = rd.int("region", maxRegions-1)
	tick = rd.uvarint("tick")
	return region, tick, rd.err
}

// RegionSet is a bitset of regions: region r at bit r%8 of byte r/8.
type RegionSet []byte

// Has reports whether region r is in the set.
func (s RegionSet) Has(r int) bool { return r >= 0 && r/8 < len(s) && s[r/8]>>(r%8)&1 != 0 }

// GlobalInfo reads a global message's head: its base and new tick, and
// the regions that have a message with it (a slice of msg).
func GlobalInfo(msg []byte) (base, tick uint64, changed RegionSet, err error) {
	rd := reader{b: msg}
	rd.header(msgGlobal)
	base = rd.uvarint("base tick")
	tick = rd.uvarint("tick")
	rd.uvarint("region width")
	rd.uvarint("region height")
	n := rd.int("region bits", maxRegions/8)
	if rd.err == nil && n > len(rd.b) {
		rd.fail("region bits")
	}
	if rd.err != nil {
		return 0, 0, nil, rd.err
	}
	return base, tick, RegionSet(rd.b[:n]), nil
}

// GlobalRegions returns the region size a global message is of.
func GlobalRegions(msg []byte) (rw, rh int, err error) {
	rd := reader{b: msg}
	rd.header(msgGlobal)
	rd.uvarint("base tick")
	rd.uvarint("tick")
	rw = rd.int("region width", game.MaxSide)
	rh = rd.int("region height", game.MaxSide)
	return rw, rh, rd.err
}

// RegionInfo returns the region and tick of a region message.
func RegionInfo(msg []byte) (region int, tick uint64, err error) {
	rd := reader{b: msg}
	rd.header(msgRegion)
	region = rd.int("region", maxRegions-1)
	tick = rd.uvarint("tick")
	return region, tick, rd.err
}

// regional is a Replica's state as a follower of regions.
type regional struct {
	g      Regions
	follow []bool // by region
	hlog   []game.Write
	gmoves []moveDir
	staged []game.Write // region snapshots' pixels, for the next publish
	got    []bool       // scratch: regions given to ApplyRegions
}

// FollowRegions makes r a follower of regions of rw x rh pixels
// (ApplyRegions) that follows none of them yet: its pixels are the
// snapshot's until Follow, ApplyRegionSnapshot or Unfollow say otherwise.
func (r *Replica) FollowRegions(rw, rh int) error {
	g, err := NewRegions(r.w, r.h, rw, rh)
	if err != nil {
		return err
	}
	r.reg = &regional{g: g, follow: make([]bool, g.Count()), got: make([]bool, g.Count())}
	return nil
}

// Regions is the grid r follows; the zero Regions before FollowRegions.
func (r *Replica) Regions() Regions {
	if r.reg == nil {
		return Regions{}
	}
	return r.reg.g
}

// Following reports whether r follows region i.
func (r *Replica) Following(i int) bool {
	return r.reg != nil && i >= 0 && i < len(r.reg.follow) && r.reg.follow[i]
}

// Follow makes r follow region i from its pixels now: right only while
// they are the world's (just after the whole snapshot it was built from).
func (r *Replica) Follow(i int) {
	if r.reg != nil && i >= 0 && i < len(r.reg.follow) {
		r.reg.follow[i] = true
	}
}

// Unfollow stops following region i: its pixels go stale.
func (r *Replica) Unfollow(i int) {
	if r.reg != nil && i >= 0 && i < len(r.reg.follow) {
		r.reg.follow[i] = false
	}
}

// ApplyRegionSnapshot takes a region snapshot of the replica's tick in:
// its pixels go into the grid and into the views at the next
// ApplyRegions, and the region is followed from then on. A snapshot of
// another tick is refused with an error wrapping ErrGap; one that does not
// decode with one wrapping ErrCorrupt, and the replica is left as it was.
func (r *Replica) ApplyRegionSnapshot(msg []byte) (int, error) {
	g := r.reg
	if g == nil {
		return 0, fmt.Errorf("%w: a region snapshot for a replica that follows no regions", ErrCorrupt)
	}
	rd := reader{b: msg}
	rd.header(msgRegionSnap)
	reg := rd.int("region", g.g.Count()-1)
	tick := rd.uvarint("tick")
	if rd.err != nil {
		return 0, rd.err
	}
	if tick != r.tick {
		return reg, fmt.Errorf("%w (region snapshot of tick %d, replica at %d)", ErrGap, tick, r.tick)
	}
	x0, y0, rw, rh := g.g.Rect(reg)
	d := dims{w: r.w, h: r.h, max: r.maxSnakes, nslots: r.nslots}
	var pc pixCoder
	start := len(g.staged)
	x, y := 0, 0
	for left := rw * rh; left > 0 && rd.err == nil; {
		n := rd.int("run", left)
		if n == 0 {
			rd.fail("empty run")
		}
		p := rd.pix(&pc, &d)
		for k := 0; k < n && rd.err == nil; k++ {
			i := (y0+y)*r.w + x0 + x
			if r.grid[i] != p {
				g.staged = append(g.staged, game.MakeWrite(i, p, game.None))
			}
			if x++; x == rw {
				x, y = 0, y+1
			}
		}
		left -= n
	}
	if rd.err == nil && len(rd.b) != 0 {
		rd.fail("trailing bytes")
	}
	if rd.err != nil {
		g.staged = g.staged[:start]
		return reg, rd.err
	}
	for _, c := range g.staged[start:] {
		r.grid[c.Index()] = c.Pixel()
	}
	g.follow[reg] = true
	return reg, nil
}

// ApplyRegions applies one global message with the messages of the
// regions r follows that changed (its bitset), in any order, and
// publishes the view. A global message whose base is not the replica's
// tick is refused with an error wrapping ErrGap, as is a set of region
// messages that misses a followed region that changed (Unfollow it first)
// or holds one of another tick; one that does not decode with one
// wrapping ErrCorrupt. Either way the replica is left unchanged.
func (r *Replica) ApplyRegions(global []byte, regions [][]byte) error {
	return r.applyRegions(global, regions, true)
}

// ApplyRegionsQuiet is ApplyRegions without the view (see ApplyQuiet).
func (r *Replica) ApplyRegionsQuiet(global []byte, regions [][]byte) error {
	return r.applyRegions(global, regions, false)
}

func (r *Replica) applyRegions(global []byte, regions [][]byte, publish bool) error {
	g := r.reg
	if g == nil {
		return fmt.Errorf("%w: regions for a replica that follows none", ErrCorrupt)
	}
	rd := reader{b: global}
	rd.header(msgGlobal)
	base := rd.uvarint("base tick")
	tick := rd.uvarint("tick")
	rw := rd.uvarint("region width")
	rh := rd.uvarint("region height")
	if rd.err != nil {
		return rd.err
	}
	if base != r.tick {
		return fmt.Errorf("%w (global message from tick %d to %d, replica at %d)", ErrGap, base, tick, r.tick)
	}
	if tick <= base || rw != uint64(g.g.RW) || rh != uint64(g.g.RH) {
		return fmt.Errorf("%w: global message from tick %d to %d of %dx%d regions", ErrCorrupt, base, tick, rw, rh)
	}
	nb := rd.int("region bits", len(g.follow))
	if rd.err == nil && (nb != (g.g.Count()+7)/8 || nb > len(rd.b)) {
		rd.fail("region bits")
	}
	if rd.err != nil {
		return rd.err
	}
	chg := RegionSet(rd.b[:nb])
	rd.b = rd.b[nb:]
	var t tailRec
	d := r.decodeRecords(&rd, &t)
	straight := r.straightBits(&rd, &d)
	g.hlog = r.decodeWrites(&rd, &d, g.hlog[:0]) // the heads: no pixel is kept
	g.gmoves = append(g.gmoves[:0], r.moves...)
	if rd.err == nil && len(rd.b) != 0 {
		rd.fail("trailing bytes")
	}
	if rd.err != nil {
		return rd.err
	}
	// the regions' writes, each region's within it
	log := append(r.views.Log(r.seq+1), g.staged...)
	clear(g.got)
	for _, m := range regions {
		rr := reader{b: m}
		rr.header(msgRegion)
		reg := rr.int("region", len(g.follow)-1)
		t := rr.uvarint("tick")
		if rr.err != nil {
			return rr.err
		}
		if t != tick || !g.follow[reg] || !chg.Has(reg) || g.got[reg] {
			return fmt.Errorf("%w (region %d's message of tick %d with the global one of tick %d)", ErrGap, reg, t, tick)
		}
		g.got[reg] = true
		log = r.decodeRegion(&rr, &d, log, reg) // each write in the region
		if rr.err == nil && len(rr.b) != 0 {
			rr.fail("trailing bytes")
		}
		if rr.err != nil {
			return rr.err
		}
	}
	for reg, f := range g.follow {
		if f && chg.Has(reg) && !g.got[reg] {
			return fmt.Errorf("%w (no message of region %d at tick %d)", ErrGap, reg, tick)
		}
	}
	// valid but for the straight moves, which moveStraight checks as it
	// makes them (and takes back when one is not valid: nothing is changed
	// before them): commit, as Apply does, the heads from the global
	// message: the straight moves in the dirs from before it (a snake its
	// records leave without length loses its head below)
	if !r.moveStraight(straight) {
		return fmt.Errorf("%w: a straight move of a snake without a head or dir", ErrCorrupt)
	}
	r.commitRecords(g.gmoves)
	for _, c := range g.hlog {
		r.takeHead(c)
	}
	for _, c := range log[len(g.staged):] {
		r.grid[c.Index()] = c.Pixel()
	}
	r.noHeads()
	g.staged = g.staged[:0]
	r.nslots = d.nslots
	r.commitTail(&t)
	r.tick = tick
	r.seq++
	r.file(log, publish)
	return nil
}

// straightBits reads the bitset of the slots that moved once in their dir
// (see Regions), checks that it names no slot beyond the replica's, and
// returns it for moveStraight.
func (r *Replica) straightBits(rd *reader, d *dims) []byte {
	nb := rd.int("head bits", (d.nslots+7)/8)
	if rd.err == nil && (nb != (d.nslots+7)/8 || nb > len(rd.b)) {
		rd.fail("head bits")
	}
	if rd.err != nil {
		return nil
	}
	hb := rd.b[:nb]
	rd.b = rd.b[nb:]
	for k := r.nslots / 8; k < nb; k++ {
		if hb[k]>>max(r.nslots-k*8, 0) != 0 { // a bit of slot r.nslots or later
			rd.fail("a straight move of a slot not in use")
			return nil
		}
	}
	return hb
}

// moveStraight moves the head of each snake of hb (straightBits') one
// pixel on in its dir, which stays, and reports true; or, when one of
// them is not a snake with a head and a dir, takes back the moves made and
// reports false. Call it before the message's dirs and records are
// committed.
func (r *Replica) moveStraight(hb []byte) bool {
	for k, b := range hb {
		for ; b != 0; b &= b - 1 {
			slot := k*8 + bits.TrailingZeros8(b)
			h := &r.hot[slot]
			if h.lng == 0 || h.way == game.None || h.way > game.Left {
				r.unmoveStraight(hb, slot)
				return false
			}
			at := &r.at[slot]
			at.X, at.Y = r.step(at.X, at.Y, h.way)
			h.head = int32(at.Y*r.w + at.X)
		}
	}
	return true
}

// unmoveStraight takes back moveStraight's moves of the slots of hb below
// end.
func (r *Replica) unmoveStraight(hb []byte, end int) {
	for k, b := range hb {
		for ; b != 0; b &= b - 1 {
			slot := k*8 + bits.TrailingZeros8(b)
			if slot >= end {
				return
			}
			at := &r.at[slot]
			at.X, at.Y = r.step(at.X, at.Y, backDir[r.hot[slot].way])
			r.hot[slot].head = int32(at.Y*r.w + at.X)
		}
	}
}

// backDir is the opposite of each dir (None, Up, Right, Down, Left).
var backDir = [...]game.Dir{game.None, game.Down, game.Left, game.Up, game.Right}

// stepX and stepY are a step in each dir (None, Up, Right, Down, Left).
var (
	stepX = [...]int{0, 0, 1, 0, -1}
	stepY = [...]int{0, -1, 0, 1, 0}
)

// decodeRegion reads region reg's items (Split.appendRegion) onto log and
// returns it; moves as decodeWrites reads them. Every write it appends is
// in region reg: a write's place is counted within the region, and a move
// whose head or next pixel is elsewhere is refused. On an error it leaves
// rd.err set.
func (r *Replica) decodeRegion(rd *reader, d *dims, log []game.Write, reg int) []game.Write {
	n := rd.uvarint("pixel count") // grid writes, a move's two
	if rd.err == nil && n > 2*uint64(len(rd.b)) {
		rd.fail("pixel count")
	}
	x0, y0, rw, rh := r.reg.g.Rect(reg)
	in := game.NewRows(rw) // a place within the region: column and row
	var pc pixCoder
	r.newTry()
	r.moves = r.moves[:0]
	n += uint64(len(log))
	prev := 0
	for rd.err == nil && uint64(len(log)) < n {
		u := rd.uvarint("grid write")
		if u < itemWrite {
			// a move: the Body at the snake's head, the Head one pixel on
			m, ok := r.move(rd, d, u, pc.slot, uint64(len(log))+2 <= n)
			if !ok {
				break
			}
			if m.x < x0 || m.x >= x0+rw || m.y < y0 || m.y >= y0+rh || m.hx < x0 || m.hx >= x0+rw || m.hy < y0 || m.hy >= y0+rh {
				rd.fail("a move out of its region")
				break
			}
			log = r.appendMove(log, m)
			pc.slot, prev = m.s, (m.y-y0)*rw+m.x-x0
			continue
		}
		l := prev + unzig((u-itemWrite)>>1)
		p := game.Pixel(0)
		if u&1 == 0 {
			p = rd.pix(&pc, d)
		}
		if rd.err != nil {
			break
		}
		if l < 0 || l >= rw*rh {
			rd.fail("pixel index")
			break
		}
		prev = l
		lx, ly := in.XY(l)
		i := (y0+ly)*r.w + x0 + lx
		log = append(log, game.MakeWrite(i, p, game.None))
		if p.Kind() == game.Head {
			r.markHead(p.Slot(), int32(i), p)
		}
	}
	return log
}
