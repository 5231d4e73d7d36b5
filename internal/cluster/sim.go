package cluster

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"snaked/game"
)

// DefaultLease is how long a gateway may stay silent before its players'
// snakes leave the world. With the reaper looking every lease/10 and the
// world taking a leave at its next tick, a dead gateway's snakes are gone
// at most 2.2 s and a tick after its last heartbeat (heartbeats go every
// lease/3): within the 3 s the design asks, with room for a loaded
// machine's late timers.
const DefaultLease = 2 * time.Second

// Sim is the simulation's side of the link: it answers joins, applies the
// inputs of the gateways' players to its world, and removes the snakes of
// a gateway that stopped its heartbeats.
type Sim struct {
	w     *game.World
	nc    *nats.Conn
	subj  subjects
	lease time.Duration
	inst  uint64 // this instance, random: a restarted simulation has another
	subs  []*nats.Subscription
	stop  chan struct{}
	done  chan struct{}

	mu     sync.Mutex              // guards seen, owner, joined, cancel, idents and swept
	seen   map[gwRef]time.Time     // gateway -> its last heartbeat (or join)
	owner  map[game.ID]owned       // snake -> the join that gave it
	joined map[joinRef]joinedSnake // recent joins, for a gateway's cancel
	cancel map[joinRef]time.Time   // cancels of joins not seen yet, refused when they come
	idents map[identRef]identUse   // who played through which gateway, for its games (MayRecord)
	swept  time.Time               // when idents was last swept

	joins, inputs, bad, foreign, expired atomic.Uint64
}

// gwRef names one gateway process: its name on the link (from the
// subjects it publishes on, which NATS permissions can tie to its user)
// and its instance (random at its start).
type gwRef struct {
	name string
	id   uint64
}

// owned is the join that gave a snake: its gateway, the gateway's nonce
// for the join, and the player's key fingerprint ("" for a keyless player)
// and scores identity.
type owned struct {
	gw    gwRef
	join  uint64
	key   string
	ident string // the key's fingerprint, or the keyless player's name in lower case
}

// identRef is a player's scores identity (scores.ID's Value: a key
// fingerprint, or a keyless player's lower-case name) as it played
// through the gateway of that name.
type identRef struct{ gw, id string }

// identUse is how an identity plays through a gateway: its snakes now,
// and when the last one left.
type identUse struct {
	live int32
	left time.Time
}

// Games are taken from a gateway only for identities that play through it
// or left it within identKeep; the simulation remembers at most maxIdents
// of them (past that, a new identity's games are refused).
const (
	identKeep  = time.Hour
	maxIdents  = 1 << 18
	identSweep = time.Minute
)

// joinRef names one join: its gateway and the gateway's nonce for it.
type joinRef struct {
	gw    gwRef
	nonce uint64
}

// joinedSnake is what a recent join gave.
type joinedSnake struct {
	id game.ID
	at time.Time
}

// joinMemory is how long the simulation remembers a join (or a cancel that
// came first) for a cancel: longer than a gateway tries one (leaveFor).
const joinMemory = time.Minute

// Bounds on what gateways can make the simulation remember: gateway
// instances heard within the lease, and joins or cancels within
// joinMemory. Past them new ones are not remembered (a heartbeat is
// dropped, a cancel of a join not seen yet is forgotten).
const (
	maxGateways = 4096
	maxJoinRefs = 1 << 16
)

// SimStats are a Sim's counters.
type SimStats struct {
	Joins   uint64 // joins answered
	Inputs  uint64 // inputs applied
	Bad     uint64 // messages that did not decode, dropped
	Foreign uint64 // inputs for a snake the sending gateway's join did not give (or another world's), dropped
	Expired uint64 // snakes removed because their gateway went silent
}

