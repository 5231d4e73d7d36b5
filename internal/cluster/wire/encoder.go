package wire

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"

	"snaked/game"
)

// Encoder writes a world's deltas. Its baseline is the world as it last
// encoded it (at NewEncoder, the world then). It is not safe for concurrent
// use, and it reads the world's game.Feed: call it on the goroutine that
// calls Step, between Steps.
//
// It never scans every slot: it visits the slots the feed marks, and a
// moving snake's head travels as its Head pixels. Most marks are quick
// (turns and growth: dir, length, best length), which it compares with a
// small copy of those three fields; the others it compares with a compact
// copy of the rest of the record last sent.
type Encoder struct {
	f      game.Feed
	seq    uint64 // the world's step at the baseline
	tick   uint64
	deaths uint64
	shape  []shape // by slot: the dir, length and best length last sent
	sent   []sent  // by slot: the other fields last sent
	best   game.Entry
	marked []uint64 // scratch: the union of the steps' full marks, and of their quick marks
}

// shape is the part of a snake's record that turns and growth change, as
// a replica has it: the dir last sent, at step seq (a replica turns a snake
// to the direction of each of its moves, see replicaDir).
type shape struct {
	seq     uint64
	n, best int32
	dir     game.Dir
}

// replicaDir returns the dir a replica gives a snake whose last record
// went with sh and whose last move went in direction moveDir at step
// moveStep (its low 32 bits): the move's direction if it moved since,
// else the one sent. Steps compare in 32 bits, wrapping: right unless a
// snake moves for 2^31 steps (6.8 years at 10 ticks a second) after its
// last record.
func replicaDir(sh *shape, moveDir game.Dir, moveStep uint32) game.Dir {
	if int32(moveStep-uint32(sh.seq)) > 0 {
		return moveDir
	}
	return sh.dir
}

// A replica raises a snake's best length to its length after each record
// (a best length is never below the length, and grows only with it, or
// with a spawn, which sends it when that is not enough), so a turn or
// growth never sends it; shape.best is the best length the replica has.
//
// sent is the rest of a snake's record as last sent, but for the strings:
// a name changes only with the ID (a join, a leave), and a killer's name
// only with the death, the spawn or the ID (kill, spawn, join and leave set
// it), so the encoder sends them with those and keeps no copy.
type sent struct {
	id                       game.ID
	spawn, death, prot, dash uint64
	kills                    int32
	flags                    byte // as fFlags sends them
}

// flags is s's fFlags byte: colour, used, alive, bot.
func flags(s *game.SnakeInfo) byte {
	f := byte(s.Colour & flagColour)
	if s.Used {
		f |= flagUsed
	}
	if s.Alive {
		f |= flagAlive
	}
	if s.Bot {
		f |= flagBot
	}
	return f
}

// record returns what an encoder sends of r at step seq.
func record(r *game.Record, seq uint64) (shape, sent) {
	return shape{seq, int32(r.Length), int32(r.BestLength), r.Dir},
		sent{r.ID, r.SpawnTick, r.DeathTick, r.ProtectedUntil, r.DashReadyAt, int32(r.Kills), flags(&r.SnakeInfo)}
}

// NewEncoder returns an encoder of w whose baseline is the world now; a
// snapshot taken now is where its first delta applies.
func NewEncoder(w *game.World) *Encoder {
	f := w.Feed()
	n := f.Capacity()
	e := &Encoder{f: f, shape: make([]shape, n), sent: make([]sent, n), marked: make([]uint64, 2*((n+63)/64))}
	e.rebase()
	return e
}

// rebase makes the world now the baseline.
func (e *Encoder) rebase() {
	f := e.f
	e.seq, e.tick, e.deaths, e.best = f.Steps(), f.Tick(), f.Deaths(), f.Best()
	for i := range e.sent {
		e.shape[i], e.sent[i] = shape{}, sent{}
		if i < f.Slots() {
			r := f.Record(i)
			e.shape[i], e.sent[i] = record(&r, e.seq)
		}
	}
}

// AppendDelta appends to dst the delta from the encoder's baseline to the
// world now, and makes now the baseline. It appends nothing when the world
// has not stepped. When the feed no longer keeps the baseline's step (more
// than 15 Steps passed since), it appends nothing, rebases, and returns an
// error wrapping ErrGap (followers need a snapshot). With enough capacity
// in dst it allocates nothing.
func (e *Encoder) AppendDelta(dst []byte) ([]byte, error) { return e.appendDelta(dst, nil) }

// AppendDeltaSplit is AppendDelta that also writes the same steps in
// their regional form into s (Split): the delta it appends is the one
// AppendDelta would. When it appends nothing, s holds no messages.
func (e *Encoder) AppendDeltaSplit(dst []byte, s *Split) ([]byte, error) {
	s.reset()
	return e.appendDelta(dst, s)
}

