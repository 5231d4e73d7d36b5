package sshserver

import (
	"sync"
	"sync/atomic"

	"snaked/game"
	"snaked/render"
)

// This file holds the spectators' shared frames (casts): spectators who
// follow the same place on the leaderboard on terminals of the same size
// and kind, with the same HUD, see the same screen, so one shared renderer
// (render.Renderer.SetShared) makes each tick's frame once for all of
// them. A spectator that joins a cast, or falls castKeep frames or more
// behind it (latest wins, as every session), gets a Snapshot of the
// cast's screen; one behind by fewer gets the frames it missed, one after
// another. A slow client (session.solo) draws on its own renderer
// instead. A spectator whose screen changes otherwise (another place on
// the leaderboard, help, tags, a resize) moves to that screen's cast, with
// a Snapshot; the free camera goes back to the session's own renderer,
// with a full repaint. So a crowd watching one snake costs one renderer.

// castKeep is how many of a cast's newest frames it keeps for spectators
// behind it; one further behind gets a Snapshot.
const castKeep = 8

// castKey is what makes two spectators' screens the same. A cast follows
// a place on the leaderboard, as its spectators do, not a snake: when the
// leader changes, its camera moves to the new one in a frame like any
// other, not in a Snapshot for every spectator.
type castKey struct {
	rank           int // the place on the leaderboard of the snake followed (session.follow)
	cols, rows     int
	budget         int
	prof           render.Profile
	help, hint     bool
	hideTags       bool
	allBest, allRk int
}

// cast is one shared renderer and its newest frames.
type cast struct {
	key     castKey
	members int // spectators on it; guarded by casts.mu

	mu   sync.Mutex // guards the fields below; held to render (never to write)
	r    *render.Renderer
	tick uint64             // tick of the newest frame; 0: none yet
	hud  render.HUD         // and the HUD it was drawn for
	seq  uint64             // frames made; frame k (from 1) is ring[k%castKeep]
	ring [castKeep]*castBuf // the newest frames
}

// castBuf is a cast frame's bytes, which spectators write without a copy:
// the cast fills a castBuf again only once no spectator is writing it.
type castBuf struct {
	b     []byte
	users atomic.Int32 // spectators handed b and not done writing it; added to under cast.mu
}

// done tells b's cast that a spectator handed b has written it.
func (b *castBuf) done() {
	if b != nil {
		b.users.Add(-1)
	}
}

// casts is the server's casts by key. A cast lives while spectators are
// on it: a spectator is on one cast at most, and a cast's cells are its
// spectators' (each holds a whole screen's in the server's cell budget,
// without a renderer of its own meanwhile), so casts cost no more memory
// than the spectators' own renderers would, however a client changes
// its screen.
type casts struct {
	mu sync.Mutex // guards m and each cast's members
	m  map[castKey]*cast
}

// move takes a spectator off cast old (nil: none) and onto the cast of k,
// made when there is none; it returns that cast. A cast left without
// spectators goes.
func (cs *casts) move(old *cast, k castKey) *cast {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.drop(old)
	c := cs.m[k]
	if c == nil {
		if cs.m == nil {
			cs.m = make(map[castKey]*cast)
		}
		c = &cast{key: k, r: render.NewBudget(k.prof, k.cols, k.rows, k.budget)}
		c.r.SetShared(true)
		cs.m[k] = c
	}
	c.members++
	return c
}

// leave takes a spectator off cast c (nil: none).
func (cs *casts) leave(c *cast) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.drop(c)
}

// drop takes a spectator off c, if any; cs.mu is held.
func (cs *casts) drop(c *cast) {
	if c == nil {
		return
	}
	if c.members--; c.members <= 0 && cs.m[c.key] == c {
		delete(cs.m, c.key)
	}
}

// len returns how many casts there are (tests).
func (cs *casts) len() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.m)
}

// frame returns the bytes that take a spectator's terminal, which has c's
// frames up to seq (0: none, or not c's), to c's frame of v, rendering it
// when no spectator did yet, and c's seq of that frame. snap reports a
// Snapshot. The bytes do not change until the spectator calls done on
// buf (when buf is not nil) and, otherwise, ever.
func (c *cast) frame(v *game.View, hud *render.HUD, seq uint64, m *metrics) (b []byte, buf *castBuf, now uint64, snap bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// A new tick, or the same tick with another HUD (a gateway's notice
	// while its simulation restarts, the counts, the shutdown countdown):
	// a new frame. A spectator with an older view gets the newest.
	if v.Tick > c.tick || c.seq == 0 || v.Tick == c.tick && *hud != c.hud {
		f := c.r.Frame(v, hud)
		c.hud = *hud
		c.seq++
		k := c.seq % castKeep
		if c.ring[k] == nil || c.ring[k].users.Load() != 0 {
			c.ring[k] = &castBuf{} // the old one is someone's until written
		}
		c.ring[k].b = append(c.ring[k].b[:0], f...)
		c.r.Release()
		c.tick = v.Tick
		m.castFrames.Inc()
	}
	switch {
	case seq == 0 || seq > c.seq || c.seq-seq >= castKeep:
		m.castSnaps.Inc()
		return c.r.Snapshot(nil, true), nil, c.seq, true
	case c.seq-seq == 1:
		buf = c.ring[c.seq%castKeep]
		buf.users.Add(1)
		return buf.b, buf, c.seq, false
	}
	for k := seq + 1; k <= c.seq; k++ {
		b = append(b, c.ring[k%castKeep].b...)
	}
	return b, nil, c.seq, false
}
