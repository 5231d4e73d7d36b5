package cluster

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"snaked/game"
	"snaked/internal/scores"
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
//
// A gateway is trusted for its own sessions and nothing else: it joins
// names under its players' keys (the simulation checks every join against
// the names' claims itself), steers only the snakes its joins gave, and
// what it makes the simulation remember is bounded per gateway name, so
// one gateway cannot crowd out the others.
type Sim struct {
	w     *game.World
	nc    *nats.Conn
	subj  subjects
	lease time.Duration
	inst  uint64 // this instance, random: a restarted simulation has another
	names Holder // who holds a name; nil: names are not claimed
	log   *slog.Logger
	subs  []*nats.Subscription
	stop  chan struct{}
	done  chan struct{}

	mu     sync.Mutex              // guards the maps below and swept
	seen   map[gwRef]time.Time     // gateway -> its last heartbeat (or join)
	owner  map[game.ID]owned       // snake -> the join that gave it
	joined map[joinRef]joinedSnake // recent joins (id 0 while being made), for a gateway's cancel
	cancel map[joinRef]time.Time   // cancels of joins not made yet, refused when they come
	idents map[identRef]identUse   // who played through which gateway, for its games (MayRecord)
	plays  map[playRef]int32       // the keyed snakes each gateway has, by name (MayClaim)
	quota  map[string]*quota       // per gateway name: its share of the maps above
	groups *groupSet               // the game.JoinNear groups of the gateways' players (WithGroups); nil: none
	swept  time.Time               // when idents was last swept

	joins, inputs, bad, foreign, expired atomic.Uint64
}

// Holder says who holds a claim on a name as a key sees it ("" for a
// keyless player): a scores.Store's Holding at the simulation's clock.
type Holder func(ctx context.Context, name, key string) (scores.Holding, error)

// SimOption configures a Sim.
type SimOption func(*Sim)

// WithNames makes the simulation check every join's name with h: a name
// another key holds is refused (scores.ErrClaimed at the gateway), and one
// that cannot be checked too (scores.ErrUnchecked). Without it names are
// not claimed.
func WithNames(h Holder) SimOption { return func(s *Sim) { s.names = h } }

// WithSimLog has the simulation log to l what the link's counters count
// and an operator would want to read the moment of: a gateway silent past
// its lease, whose snakes leave. Without it, nothing is logged.
func WithSimLog(l *slog.Logger) SimOption { return func(s *Sim) { s.log = l } }

// WithGroups has each gateway's players start their lives near the
// gateway's other players (game.World.JoinNear, a group a gateway name:
// gateways sharing a name share a group), so that each gateway's cameras
// cover fewer regions (docs/SCALING.md). A name keeps its group while a
// snake joined through it is in the world; a group no name holds is
// given again. Past game.MaxGroups names at once, joins take no group.
func WithGroups() SimOption {
	return func(s *Sim) { s.groups = &groupSet{of: map[string]int{}, use: map[int]int{}} }
}

// groupSet hands out game.JoinNear groups to gateway names. s.mu guards it.
type groupSet struct {
	of   map[string]int // gateway name -> its group
	use  map[int]int    // group -> its name's snakes and joins being made
	free []int          // groups given back, to give again
	next int            // the last group ever given
}

// take returns the group of name's players for one more snake (0: none),
// giving name a group when it has none.
func (g *groupSet) take(name string) int {
	if g == nil {
		return 0
	}
	n, ok := g.of[name]
	if !ok {
		switch {
		case len(g.free) > 0:
			n, g.free = g.free[len(g.free)-1], g.free[:len(g.free)-1]
		case g.next < game.MaxGroups:
			g.next++
			n = g.next
		default:
			return 0
		}
		g.of[name] = n
	}
	g.use[n]++
	return n
}

// give gives back what take gave name for one snake; a group none of
// name's snakes holds any more is free.
func (g *groupSet) give(name string) {
	if g == nil {
		return
	}
	n, ok := g.of[name]
	if !ok {
		return
	}
	if g.use[n]--; g.use[n] <= 0 {
		delete(g.use, n)
		delete(g.of, name)
		g.free = append(g.free, n)
	}
}

