package wire

import (
	"encoding/binary"
	"fmt"

	"snaked/game"
)

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
	if v != Version {
		r.err = fmt.Errorf("%w: version %d, this build reads %d", ErrCorrupt, v, Version)
		r.b = nil
		return
	}
	if k != kind {
		r.fail(fmt.Sprintf("message kind %d, want %d", k, kind))
	}
}

// pix reads one pixel (see appendPix).
func (r *reader) pix(c *pixCoder, d *dims) game.Pixel {
	b := r.byte("pixel")
	if b&^pixAll != 0 {
		r.fail("pixel flags")
		return 0
	}
	k := game.Kind(b >> 4 & 3)
	slot := 0
	if k >= game.Body {
		slot = c.slot
	}
	if b&pixSlot != 0 {
		slot = r.int("pixel slot", game.MaxCapacity-1)
	}
	if k >= game.Body {
		if slot >= d.nslots {
			r.fail("pixel of a slot not in use")
			return 0
		}
		c.slot = slot
	}
	return game.MakePixel(k, slot, game.Colour(b&15))
}

// snake reads a record's fields into s, its dir into dir and its head into
// head, integers that move as differences from what they hold, and checks
// the result. A delta's records hold no head.
func (r *reader) snake(s *game.SnakeInfo, dir *game.Dir, head *game.Point, d *dims, delta bool) uint64 {
	m := r.uvarint("snake mask")
	if m&^fAll != 0 || delta && m&fHead != 0 {
		r.fail("snake mask")
		return 0
	}
	area := d.w * d.h
	if m&fHead != 0 {
		head.X += unzig(r.uvarint("head x"))
		head.Y += unzig(r.uvarint("head y"))
	}
	if m&fDir != 0 {
		*dir = game.Dir(r.byte("dir"))
	}
	if m&fLength != 0 {
		s.Length += unzig(r.uvarint("length"))
	}
	if m&fFlags != 0 {
		f := r.byte("flags")
		if f&^flagsAll != 0 {
			r.fail("snake flags")
		}
		s.Colour, s.Used, s.Alive, s.Bot = game.Colour(f&flagColour), f&flagUsed != 0, f&flagAlive != 0, f&flagBot != 0
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
		s.ID = game.ID(r.uvarint("id"))
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
	if head.X < 0 || head.X >= d.w || head.Y < 0 || head.Y >= d.h || *dir > game.Left ||
		s.Length < 0 || s.Length > area || s.Kills < 0 || s.BestLength < 0 || s.BestLength > area {
		r.fail("snake record out of range")
	}
	return m
}

// snakes reads the snake section: records by increasing slot, then 0.
// base gives a slot's info before its record; delta says the records are
// a delta's.
func (r *reader) snakes(recs []snakeRec, d *dims, base func(int) game.SnakeInfo, delta bool) []snakeRec {
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
		m := r.snake(&x.info, &x.way, &x.head, d, delta)
		x.dir, x.quick, x.bare = m&fDir != 0, m&^(fDir|fLength|fBest) == 0, m&^fDir == 0
	}
	return recs
}

// tail reads the leaderboard slots, counters, best snake (present when
// best) and kills into t.
func (r *reader) tail(t *tailRec, d *dims, best bool) {
	t.ntop = r.int("leaderboard size", game.TopN)
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
	n := r.int("kills", game.MaxKills)
	for k := 0; k < n && r.err == nil; k++ {
		var x game.Kill
		x.Tick = r.uvarint("kill tick")
		x.Victim = r.str("victim", "")
		x.VictimSlot = r.int("victim slot", d.max-1)
		f := r.byte("kill flags")
		if f&^killAll != 0 {
			r.fail("kill flags")
		}
		x.VictimBot, x.KillerBot, x.HeadOn = f&killVictimBot != 0, f&killKillerBot != 0, f&killHeadOn != 0
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
	top           [game.TopN]int32
	ntop          int
	players, bots int
	hasBest       bool
	best          game.Entry
	kills         []game.Kill
}