// NewSim serves the link for world w on nc under prefix; a gateway silent
// for lease (0: DefaultLease) loses its snakes. Close stops it.
func NewSim(nc *nats.Conn, w *game.World, prefix string, lease time.Duration) (*Sim, error) {
	if lease <= 0 {
		lease = DefaultLease
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	s := &Sim{w: w, nc: nc, subj: subjectsOf(prefix, "*"), lease: lease, inst: binary.LittleEndian.Uint64(b[:]) | 1,
		stop: make(chan struct{}), done: make(chan struct{}),
		seen: map[gwRef]time.Time{}, owner: map[game.ID]owned{},
		joined: map[joinRef]joinedSnake{}, cancel: map[joinRef]time.Time{}, idents: map[identRef]identUse{}}
	for subj, h := range map[string]nats.MsgHandler{s.subj.join: s.onJoin, s.subj.input: s.onInput, s.subj.hb: s.onHeartbeat} {
		sub, err := nc.Subscribe(subj, h)
		if err != nil {
			s.unsubscribe()
			return nil, err
		}
		s.subs = append(s.subs, sub)
	}
	if err := nc.Flush(); err != nil {
		s.unsubscribe()
		return nil, err
	}
	go s.reap()
	return s, nil
}

// Instance is the simulation's instance on the link: its ticks, snapshots
// and join answers carry it, and inputs must name it.
func (s *Sim) Instance() uint64 { return s.inst }

// Stats returns the counters.
func (s *Sim) Stats() SimStats {
	return SimStats{Joins: s.joins.Load(), Inputs: s.inputs.Load(), Bad: s.bad.Load(), Foreign: s.foreign.Load(), Expired: s.expired.Load()}
}

// Close stops serving and waits for the reaper.
func (s *Sim) Close() {
	s.unsubscribe()
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
}

func (s *Sim) unsubscribe() {
	for _, sub := range s.subs {
		_ = sub.Unsubscribe()
	}
	s.subs = nil
}

// heard notes that gateway g is alive; it reports false when g is new and
// the simulation already follows maxGateways. s.mu is held.
func (s *Sim) heardLocked(g gwRef, now time.Time) bool {
	if _, ok := s.seen[g]; !ok && len(s.seen) >= maxGateways {
		return false
	}
	s.seen[g] = now
	return true
}

func (s *Sim) onJoin(m *nats.Msg) {
	name, ok := s.subj.sender(m.Subject)
	req, err := decodeJoinReq(m.Data)
	if !ok || err != nil || !s.subj.replyOK(m) {
		s.bad.Add(1)
		return
	}
	gw := gwRef{name, req.gw}
	rep := joinRep{status: joinOK, sim: s.inst}
	ref := joinRef{gw, req.nonce}
	s.mu.Lock()
	_, cancelled := s.cancel[ref]
	live := s.heardLocked(gw, time.Now())
	s.mu.Unlock()
	if cancelled || !live { // the gateway gave up on it before it came, or one gateway too many
		s.joins.Add(1)
		_ = m.Respond(appendJoinRep(nil, joinRep{status: joinFailed, msg: "cancelled", sim: s.inst}))
		return
	}
	id, err := s.w.Join(req.name)
	switch {
	case err == nil:
		rep.id = id
		s.mu.Lock()
		o := owned{gw: gw, join: req.nonce, key: req.key, ident: req.key}
		if o.ident == "" {
			o.ident = strings.ToLower(req.name)
		}
		s.owner[id] = o
		s.playsLocked(o)
		if len(s.joined) < maxJoinRefs {
			s.joined[ref] = joinedSnake{id, time.Now()}
		}
		s.mu.Unlock()
	case errors.Is(err, game.ErrFull):
		rep.status = joinFull
	case errors.Is(err, game.ErrNameTaken):
		rep.status = joinTaken
	default:
		rep.status, rep.msg = joinFailed, err.Error()
	}
	s.joins.Add(1)
	_ = m.Respond(appendJoinRep(nil, rep))
}

func (s *Sim) onInput(m *nats.Msg) {
	name, ok := s.subj.sender(m.Subject)
	in, err := decodeInput(m.Data)
	if !ok || err != nil {
		s.bad.Add(1)
		return
	}
	gw := gwRef{name, in.gw}
	if m.Reply != "" && !s.subj.replyOK(m) {
		m.Reply = "" // answers go to the sender's own inbox only
	}
	if in.kind == inCancel {
		s.cancelJoin(m, joinRef{gw, in.join})
		return
	}
	if in.kind == inLeave && m.Reply != "" {
		// a leave is a request: answered after it is applied, or not (the
		// snake gone already, or another's: gone is what was asked)
		defer func() { _ = m.Respond([]byte{leaveDone}) }()
	}
	if in.sim != s.inst {
		// for a snake of another instance's world (an input or a leave
		// across a restart): gone with that world; the same ID here is
		// another's
		s.foreign.Add(1)
		return
	}
	s.mu.Lock()
	o, ok := s.owner[in.id]
	mine := ok && o.gw == gw && o.join == in.join
	if mine && in.kind == inLeave {
		delete(s.owner, in.id)
		s.leftLocked(o, time.Now())
	}
	s.mu.Unlock()
	if !mine {
		s.foreign.Add(1)
		return
	}
	switch in.kind {
	case inTurn:
		s.w.Turn(in.id, in.dir)
	case inDash:
		s.w.Dash(in.id)
	case inRespawn:
		s.w.Respawn(in.id)
	case inLeave:
		s.w.Leave(in.id)
	}
	s.inputs.Add(1)
}

// leaveDone is the simulation's answer to a leave (and to a cancel).
const leaveDone = 1

// cancelJoin takes back the join ref names: its snake leaves if it came,
// else the join is refused if it comes later. It answers like a leave.
func (s *Sim) cancelJoin(m *nats.Msg, ref joinRef) {
	s.mu.Lock()
	j, ok := s.joined[ref]
	o := s.owner[j.id]
	gone := ok && o.gw == ref.gw && o.join == ref.nonce
	if gone {
		delete(s.owner, j.id)
		s.leftLocked(o, time.Now())
	}
	delete(s.joined, ref)
	if !ok && len(s.cancel) < maxJoinRefs {
		s.cancel[ref] = time.Now()
	}
	s.mu.Unlock()
	if gone {
		s.w.Leave(j.id)
	}
	s.inputs.Add(1)
	if m.Reply != "" {
		_ = m.Respond([]byte{leaveDone})
	}
}

// playsLocked notes that o's identity plays through o's gateway. s.mu is
// held.
func (s *Sim) playsLocked(o owned) {
	r := identRef{o.gw.name, o.ident}
	u, ok := s.idents[r]
	if !ok && len(s.idents) >= maxIdents {
		return
	}
	u.live++
	s.idents[r] = u
}

// leftLocked notes that o's snake left. s.mu is held.
func (s *Sim) leftLocked(o owned, now time.Time) {
	r := identRef{o.gw.name, o.ident}
	if u, ok := s.idents[r]; ok {
		u.live--
		u.left = now
		s.idents[r] = u
	}
}

// MayRecord reports whether gateway gw may record a game for identity id
// (scores.ID's Value): it plays through gw now, or left it within
// identKeep. A gateway records its own players' games and nobody else's.
func (s *Sim) MayRecord(gw, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.idents[identRef{gw, id}]
	return ok && (u.live > 0 || time.Since(u.left) <= identKeep)
}

// Key returns the key fingerprint of snake id's player, as its gateway
// sent it with the join ("" for a keyless player or a snake it does not
// have).
func (s *Sim) Key(id game.ID) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.owner[id].key
}