// appendDelta is AppendDelta; with s, it fills s too.
func (e *Encoder) appendDelta(dst []byte, s *Split) ([]byte, error) {
	f := e.f
	seq := f.Steps()
	if seq == e.seq {
		return dst, nil
	}
	if !f.Kept(e.seq) { // kept, and so are the steps after it
		steps := seq - e.seq
		e.rebase()
		if s != nil {
			s.rebase(f)
		}
		return dst, fmt.Errorf("%w (the encoder is %d steps behind)", ErrGap, steps)
	}
	dst = append(dst, Version, msgDelta)
	dst = binary.AppendUvarint(dst, e.tick)
	dst = binary.AppendUvarint(dst, f.Tick())
	slots := len(dst)
	dst = binary.AppendUvarint(dst, uint64(f.Slots()))
	dst = e.appendRecords(dst, seq)
	dst = e.appendTail(dst)
	if s != nil {
		s.split(e, dst[slots:], seq)
	}

	// pixels: the writes of the steps since the baseline
	n := 0
	for s := e.seq + 1; s <= seq; s++ {
		n += len(f.Writes(s))
	}
	dst = binary.AppendUvarint(dst, uint64(n))
	var pc pixCoder
	for s := e.seq + 1; s <= seq; s++ {
		dst = pc.appendLog(dst, f.Writes(s))
	}
	e.seq, e.tick, e.deaths = seq, f.Tick(), f.Deaths()
	return dst, nil
}

// appendRecords appends the records of the slots the steps after the
// baseline marked, up to step seq, and the 0 that ends them.
func (e *Encoder) appendRecords(dst []byte, seq uint64) []byte {
	f := e.f
	nw := (f.Slots() + 63) / 64
	full, quick := e.marked[:nw], e.marked[nw:2*nw]
	mk, qk := f.Marked(e.seq + 1)
	copy(full, mk)
	copy(quick, qk)
	for s := e.seq + 2; s <= seq; s++ {
		mk, qk := f.Marked(s)
		for k, x := range mk[:nw] {
			full[k] |= x
		}
		for k, x := range qk[:nw] {
			quick[k] |= x
		}
	}
	last := -1
	for k, slow := range full {
		for word := slow | quick[k]; word != 0; word &= word - 1 {
			i := k*64 + bits.TrailingZeros64(word)
			sh := &e.shape[i]
			if slow&(1<<(i&63)) == 0 {
				// a turn or growth (the best length follows the length,
				// see sent): at most 1+3+1+1+5 bytes
				s := f.Shape(i)
				var m byte
				if s.Dir != replicaDir(sh, s.MoveDir, s.MoveStep) {
					m |= fDir
				}
				if int32(s.Length) != sh.n {
					m |= fLength
				}
				if m == 0 {
					sh.seq, sh.dir = seq, s.Dir // the replica's, as of now
					continue
				}
				if cap(dst)-len(dst) < 16 {
					dst = slices.Grow(dst, 4096)
				}
				b := dst[len(dst) : len(dst)+16]
				o := putUvarint(b, 0, uint64(i-last))
				last = i
				b[o] = m
				o++
				if m&fDir != 0 {
					b[o] = byte(s.Dir)
					o++
				}
				if m&fLength != 0 {
					o = putUvarint(b, o, zig(s.Length-int(sh.n)))
				}
				*sh = shape{seq, int32(s.Length), max(sh.best, int32(s.Length)), s.Dir}
				dst = dst[:len(dst)+o]
				continue
			}
			// any field (a removed snake is a zero one)
			r := f.Record(i)
			nsh, nq := record(&r, seq)
			q := &e.sent[i]
			m := nq.diff(q)
			if nsh.dir != replicaDir(sh, r.MoveDir, r.MoveStep) {
				m |= fDir
			}
			if nsh.n != sh.n {
				m |= fLength
			}
			if nsh.best != max(sh.best, nsh.n) {
				m |= fBest
			}
			if m == 0 {
				*sh = nsh
				continue
			}
			dst = binary.AppendUvarint(dst, uint64(i-last))
			last = i
			dst = appendRecord(dst, m, sh, q, &r.SnakeInfo, r.Dir, game.Point{})
			*sh, *q = nsh, nq
		}
	}
	return append(dst, 0)
}

// diff returns the mask of the fields of c that differ from q, with the
// strings that go with them (see sent).
func (c *sent) diff(q *sent) uint64 {
	var m uint64
	if c.flags != q.flags {
		m |= fFlags
	}
	if c.kills != q.kills {
		m |= fKills
	}
	if c.dash != q.dash {
		m |= fDash
	}
	if c.id != q.id {
		m |= fID | fName | fKilledBy
	}
	if c.spawn != q.spawn {
		m |= fSpawn | fKilledBy
	}
	if c.death != q.death {
		m |= fDeath | fKilledBy
	}
	if c.prot != q.prot {
		m |= fProt
	}
	return m
}