// gwRef names one gateway process: its name on the link (from the
// subjects it publishes on, which NATS permissions can tie to its user)
// and its instance (random at its start).
type gwRef struct {
	name string
	id   uint64
}

// owned is the join that gave a snake: its gateway, the gateway's nonce
// for the join, the player's key fingerprint ("" for a keyless player),
// scores identity and name.
type owned struct {
	gw    gwRef
	join  uint64
	key   string
	ident string // the key's fingerprint, or the keyless player's name in lower case
	name  string // lower case
	group int    // its game.JoinNear group, 0 none (WithGroups)
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

// playRef is a keyed player's name (lower case) as it plays through the
// gateway of that name.
type playRef struct{ gw, key, name string }

// quota is one gateway name's share of what the simulation remembers.
type quota struct{ instances, joined, cancels, idents int }

// Games are taken from a gateway only for identities that play through it
// or left it within identKeep.
const (
	identKeep  = time.Hour
	identSweep = time.Minute
)

// joinRef names one join: its gateway and the gateway's nonce for it.
type joinRef struct {
	gw    gwRef
	nonce uint64
}

// joinedSnake is what a recent join gave (0 while it is being made).
type joinedSnake struct {
	id game.ID
	at time.Time
}

// joinMemory is how long the simulation remembers a join (or a cancel that
// came first) for a cancel: longer than a gateway tries one (leaveFor).
const joinMemory = time.Minute

// Bounds on what gateways can make the simulation remember, in all and per
// gateway name: instances heard within the lease (a restarting gateway has
// two for a lease), joins and cancels within joinMemory, identities within
// identKeep. Past a bound a new instance's heartbeat is dropped and its
// joins refused, a join is refused, a cancel of a join not seen yet is
// forgotten, and a new identity's games are refused.
const (
	maxGateways    = 4096
	maxInstances   = 4
	maxJoinRefs    = 1 << 16
	maxJoinRefsPer = 1 << 13
	maxIdents      = 1 << 18
	maxIdentsPer   = 1 << 16
	nameCheckWait  = 2 * time.Second
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
func NewSim(nc *nats.Conn, w *game.World, prefix string, lease time.Duration, opts ...SimOption) (*Sim, error) {
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
		joined: map[joinRef]joinedSnake{}, cancel: map[joinRef]time.Time{}, idents: map[identRef]identUse{},
		plays: map[playRef]int32{}, quota: map[string]*quota{}}
	for _, o := range opts {
		o(s)
	}
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

// quotaLocked is gateway name's quota, made when missing. s.mu is held.
func (s *Sim) quotaLocked(name string) *quota {
	q := s.quota[name]
	if q == nil {
		q = &quota{}
		s.quota[name] = q
	}
	return q
}

// heardLocked notes that gateway g is alive; it reports false when g is a
// new instance past the bounds (maxGateways in all, maxInstances of its
// name). s.mu is held.
func (s *Sim) heardLocked(g gwRef, now time.Time) bool {
	if _, ok := s.seen[g]; !ok {
		q := s.quotaLocked(g.name)
		if len(s.seen) >= maxGateways || q.instances >= maxInstances {
			return false
		}
		q.instances++
	}
	s.seen[g] = now
	return true
}

// joinFail answers a join with a refusal.
func (s *Sim) joinFail(m *nats.Msg, status byte, msg string) {
	s.joins.Add(1)
	_ = m.Respond(appendJoinRep(nil, joinRep{status: status, msg: msg, sim: s.inst}))
}

func (s *Sim) onJoin(m *nats.Msg) {
	name, ok := s.subj.sender(m.Subject)
	req, err := decodeJoinReq(m.Data)
	if !ok || err != nil || !s.subj.replyOK(m) {
		s.bad.Add(1)
		return
	}
	if game.CleanName(req.name) != req.name { // not a nickname: no session asks for it
		s.bad.Add(1)
		s.joinFail(m, joinFailed, "not a nickname")
		return
	}
	gw := gwRef{name, req.gw}
	ref := joinRef{gw, req.nonce}
	now := time.Now()
	s.mu.Lock()
	_, cancelled := s.cancel[ref]
	_, twice := s.joined[ref]
	live := s.heardLocked(gw, now)
	q := s.quotaLocked(name)
	room := len(s.joined) < maxJoinRefs && q.joined < maxJoinRefsPer
	group := 0
	if !cancelled && !twice && live && room {
		s.joined[ref] = joinedSnake{0, now} // being made: a cancel from now on is kept for it
		q.joined++
		group = s.groups.take(name)
	}
	s.mu.Unlock()
	switch {
	case cancelled: // the gateway gave up on it before it came
		s.joinFail(m, joinFailed, "cancelled")
		return
	case twice || !live || !room:
		s.joinFail(m, joinFailed, "too many joins")
		return
	}
	status, msg, id, from := s.join(req, group)
	s.mu.Lock()
	_, cancelled = s.cancel[ref] // a cancel that came while it was made
	if status == joinOK && !cancelled {
		o := owned{gw: gw, join: req.nonce, key: req.key, ident: req.key, name: strings.ToLower(req.name), group: group}
		if o.ident == "" {
			o.ident = o.name
		}
		s.owner[id] = o
		s.playsLocked(o)
		s.joined[ref] = joinedSnake{id, now}
	} else {
		delete(s.joined, ref)
		q.joined--
		if group != 0 {
			s.groups.give(name)
		}
	}
	s.mu.Unlock()
	if status == joinOK && cancelled {
		s.w.Leave(id)
		status, msg = joinFailed, "cancelled"
	}
	s.joins.Add(1)
	_ = m.Respond(appendJoinRep(nil, joinRep{status: status, id: id, msg: msg, sim: s.inst, tick: from}))
}

// join checks req's name against the claims and joins it to the world,
// in JoinNear group g; from is the first tick whose view shows the snake.
func (s *Sim) join(req joinReq, g int) (status byte, msg string, id game.ID, from uint64) {
	if s.names != nil && !game.IsGuestName(req.name) {
		ctx, cancel := context.WithTimeout(context.Background(), nameCheckWait)
		h, err := s.names(ctx, req.name, req.key)
		cancel()
		switch {
		case errors.Is(err, scores.ErrOff):
		case err != nil:
			return joinUnchecked, "", 0, 0
		case h == scores.Others:
			return joinClaimed, "", 0, 0
		}
	}
	id, from, err := s.w.JoinNear(req.name, g)
	switch {
	case err == nil:
		return joinOK, "", id, from
	case errors.Is(err, game.ErrFull):
		return joinFull, "", 0, 0
	case errors.Is(err, game.ErrNameTaken):
		return joinTaken, "", 0, 0
	}
	return joinFailed, err.Error(), 0, 0
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
// else the join is refused if it comes later (or, while it is being made,
// once it is). It answers like a leave.
func (s *Sim) cancelJoin(m *nats.Msg, ref joinRef) {
	s.mu.Lock()
	j, ok := s.joined[ref]
	var gone bool
	switch {
	case ok && j.id == 0: // being made: onJoin finds the cancel (bounded with the joins)
		s.cancelLocked(ref)
	case ok:
		o := s.owner[j.id]
		if gone = o.gw == ref.gw && o.join == ref.nonce; gone {
			delete(s.owner, j.id)
			s.leftLocked(o, time.Now())
		}
		delete(s.joined, ref)
		s.quotaLocked(ref.gw.name).joined--
	case len(s.cancel) < maxJoinRefs && s.quotaLocked(ref.gw.name).cancels < maxJoinRefsPer:
		s.cancelLocked(ref)
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

// cancelLocked remembers a cancel of join ref. s.mu is held.
func (s *Sim) cancelLocked(ref joinRef) {
	if _, dup := s.cancel[ref]; !dup {
		s.quotaLocked(ref.gw.name).cancels++
	}
	s.cancel[ref] = time.Now()
}

// playsLocked notes that o's identity (and, for a key, its name) plays
// through o's gateway. s.mu is held.
func (s *Sim) playsLocked(o owned) {
	if o.key != "" {
		s.plays[playRef{o.gw.name, o.key, o.name}]++
	}
	r := identRef{o.gw.name, o.ident}
	u, ok := s.idents[r]
	if !ok {
		q := s.quotaLocked(o.gw.name)
		if len(s.idents) >= maxIdents || q.idents >= maxIdentsPer {
			return
		}
		q.idents++
	}
	u.live++
	s.idents[r] = u
}

// leftLocked notes that o's snake left. s.mu is held.
func (s *Sim) leftLocked(o owned, now time.Time) {
	if o.group != 0 {
		s.groups.give(o.gw.name)
	}
	if o.key != "" {
		r := playRef{o.gw.name, o.key, o.name}
		if s.plays[r]--; s.plays[r] <= 0 {
			delete(s.plays, r)
		}
	}
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

// MayClaim reports whether gateway gw may claim name for the key fp: a
// snake of that name plays through gw under that key now.
func (s *Sim) MayClaim(gw, fp, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.plays[playRef{gw, fp, strings.ToLower(name)}] > 0
}

// Longest is the longest any snake of this world has been: no game a
// gateway records is longer.
func (s *Sim) Longest() int {
	v := s.w.Acquire()
	defer v.Release()
	return v.Best.Length
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

// reap removes the snakes of gateways silent for longer than the lease,
// and forgets old joins, cancels and identities.
func (s *Sim) reap() {
	defer close(s.done)
	t := time.NewTicker(s.lease / 10)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			gone, silent := s.expire(now)
			for _, id := range gone {
				s.w.Leave(id)
				s.expired.Add(1)
			}
			if s.log != nil {
				for _, g := range silent {
					// a gateway that closed took its snakes with it: only
					// one that went silent with snakes is news
					lvl := slog.LevelInfo
					if g.snakes > 0 {
						lvl = slog.LevelWarn
					}
					s.log.Log(context.Background(), lvl, "gateway silent past its lease: its snakes leave", "gateway", g.name,
						"instance", g.id, "silent", g.silent.Round(time.Millisecond), "lease", s.lease, "snakes", g.snakes)
				}
			}
		}
	}
}

// silentGateway is a gateway instance expire found silent past the lease.
type silentGateway struct {
	gwRef
	silent time.Duration // since its last heartbeat
	snakes int           // its snakes, removed
}

// expire does reap's bookkeeping, taking s.mu, and returns the snakes to
// remove and the gateways whose silence removes them.
func (s *Sim) expire(now time.Time) ([]game.ID, []silentGateway) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for r, j := range s.joined {
		if j.id != 0 && now.Sub(j.at) > joinMemory {
			delete(s.joined, r)
			s.quotaLocked(r.gw.name).joined--
		}
	}
	for r, at := range s.cancel {
		if now.Sub(at) > joinMemory {
			delete(s.cancel, r)
			s.quotaLocked(r.gw.name).cancels--
		}
	}
	var dead map[gwRef]int // index in silent
	var silent []silentGateway
	for gw, at := range s.seen {
		if now.Sub(at) <= s.lease {
			continue
		}
		delete(s.seen, gw)
		s.quotaLocked(gw.name).instances--
		if dead == nil {
			dead = map[gwRef]int{}
		}
		dead[gw] = len(silent)
		silent = append(silent, silentGateway{gwRef: gw, silent: now.Sub(at)})
	}
	var gone []game.ID
	if dead != nil { // one pass over the snakes, however many gateways went
		for id, o := range s.owner {
			if k, ok := dead[o.gw]; ok {
				gone = append(gone, id)
				silent[k].snakes++
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
				s.quotaLocked(r.gw).idents--
			}
		}
		for name, q := range s.quota {
			if *q == (quota{}) {
				delete(s.quota, name)
			}
		}
	}
	return gone, silent
}
