package game

// # Wire format (version 2)
//
// A world that runs in one process and is rendered in others (issue 12: a
// simulation and its gateways) travels as bytes that this package owns, so
// a Replica can publish exactly the Views the World does. Two messages:
//
//   - A delta (Encoder.AppendDelta): what one or more Steps changed, from
//     the encoder's last tick (its base) to the world's tick. It holds the
//     base and new tick numbers, the slot count, each changed snake record
//     (only the fields that changed, against the last delta, and never
//     the head: see below), the leaderboard (slots), the player and bot counters, the best snake
//     when it changed, the deaths since the base, and every grid write of
//     those Steps, in order, straight from the change logs publish replays
//     (no second bookkeeping; a move's two writes as one item). A
//     snake's spawn protection ends by the clock, not by a write: the
//     replica finds whose ended from the records and marks their bodies'
//     tiles Dirty as the world does.
//   - A snapshot (World.Snapshot): the whole world at one tick (pixels
//     run-length encoded, every snake, the leaderboard, counters, the
//     deaths its views show), split into chunks of at most a given size (NATS's default
//     payload limit is 1 MB). Chunks carry the snapshot's tick, their index
//     and the count; NewReplica takes them in any order.
//
// Every message starts with the version byte (WireVersion) and a kind byte;
// integers are varints (encoding/binary), signed differences zigzag. A
// pixel is one byte (kind<<4 | colour, bit 6 when its slot follows as a
// varint; without it the slot is 0 for Empty and Fruit, else the slot of
// the previous Body or Head pixel of the message). A delta's grid writes
// are items that start with a varint u. A move (a snake's old head turning
// Body and its new head, two writes in the world's log) is u < 128: bits
// 0-4 g, bit 5 towards the higher index (Right, Down), bit 6 vertical; its
// slot is the previous Body or Head pixel's plus 1+g, or when g is 31 a
// varint that follows; the Body is written at that snake's head, the Head
// one pixel on (wrapping), both of the colour of the Head pixel there. Any other write is
// u = its index's difference from the previous write's (zigzag) + 128,
// then its pixel. The write count counts a move as two. Decoders check
// every length and range and return an error wrapping ErrCorrupt, never
// panic, on arbitrary bytes; a message is validated whole before a Replica
// changes, so a bad one leaves it as it was.
//
// A delta carries no heads: a snake's head is the point of the last Head
// pixel of its slot among the delta's grid writes when it has one and the
// snake's length (after the delta's records) is not 0, the origin when
// the length is 0, and else where it was. (A head moves only by a grid
// write of a Head pixel there: a spawn, a move; a death leaves it where it
// was; a leave or a join empties the slot, length 0.) Likewise a snake's
// dir is the direction of its last move item in the delta, unless its
// record sets it, and a record's length raises the best length to it (a
// record sets the best length only when that is not enough). So a snake
// that only moved, or turned and moved, needs no record: the delta holds a
// record for growth, a turn without a move (a protected snake waiting),
// spawn, death, kill, dash, join or leave.
//
// The leaderboard and the best snake are the world's as of its last
// publish: after a tick whose publish was skipped (every view buffer
// held) they are those of the tick before.
//
// Layout. A delta: version, kind 1, base tick, tick, slot count; snake
// records (slot gap >= 1, field mask, the fields; gap 0 ends them);
// leaderboard (count, slots; names and lengths are the snakes'); players,
// bots; best (0, or 1 then slot, name, length); deaths (count, each in
// full); grid writes (count, then the items). A delta's record never has
// the head bit (fHead) set. A
// snapshot chunk: version, kind 2, tick, index, count, then its piece of
// the snapshot body: version, kind 3, W, H, capacity, slot count, tick;
// pixel runs (length, pixel) covering W*H; snake records as in a delta
// against empty slots; leaderboard; players, bots; best (always);
// the deaths of the last KillTicks (what views show).
//
// A Replica follows a world: built from a snapshot at tick T, it accepts
// the delta whose base is T, then the one whose base is that delta's tick,
// and so on. A delta with any other base is refused with ErrGap (a tick was
// missed, or came twice): the follower needs a new snapshot. The encoder
// and World.Snapshot run on the goroutine that calls Step, between Steps;
// World.SnapshotLater takes the view of the tick there, and Later.Chunks
// writes the same snapshot from it on any goroutine.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
)

// WireVersion is the first byte of every message of the wire format.
const WireVersion = 2