// appendRecord appends mask m and the fields of snake s, its dir and its
// head it names, integers that move as differences from sh and q. The head (fHead)
// goes only in snapshots, whose baseline is an empty slot.
func appendRecord(dst []byte, m uint64, sh *shape, q *sent, s *game.SnakeInfo, dir game.Dir, head game.Point) []byte {
	dst = binary.AppendUvarint(dst, m)
	if m&fHead != 0 {
		dst = binary.AppendUvarint(dst, zig(head.X))
		dst = binary.AppendUvarint(dst, zig(head.Y))
	}
	if m&fDir != 0 {
		dst = append(dst, byte(dir))
	}
	if m&fLength != 0 {
		dst = binary.AppendUvarint(dst, zig(s.Length-int(sh.n)))
	}
	if m&fFlags != 0 {
		dst = append(dst, flags(s))
	}
	if m&fKills != 0 {
		dst = binary.AppendUvarint(dst, zig(s.Kills-int(q.kills)))
	}
	if m&fDash != 0 {
		dst = binary.AppendUvarint(dst, s.DashReadyAt)
	}
	if m&fBest != 0 {
		dst = binary.AppendUvarint(dst, zig(s.BestLength-int(sh.best)))
	}
	if m&fID != 0 {
		dst = binary.AppendUvarint(dst, uint64(s.ID))
	}
	if m&fName != 0 {
		dst = appendString(dst, s.Name)
	}
	if m&fSpawn != 0 {
		dst = binary.AppendUvarint(dst, s.SpawnTick)
	}
	if m&fDeath != 0 {
		dst = binary.AppendUvarint(dst, s.DeathTick)
	}
	if m&fProt != 0 {
		dst = binary.AppendUvarint(dst, s.ProtectedUntil)
	}
	if m&fKilledBy != 0 {
		dst = appendString(dst, s.KilledBy)
	}
	return dst
}

// appendTail appends the leaderboard, counters, best snake and the deaths
// since the baseline, and updates the baseline's best.
func (e *Encoder) appendTail(dst []byte) []byte {
	f := e.f
	top := f.Top()
	dst = binary.AppendUvarint(dst, uint64(len(top)))
	for _, t := range top {
		dst = binary.AppendUvarint(dst, uint64(t.Slot))
	}
	dst = binary.AppendUvarint(dst, uint64(f.Players()))
	dst = binary.AppendUvarint(dst, uint64(f.Bots()))
	if best := f.Best(); best == e.best {
		dst = append(dst, 0)
	} else {
		dst = appendBest(append(dst, 1), best)
		e.best = best
	}
	deaths := f.Deaths()
	n := min(deaths-e.deaths, game.MaxKills)
	dst = binary.AppendUvarint(dst, n)
	for k := deaths - n; k < deaths; k++ {
		d := f.Death(k)
		dst = appendKill(dst, &d)
	}
	return dst
}

func appendBest(dst []byte, b game.Entry) []byte {
	dst = binary.AppendUvarint(dst, uint64(b.Slot))
	dst = appendString(dst, b.Name)
	return binary.AppendUvarint(dst, uint64(b.Length))
}

// diff returns the mask of the fields of b that differ from a.
func diff(a, b *game.SnakeInfo) uint64 {
	var m uint64
	if a.Length != b.Length {
		m |= fLength
	}
	if a.Colour != b.Colour || a.Used != b.Used || a.Alive != b.Alive || a.Bot != b.Bot {
		m |= fFlags
	}
	if a.Kills != b.Kills {
		m |= fKills
	}
	if a.DashReadyAt != b.DashReadyAt {
		m |= fDash
	}
	if a.BestLength != b.BestLength {
		m |= fBest
	}
	if a.ID != b.ID {
		m |= fID
	}
	if a.Name != b.Name {
		m |= fName
	}
	if a.SpawnTick != b.SpawnTick {
		m |= fSpawn
	}
	if a.DeathTick != b.DeathTick {
		m |= fDeath
	}
	if a.ProtectedUntil != b.ProtectedUntil {
		m |= fProt
	}
	if a.KilledBy != b.KilledBy {
		m |= fKilledBy
	}
	return m
}

// putUvarint writes v at b[o:] as binary.PutUvarint does and returns the
// offset after it.
func putUvarint(b []byte, o int, v uint64) int {
	for v >= varintMore {
		b[o] = byte(v) | varintMore
		v >>= 7
		o++
	}
	b[o] = byte(v)
	return o + 1
}

func zig(d int) uint64 { return uint64(d<<1) ^ uint64(d>>63) }

func unzig(u uint64) int { return int(u>>1) ^ -int(u&1) }

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendKill(dst []byte, k *game.Kill) []byte {
	dst = binary.AppendUvarint(dst, k.Tick)
	dst = appendString(dst, k.Victim)
	dst = binary.AppendUvarint(dst, uint64(k.VictimSlot))
	var f byte
	if k.VictimBot {
		f |= killVictimBot
	}
	if k.KillerBot {
		f |= killKillerBot
	}
	if k.HeadOn {
		f |= killHeadOn
	}
	dst = append(dst, f)
	dst = binary.AppendUvarint(dst, uint64(k.Length))
	dst = appendString(dst, k.Killer)
	dst = binary.AppendUvarint(dst, uint64(k.KillerSlot+1))
	dst = appendString(dst, k.Other)
	dst = binary.AppendUvarint(dst, uint64(k.At.X))
	return binary.AppendUvarint(dst, uint64(k.At.Y))
}