func (s *Sim) onHeartbeat(m *nats.Msg) {
	name, ok := s.subj.sender(m.Subject)
	h, err := decodeHeartbeat(m.Data)
	if !ok || err != nil {
		s.bad.Add(1)
		return
	}
	s.mu.Lock()
	s.heardLocked(gwRef{name, h.gw}, time.Now())
	s.mu.Unlock()
}

// reap removes the snakes of gateways silent for longer than the lease.
func (s *Sim) reap() {
	defer close(s.done)
	t := time.NewTicker(s.lease / 10)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			var gone []game.ID
			s.mu.Lock()
			for r, j := range s.joined {
				if now.Sub(j.at) > joinMemory {
					delete(s.joined, r)
				}
			}
			for r, at := range s.cancel {
				if now.Sub(at) > joinMemory {
					delete(s.cancel, r)
				}
			}
			for gw, at := range s.seen {
				if now.Sub(at) <= s.lease {
					continue
				}
				delete(s.seen, gw)
				for id, o := range s.owner {
					if o.gw == gw {
						gone = append(gone, id)
						delete(s.owner, id)
						s.leftLocked(o, now)
					}
				}
			}
			if now.Sub(s.swept) >= identSweep {
				s.swept = now
				for r, u := range s.idents {
					if u.live <= 0 && now.Sub(u.left) > identKeep {
						delete(s.idents, r)
					}
				}
			}
			s.mu.Unlock()
			for _, id := range gone {
				s.w.Leave(id)
				s.expired.Add(1)
			}
		}
	}
}