// Message kinds, the second byte.
const (
	msgDelta    = 1
	msgChunk    = 2 // one piece of a snapshot
	msgSnapshot = 3 // a whole snapshot body, as the chunks split it
)

// Wire errors.
var (
	// ErrGap says a delta does not follow the replica's tick.
	ErrGap = errors.New("game: delta does not follow the replica's tick: a snapshot is needed")
	// ErrCorrupt says a message does not decode.
	ErrCorrupt = errors.New("game: corrupt wire message")
)

// chunkHeaderMax bounds a chunk's header: version, kind, three varints.
const chunkHeaderMax = 2 + 3*binary.MaxVarintLen64

// MinChunk is the smallest chunk size World.Snapshot accepts.
const MinChunk = 64

// Snake record fields, the bits of a record's mask, the ones that change
// every tick lowest so a moving snake's mask is one byte.
const (
	fHead = 1 << iota
	fDir
	fLength
	fFlags // colour, used, alive, bot
	fKills
	fDash
	fBest
	fID
	fName
	fSpawn
	fDeath
	fProt
	fKilledBy
	fAll = 1<<iota - 1
)

// Encoder writes a world's deltas. Its baseline is the world as it last
// encoded it (at NewEncoder, the world then). It is not safe for concurrent
// use, and it reads the world's internals: call it on the goroutine that
// calls Step, between Steps.
//
// It never scans every slot: Step marks the slots whose records changed
// other than in their heads (World.touch, World.touchQuick), and a moving
// snake's head travels as its Head pixels. Most marks are turns and growth
// (dir, length, best length), which it compares with a small copy of those
// three fields; the others it compares with a compact copy of the rest of
// the record last sent, straight from the world's snake.
type Encoder struct {
	w      *World
	seq    uint64 // the world's step at the baseline
	tick   uint64
	nkills uint64
	shape  []shape // by slot: the dir, length and best length last sent
	sent   []sent  // by slot: the other fields last sent
	best   Entry
	marked []uint64 // scratch: the union of the steps' marks, and of their quick marks
}

// shape is the part of a snake's record that turns and growth change, as
// a replica has it: the dir last sent, at step seq (a replica turns a snake
// to the direction of each of its moves, see snakeDir).
type shape struct {
	seq     uint64
	n, best int32
	dir     Dir
}

// snakeDir returns the dir a replica gives snake s, whose last record went
// with sh: the direction of its last move if it moved since, else the one
// sent. Steps compare in 32 bits, wrapping: right unless a snake moves for
// 2^31 steps (6.8 years at 10 ticks a second) after its last record.
func snakeDir(s *snake, sh *shape) Dir {
	if int32(s.moveStep-uint32(sh.seq)) > 0 {
		return s.moveDir
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
	id                       ID
	spawn, death, prot, dash uint64
	kills                    int32
	flags                    byte // as fFlags sends them
}

// flags is s's fFlags byte: colour, used, alive, bot.
func (s *snake) flags() byte {
	f := byte(s.colour & 15)
	if s.used {
		f |= 1 << 4
	}
	if s.alive {
		f |= 1 << 5
	}
	if s.bot {
		f |= 1 << 6
	}
	return f
}

// record returns what e sends of s at step seq.
func record(s *snake, seq uint64) (shape, sent) {
	return shape{seq, int32(s.length), int32(s.best), s.dir},
		sent{s.id, s.spawnTick, s.deathTick, s.protectedUntil, s.dashReadyAt, int32(s.kills), s.flags()}
}

// NewEncoder returns an encoder whose baseline is the world now; a
// snapshot taken now is where its first delta applies.
func NewEncoder(w *World) *Encoder {
	n := w.cfg.MaxSnakes
	e := &Encoder{w: w, shape: make([]shape, n), sent: make([]sent, n), marked: make([]uint64, 2*((n+63)/64))}
	e.rebase()
	return e
}

// rebase makes the world now the baseline.
func (e *Encoder) rebase() {
	w := e.w
	e.seq, e.tick, e.nkills, e.best = w.seq, w.tick, w.nkills, w.best
	for i := range e.sent {
		e.shape[i], e.sent[i] = shape{}, sent{}
		if i < w.nslots {
			e.shape[i], e.sent[i] = record(&w.snakes[i], w.seq)
		}
	}
}

// info is slot i's SnakeInfo as rank builds it, without the rank.
func (w *World) info(i int) SnakeInfo {
	s := &w.snakes[i]
	if !s.used {
		return SnakeInfo{}
	}
	hp := Point{}
	if s.length > 0 {
		hp = w.point(s.head)
	}
	return SnakeInfo{
		ID: s.id, Name: s.name, Colour: s.colour, Bot: s.bot, Used: true,
		Alive: s.alive, Head: hp, Dir: s.dir, Length: s.length, Kills: s.kills,
		SpawnTick: s.spawnTick, DeathTick: s.deathTick, ProtectedUntil: s.protectedUntil,
		DashReadyAt: s.dashReadyAt, KilledBy: s.killedBy, BestLength: s.best,
	}
}

// AppendDelta appends to dst the delta from the encoder's baseline to the
// world now, and makes now the baseline. It appends nothing when the world
// has not stepped. When more than 15 Steps passed since the baseline the
// change logs no longer hold them: it appends nothing, rebases, and
// returns an error wrapping ErrGap (followers need a snapshot). With
// enough capacity in dst it allocates nothing.
func (e *Encoder) AppendDelta(dst []byte) ([]byte, error) {
	w := e.w
	if w.seq == e.seq {
		return dst, nil
	}
	if w.seq-e.seq > logN-1 {
		steps := w.seq - e.seq
		e.rebase()
		return dst, fmt.Errorf("%w (the encoder is %d steps behind)", ErrGap, steps)
	}
	dst = append(dst, WireVersion, msgDelta)
	dst = binary.AppendUvarint(dst, e.tick)
	dst = binary.AppendUvarint(dst, w.tick)
	dst = binary.AppendUvarint(dst, uint64(w.nslots))

	// the records of the slots the steps since the baseline marked
	nw := (w.nslots + 63) / 64
	mk, qk := e.marked[:nw], e.marked[nw:2*nw]
	copy(mk, w.marks[(e.seq+1)%logN])
	copy(qk, w.quick[(e.seq+1)%logN])
	for s := e.seq + 2; s <= w.seq; s++ {
		for k, x := range w.marks[s%logN][:nw] {
			mk[k] |= x
		}
		for k, x := range w.quick[s%logN][:nw] {
			qk[k] |= x
		}
	}
	last := -1
	for k, slow := range mk {
		for word := slow | qk[k]; word != 0; word &= word - 1 {
			i := k*64 + bits.TrailingZeros64(word)
			sh, s := &e.shape[i], &w.snakes[i]
			if slow&(1<<(i&63)) == 0 {
				// a turn or growth (the best length follows the length,
				// see sent): at most 1+3+1+1+5 bytes
				var m byte
				if s.dir != snakeDir(s, sh) {
					m |= fDir
				}
				if int32(s.length) != sh.n {
					m |= fLength
				}
				if m == 0 {
					sh.seq, sh.dir = w.seq, s.dir // the replica's, as of now
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
					b[o] = byte(s.dir)
					o++
				}
				if m&fLength != 0 {
					o = putUvarint(b, o, zig(s.length-int(sh.n)))
				}
				*sh = shape{w.seq, int32(s.length), max(sh.best, int32(s.length)), s.dir}
				dst = dst[:len(dst)+o]
				continue
			}
			// any field (a removed snake is a zero one)
			nsh, nq := record(s, w.seq)
			q := &e.sent[i]
			m := nq.diff(q)
			if nsh.dir != snakeDir(s, sh) {
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
			dst = appendRecord(dst, m, sh, q, s)
			*sh, *q = nsh, nq
		}
	}
	dst = append(dst, 0)
	dst = e.appendTail(dst)

	// pixels: the change logs of the steps since the baseline
	n := 0
	for s := e.seq + 1; s <= w.seq; s++ {
		n += len(w.logs[s%logN])
	}
	dst = binary.AppendUvarint(dst, uint64(n))
	var pc pixCoder
	for s := e.seq + 1; s <= w.seq; s++ {
		dst = pc.appendLog(dst, w.logs[s%logN])
	}
	e.seq, e.tick, e.nkills = w.seq, w.tick, w.nkills
	return dst, nil
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

// appendRecord appends mask m and the fields of snake s it names,
// integers that move as differences from sh and q. The head (fHead) goes
// only in snapshots, whose baseline is an empty slot.
func appendRecord(dst []byte, m uint64, sh *shape, q *sent, s *snake) []byte {
	dst = binary.AppendUvarint(dst, m)
	if m&fHead != 0 {
		dst = binary.AppendUvarint(dst, zig(int(s.headX)))
		dst = binary.AppendUvarint(dst, zig(int(s.headY)))
	}
	if m&fDir != 0 {
		dst = append(dst, byte(s.dir))
	}
	if m&fLength != 0 {
		dst = binary.AppendUvarint(dst, zig(s.length-int(sh.n)))
	}
	if m&fFlags != 0 {
		dst = append(dst, s.flags())
	}
	if m&fKills != 0 {
		dst = binary.AppendUvarint(dst, zig(s.kills-int(q.kills)))
	}
	if m&fDash != 0 {
		dst = binary.AppendUvarint(dst, s.dashReadyAt)
	}
	if m&fBest != 0 {
		dst = binary.AppendUvarint(dst, zig(s.best-int(sh.best)))
	}
	if m&fID != 0 {
		dst = binary.AppendUvarint(dst, uint64(s.id))
	}
	if m&fName != 0 {
		dst = appendString(dst, s.name)
	}
	if m&fSpawn != 0 {
		dst = binary.AppendUvarint(dst, s.spawnTick)
	}
	if m&fDeath != 0 {
		dst = binary.AppendUvarint(dst, s.deathTick)
	}
	if m&fProt != 0 {
		dst = binary.AppendUvarint(dst, s.protectedUntil)
	}
	if m&fKilledBy != 0 {
		dst = appendString(dst, s.killedBy)
	}
	return dst
}

// appendTail appends the leaderboard, counters, best snake and the kills
// since the baseline, and updates the baseline's best.
func (e *Encoder) appendTail(dst []byte) []byte {
	w := e.w
	dst = binary.AppendUvarint(dst, uint64(w.ntop))
	for _, t := range w.top[:w.ntop] {
		dst = binary.AppendUvarint(dst, uint64(t.Slot))
	}
	dst = binary.AppendUvarint(dst, uint64(w.players))
	dst = binary.AppendUvarint(dst, uint64(w.bots))
	if w.best == e.best {
		dst = append(dst, 0)
	} else {
		dst = appendBest(append(dst, 1), w.best)
		e.best = w.best
	}
	n := min(w.nkills-e.nkills, MaxKills)
	dst = binary.AppendUvarint(dst, n)
	for k := w.nkills - n; k < w.nkills; k++ {
		dst = appendKill(dst, &w.kills[k%MaxKills])
	}
	return dst
}

func appendBest(dst []byte, b Entry) []byte {
	dst = binary.AppendUvarint(dst, uint64(b.Slot))
	dst = appendString(dst, b.Name)
	return binary.AppendUvarint(dst, uint64(b.Length))
}

// diff returns the mask of the fields of b that differ from a (Rank aside).
func diff(a, b *SnakeInfo) uint64 {
	var m uint64
	if a.Head != b.Head {
		m |= fHead
	}
	if a.Dir != b.Dir {
		m |= fDir
	}
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
	for v >= 0x80 {
		b[o] = byte(v) | 0x80
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

func appendKill(dst []byte, k *Kill) []byte {
	dst = binary.AppendUvarint(dst, k.Tick)
	dst = appendString(dst, k.Victim)
	dst = binary.AppendUvarint(dst, uint64(k.VictimSlot))
	var f byte
	if k.VictimBot {
		f |= 1
	}
	if k.KillerBot {
		f |= 2
	}
	if k.HeadOn {
		f |= 4
	}
	dst = append(dst, f)
	dst = binary.AppendUvarint(dst, uint64(k.Length))
	dst = appendString(dst, k.Killer)
	dst = binary.AppendUvarint(dst, uint64(k.KillerSlot+1))
	dst = appendString(dst, k.Other)
	dst = binary.AppendUvarint(dst, uint64(k.At.X))
	return binary.AppendUvarint(dst, uint64(k.At.Y))
}

// pixCoder carries the state pixel coding shares along one message: the
// last index and the last Body or Head slot.
type pixCoder struct {
	i    int32
	slot int
}

// appendLog appends the changes of log as grid-write items (see the
// package's wire format): a move (World.setMove's tagged Body write at the
// old head and the Head write after it) goes as one byte, its direction
// from the tag and the gap from the previous snake pixel's slot (movers
// come in slot order), the slot after it when the gap is 31 or more (or
// back); any other write as its index difference plus 128, its pixel and
// perhaps its slot. One tight loop over a buffer grown once (at most 9
// bytes a change), with a short path for the common items.
func (c *pixCoder) appendLog(dst []byte, log []change) []byte {
	dst = slices.Grow(dst, 9*len(log))
	o, prev, last := encodeLog(dst[len(dst):cap(dst)], log, int(c.i), c.slot)
	c.i, c.slot = int32(prev), last
	return dst[:len(dst)+o]
}

// encodeLog is appendLog's loop: it writes log's items into b, which has
// room for 9 bytes a change, from the index prev and the snake pixel slot
// last, and returns the bytes written and the new prev and last. It is a
// function of its own so that the loop's state fits in registers.
func encodeLog(b []byte, log []change, prev, last int) (int, int, int) {
	var o uint // unsigned, so that one check covers the stores after it
	for k := 0; k < len(log); k++ {
		x := log[k]
		slot := int(x.p & 0xffff)
		if x.p >= 1<<31 && k+1 < len(log) {
			// a move (a tagged Body write): its Head write follows
			k++
			prev = int(log[k].i)
			h := byte(x.p>>24) & 0x60
			g := slot - last - 1
			last = slot
			if uint(g) < 31 && o < uint(len(b)) {
				b[o] = h | byte(g)
				o++
				continue
			}
			if uint(len(b))-o < 4 || o > uint(len(b)) {
				break // cannot happen: the caller made room
			}
			b[o] = h | 31
			o = uint(putUvarint(b, int(o+1), uint64(slot)))
			continue
		}
		p := x.p & pixBits
		h := byte(p>>16) & 0x3f // kind<<4 | colour
		implied := 0
		if p >= Pixel(Body)<<20 {
			implied, last = last, slot
		}
		d := zig(int(x.i)-prev) + 128
		prev = int(x.i)
		if slot == implied && d < 1<<21 && o+3 < uint(len(b)) {
			// the usual item: an index varint of 2 or 3 bytes (+128 makes
			// it at least 2), the pixel
			w := b[o : o+4 : o+4]
			w[0] = byte(d) | 0x80
			if d < 1<<14 {
				w[1] = byte(d >> 7)
				w[2] = h
				o += 3
				continue
			}
			w[1] = byte(d>>7) | 0x80
			w[2] = byte(d >> 14)
			w[3] = h
			o += 4
			continue
		}
		if uint(len(b))-o < 9 || o > uint(len(b)) {
			break // cannot happen: the caller made room
		}
		i := putUvarint(b, int(o), d)
		if slot == implied {
			b[i] = h
			o = uint(i + 1)
			continue
		}
		b[i] = h | 1<<6
		o = uint(putUvarint(b, i+1, uint64(slot)))
	}
	return int(o), prev, last
}

// appendPix appends one pixel (see the package's wire format).
func (c *pixCoder) appendPix(dst []byte, p Pixel) []byte {
	p &= pixBits
	k, slot := p.Kind(), p.Slot()
	b := byte(k)<<4 | byte(p.Colour())
	implied := 0
	if k >= Body {
		implied = c.slot
		c.slot = slot
	}
	if slot != implied {
		return binary.AppendUvarint(append(dst, b|1<<6), uint64(slot))
	}
	return append(dst, b)
}

// Snapshot writes the whole world as chunks of at most maxChunk bytes
// (at least MinChunk) that NewReplica puts back together, in any order.
// Call it between Steps on the goroutine that calls Step; a delta from an
// Encoder whose baseline is this tick applies to it. SnapshotLater does
// the same work off that goroutine.
func (w *World) Snapshot(maxChunk int) ([][]byte, error) {
	if maxChunk < MinChunk {
		return nil, errChunk(maxChunk)
	}
	snakes := make([]SnakeInfo, w.nslots)
	for i := range snakes {
		snakes[i] = w.info(i)
	}
	var kills []Kill
	for k := w.nkills - min(w.nkills, MaxKills); k < w.nkills; k++ {
		if r := &w.kills[k%MaxKills]; r.Tick+KillTicks > w.tick {
			kills = append(kills, *r)
		}
	}
	return snapshot(maxChunk, w.cfg.MaxSnakes, &View{
		Tick: w.tick, W: w.w, H: w.h, Pix: w.grid, Snakes: snakes, Top: w.top[:w.ntop],
		Players: w.players, Bots: w.bots, Best: w.best, Kills: kills,
	}), nil
}

// Later is a snapshot of the world at one tick, to be written on any
// goroutine from the view the world published for that tick (see
// World.SnapshotLater).
type Later struct {
	v        *View
	capacity int
}

// SnapshotLater returns the world's snapshot now, as Snapshot would write
// it, to be written by Later.Chunks on any goroutine: the goroutine that
// calls Step only takes a reference to the view of this tick. It returns
// nil when there is no such view (its publish was skipped because every
// view buffer was held): call Snapshot then. Call it between Steps on the
// goroutine that calls Step.
func (w *World) SnapshotLater() *Later {
	v := w.Acquire()
	if v.Tick != w.tick || len(v.Snakes) != w.nslots {
		v.Release()
		return nil
	}
	return &Later{v, w.cfg.MaxSnakes}
}

// Chunks writes the snapshot as chunks of at most maxChunk bytes (at least
// MinChunk) and lets the view go; later calls return an error.
func (l *Later) Chunks(maxChunk int) ([][]byte, error) {
	v := l.v
	if v == nil {
		return nil, errors.New("game: a later snapshot written twice")
	}
	l.v = nil
	defer v.Release()
	if maxChunk < MinChunk {
		return nil, errChunk(maxChunk)
	}
	return snapshot(maxChunk, l.capacity, v), nil
}

func errChunk(n int) error {
	return fmt.Errorf("game: snapshot chunks of %d bytes: at least %d", n, MinChunk)
}

// snapshot writes world v (its pixels, snakes by slot with len(v.Snakes)
// the slot count, leaderboard, counters, best snake and recent deaths) of
// a world of capacity snakes as a snapshot, in chunks of at most maxChunk
// (at least MinChunk) bytes.
func snapshot(maxChunk, capacity int, v *View) [][]byte {
	b := []byte{WireVersion, msgSnapshot}
	for _, u := range [...]int{v.W, v.H, capacity, len(v.Snakes)} {
		b = binary.AppendUvarint(b, uint64(u))
	}
	b = binary.AppendUvarint(b, v.Tick)
	// pixels, run-length encoded
	var pc pixCoder
	pix := v.Pix
	for i := 0; i < len(pix); {
		p := pix[i] & pixBits
		j := i + 1
		for j < len(pix) && pix[j]&pixBits == p {
			j++
		}
		b = binary.AppendUvarint(b, uint64(j-i))
		b = pc.appendPix(b, p)
		i = j
	}
	var zero SnakeInfo
	var sh shape
	var q sent
	var s snake
	last := -1
	for i := range v.Snakes {
		in := &v.Snakes[i]
		if m := diff(&zero, in); m != 0 {
			b = binary.AppendUvarint(b, uint64(i-last))
			last = i
			s.from(in)
			b = appendRecord(b, m, &sh, &q, &s)
		}
	}
	b = append(b, 0)
	b = binary.AppendUvarint(b, uint64(len(v.Top)))
	for _, t := range v.Top {
		b = binary.AppendUvarint(b, uint64(t.Slot))
	}
	b = binary.AppendUvarint(b, uint64(v.Players))
	b = binary.AppendUvarint(b, uint64(v.Bots))
	b = appendBest(b, v.Best)
	b = binary.AppendUvarint(b, uint64(len(v.Kills)))
	for k := range v.Kills {
		b = appendKill(b, &v.Kills[k])
	}

	room := maxChunk - chunkHeaderMax
	count := (len(b) + room - 1) / room
	chunks := make([][]byte, count)
	for k := range chunks {
		c := make([]byte, 0, maxChunk)
		c = append(c, WireVersion, msgChunk)
		c = binary.AppendUvarint(c, v.Tick)
		c = binary.AppendUvarint(c, uint64(k))
		c = binary.AppendUvarint(c, uint64(count))
		chunks[k] = append(c, b[k*room:min((k+1)*room, len(b))]...)
	}
	return chunks
}

// from sets the fields of s that appendRecord writes to in's.
func (s *snake) from(in *SnakeInfo) {
	*s = snake{
		id: in.ID, name: in.Name, killedBy: in.KilledBy, bot: in.Bot, used: in.Used,
		alive: in.Alive, colour: in.Colour, dir: in.Dir, length: in.Length,
		headX: int32(in.Head.X), headY: int32(in.Head.Y),
		kills: in.Kills, best: in.BestLength, spawnTick: in.SpawnTick,
		deathTick: in.DeathTick, protectedUntil: in.ProtectedUntil, dashReadyAt: in.DashReadyAt,
	}
}
