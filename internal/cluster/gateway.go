package cluster

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"snaked/game"
	"snaked/internal/scores"
)

// Views is where a gateway's sessions read the world: a replica fed by the
// simulation's ticks (a Follower), and whether ticks come.
type Views interface {
	Acquire() *game.View
	// Live reports whether the world had a tick within d.
	Live(d time.Duration) bool
	// Behind is how many ticks the views are behind the newest tick
	// received (about that many, following regions).
	Behind() int
}

// Gateway is a gateway's side of the link: a game.Host whose views come
// from Views and whose joins and inputs go to the simulation. It sends a
// heartbeat every lease/3 until Close, with its sessions' counts as
// SetLocal last gave them, and hears every gateway's, so its sessions'
// banner counts the whole cluster (Others) and says when the world is
// restarting (Notice).
type Gateway struct {
	nc       *nats.Conn
	subj     subjects
	name     string // the gateway's name on the link (GatewayName)
	id       uint64 // this process's instance
	views    Views
	wait     atomic.Int64  // a join's or a leave's answer, at most (a time.Duration; tests shorten it while the leaver runs)
	behind   atomic.Bool   // the banner says the views are catching up (Notice)
	leaveFor time.Duration // how long the leaver tries one leave before it counts it lost
	lease    time.Duration
	log      *slog.Logger // nil: nothing logged
	sub      *nats.Subscription
	stop     chan struct{}
	done     chan struct{} // the heartbeats have ended
	left     chan struct{} // the leaver has ended
	leave    chan input    // leaves and cancels for the leaver, in order
	nonce    atomic.Uint64 // the last join's nonce

	bad   atomic.Uint64 // heartbeats and join answers that did not decode
	acked atomic.Uint64 // leaves and cancels the simulation acknowledged (see leaver)
	lost  atomic.Uint64 // leaves the simulation never acknowledged (see leaver)
	late  atomic.Uint64 // heartbeats that went out more than the lease after the one before

	local atomic.Uint64 // this gateway's players (high half) and spectators (low half), as SetLocal last gave them

	mu        sync.Mutex         // guards others and instances
	others    map[gwRef]gwCounts // the other gateways' last heartbeats (at most maxGateways, maxInstances a name)
	instances map[string]int     // others' instances by name
	// the sums of others, kept with them, for Others (read every frame by every session)
	oplayers, ospectators atomic.Int64
}

// gwCounts is a gateway's last heartbeat.
type gwCounts struct {
	players, spectators uint64
	at                  time.Time
}

var _ game.Host = (*Gateway)(nil)

// ErrNoSim is the answer to a join (and to a scores query) when no
// simulation answered in time (it is restarting, or NATS is unreachable).
// It is game.ErrUnavailable, which the sessions know.
var ErrNoSim = fmt.Errorf("cluster: no simulation answered: %w", game.ErrUnavailable)

// Link timing: how long a join or a leave waits for the simulation's
// answer, and how long the banner goes without a tick before it says the
// world is restarting.
const (
	answerWait      = 2 * time.Second
	restartingAfter = 1500 * time.Millisecond
)

// The banner says the gateway is catching up from when its views are
// behindFrom ticks (2 s) behind the ticks received until they are within
// behindTo again.
const (
	behindFrom = 20
	behindTo   = 5
)

// A GatewayOption sets one of a Gateway's unexported fields at
// construction.
type GatewayOption func(*Gateway)

// WithGatewayLog has the gateway log to l what its counters count and an
// operator would want to read the moment of: a heartbeat sent later than
// the lease after the one before (the simulation may have removed this
// gateway's snakes). Without it, nothing is logged.
func WithGatewayLog(l *slog.Logger) GatewayOption { return func(g *Gateway) { g.log = l } }

// NewGateway links gateway name (GatewayName; its connection nc made with
// Options.Gateway set to it) to the simulation on nc under prefix. lease
// is the simulation's (0: DefaultLease): heartbeats go out three times
// within it.
func NewGateway(nc *nats.Conn, prefix, name string, views Views, lease time.Duration, opts ...GatewayOption) (*Gateway, error) {
	if lease <= 0 {
		lease = DefaultLease
	}
	if !token(name) {
		return nil, fmt.Errorf("cluster: gateway name %q: want 1..64 of [A-Za-z0-9_-]", name)
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	g := &Gateway{nc: nc, subj: subjectsOf(prefix, name), name: name, id: binary.LittleEndian.Uint64(b[:]) | 1, views: views,
		leaveFor: leaveFor, lease: lease, stop: make(chan struct{}), done: make(chan struct{}),
		left: make(chan struct{}), leave: make(chan input, leaveQueue), others: map[gwRef]gwCounts{}, instances: map[string]int{}}
	g.wait.Store(int64(answerWait))
	for _, o := range opts {
		o(g)
	}
	all := subjectsOf(prefix, "*")
	sub, err := nc.Subscribe(all.hb, g.onHeartbeat)
	if err != nil {
		return nil, err
	}
	g.sub = sub
	g.beat()
	go g.heartbeats(lease / 3)
	go g.leaver()
	return g, nil
}

// ID is the gateway's instance on the link.
func (g *Gateway) ID() uint64 { return g.id }

// Name is the gateway's name on the link.
func (g *Gateway) Name() string { return g.name }

// Close stops the heartbeats (the simulation then removes this gateway's
// snakes after its lease) and the leaver, and waits for them.
func (g *Gateway) Close() {
	select {
	case <-g.stop:
	default:
		_ = g.sub.Unsubscribe()
		close(g.stop)
	}
	<-g.done
	<-g.left
}

// GatewayStats are a Gateway's counters.
type GatewayStats struct {
	Bad   uint64 // heartbeats and join answers that did not decode, dropped
	Acked uint64 // leaves and join cancels the simulation acknowledged: the leaver tries them no more
	Lost  uint64 // leaves the simulation did not acknowledge in time (see leaver)
	Late  uint64 // heartbeats that went out more than the lease after the one before: the simulation may have removed this gateway's snakes
}

// Stats returns the counters.
func (g *Gateway) Stats() GatewayStats {
	return GatewayStats{Bad: g.bad.Load(), Acked: g.acked.Load(), Lost: g.lost.Load(), Late: g.late.Load()}
}

// SetLocal records this gateway's players and spectators, which its next
// heartbeats carry. Its server calls it each time they change.
func (g *Gateway) SetLocal(players, spectators int) {
	clamp := func(n int) uint64 { return uint64(min(max(n, 0), math.MaxUint32)) }
	g.local.Store(clamp(players)<<32 | clamp(spectators))
}

// localCounts are this gateway's players and spectators, as SetLocal last
// gave them (none before).
func (g *Gateway) localCounts() (players, spectators int) {
	l := g.local.Load()
	return int(l >> 32), int(l & math.MaxUint32)
}

// Others returns the players and spectators of the cluster's other live
// gateways, from their last heartbeats (at most lease/3 old). It
// allocates nothing and takes no lock.
func (g *Gateway) Others() (players, spectators int) {
	return int(g.oplayers.Load()), int(g.ospectators.Load())
}

// onHeartbeat keeps another gateway's counts, and their sums.
func (g *Gateway) onHeartbeat(m *nats.Msg) {
	name, ok := g.subj.sender(m.Subject)
	h, err := decodeHeartbeat(m.Data)
	if !ok || err != nil {
		g.bad.Add(1)
		return
	}
	ref := gwRef{name, h.gw}
	if name == g.name && h.gw == g.id {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	old, known := g.others[ref]
	if !known && (len(g.others) >= maxGateways || g.instances[name] >= maxInstances) {
		return
	}
	if !known {
		g.instances[name]++
	}
	g.others[ref] = gwCounts{players: h.players, spectators: h.spectators, at: time.Now()}
	g.oplayers.Add(int64(h.players) - int64(old.players))
	g.ospectators.Add(int64(h.spectators) - int64(old.spectators))
}

// sweepLocked forgets gateways silent for a lease, and their counts.
func (g *Gateway) sweepLocked(now time.Time) {
	for ref, c := range g.others {
		if now.Sub(c.at) > g.lease {
			delete(g.others, ref)
			if g.instances[ref.name]--; g.instances[ref.name] <= 0 {
				delete(g.instances, ref.name)
			}
			g.oplayers.Add(-int64(c.players))
			g.ospectators.Add(-int64(c.spectators))
		}
	}
}

func (g *Gateway) heartbeats(every time.Duration) {
	defer close(g.done)
	t := time.NewTicker(every)
	defer t.Stop()
	last := time.Now() // NewGateway's beat
	for {
		select {
		case <-g.stop:
			return
		case now := <-t.C:
			g.beat()
			// a gateway short of CPU (or this goroutine held up) beats late
			at := time.Now()
			if gap := at.Sub(last); gap > g.lease {
				g.late.Add(1)
				if g.log != nil {
					g.log.Warn("heartbeat late: the simulation may have removed this gateway's snakes",
						"since_last", gap.Round(time.Millisecond), "lease", g.lease, "after_timer", at.Sub(now).Round(time.Millisecond))
				}
			}
			last = at
			g.mu.Lock()
			g.sweepLocked(now)
			g.mu.Unlock()
		}
	}
}

func (g *Gateway) beat() {
	p, s := g.localCounts()
	h := heartbeat{gw: g.id, players: uint64(max(p, 0)), spectators: uint64(max(s, 0))}
	_ = g.nc.Publish(g.subj.hb, appendHeartbeat(nil, h))
}

// Notice is what the sessions' banner says about the link: "world
// restarting" while no tick came from the simulation for restartingAfter
// (it is restarting, or NATS is unreachable); "catching up" while the
// views are behind the ticks received (see behindFrom: the gateway is
// short of CPU, and its sessions see the world as it was); else "".
func (g *Gateway) Notice() string {
	if !g.views.Live(restartingAfter) {
		return "world restarting"
	}
	late := g.behind.Load()
	if b := g.views.Behind(); late && b <= behindTo || !late && b >= behindFrom {
		late = !late
		g.behind.Store(late) // every session's frame calls Notice: a store only on a change
	}
	if late {
		return "catching up"
	}
	return ""
}

// Acquire returns the newest view of the world.
func (g *Gateway) Acquire() *game.View { return g.views.Acquire() }

// Join asks the simulation for a snake named name, for a player whose
// key has fingerprint key ("" for a keyless one), with the same answers
// as a local world (game.ErrFull, game.ErrNameTaken), or ErrNoSim. The
// identity travels with the join, and the simulation keeps it with the
// snake (Sim.Key). The seat names the simulation instance and this join's
// nonce: inputs and the leave carry them, and the simulation applies them
// to that join's snake only.
//
// A join that times out may still have been taken (the simulation was
// slow, or its answer was lost): the leaver then cancels it by its nonce,
// so no snake is left without its player (holding the name).
func (g *Gateway) Join(name, key string) (game.Seat, error) {
	nonce := g.nonce.Add(1)
	m, err := g.nc.Request(g.subj.join, appendJoinReq(nil, joinReq{gw: g.id, name: name, key: key, nonce: nonce}), time.Duration(g.wait.Load()))
	if err != nil {
		if !errors.Is(err, nats.ErrNoResponders) { // no simulation heard it: nothing to cancel
			g.queue(input{kind: inCancel, gw: g.id, join: nonce})
		}
		return game.Seat{}, ErrNoSim
	}
	rep, err := decodeJoinRep(m.Data)
	if err != nil || rep.status == joinOK && (rep.id == 0 || rep.sim == 0 || rep.tick == 0) {
		g.bad.Add(1)
		return game.Seat{}, fmt.Errorf("cluster: join: %w", errBad)
	}
	switch rep.status {
	case joinOK:
		return game.Seat{ID: rep.id, World: rep.sim, Join: nonce, Tick: rep.tick}, nil
	case joinFull:
		return game.Seat{}, game.ErrFull
	case joinTaken:
		return game.Seat{}, game.ErrNameTaken
	case joinClaimed:
		return game.Seat{}, scores.ErrClaimed
	case joinUnchecked:
		return game.Seat{}, scores.ErrUnchecked
	}
	return game.Seat{}, fmt.Errorf("cluster: join refused: %s", game.CleanName(rep.msg))
}

// Leave removes the player's snake: a request the simulation answers,
// sent by the gateway's leaver, which tries again until it is answered
// (a leave lost while the link was down would leave a snake without a
// player, since this gateway's lease goes on). It never blocks: with the
// leaver's queue full, the leave goes out once, unanswered. The leave
// names the whole seat, so a leave still being tried when a restarted
// simulation hands the same ID to another player does not take that
// one's snake.
func (g *Gateway) Leave(s game.Seat) { g.queue(seatInput(inLeave, g.id, s, game.None)) }

// queue hands a leave or a cancel to the leaver; closed, or with its queue
// full, it goes out once at once.
func (g *Gateway) queue(in input) {
	select {
	case <-g.stop: // closed: nobody reads the queue
		g.publish(in)
		return
	default:
	}
	select {
	case g.leave <- in:
	default:
		g.publish(in)
	}
}

func (g *Gateway) publish(in input) {
	_ = g.nc.Publish(g.subj.input, appendInput(make([]byte, 0, 24), in))
}

// Leaves: the leaver's queue, and the pause between tries of one leave.
const (
	leaveQueue = 4096
	leaveRetry = 250 * time.Millisecond
)

// leaveFor is how long the leaver tries one leave, by default, before it
// counts it lost.
const leaveFor = 30 * time.Second

// leaver sends the queued leaves as requests, in order, each until the
// simulation answers or g.leaveFor has passed, until Close (then the rest
// go out once each).
func (g *Gateway) leaver() {
	defer close(g.left)
	for {
		select {
		case <-g.stop:
			for {
				select {
				case in := <-g.leave:
					g.publish(in)
				default:
					return
				}
			}
		case in := <-g.leave:
			g.leaveOne(in)
		}
	}
}

// leaveOne asks the simulation to remove a snake (a leave, or a cancel of
// a join) until it answers (any answer: a snake it no longer has is gone
// too), g.leaveFor passes or the gateway closes.
func (g *Gateway) leaveOne(in input) {
	msg := appendInput(nil, in)
	for end := time.Now().Add(g.leaveFor); ; {
		if _, err := g.nc.Request(g.subj.input, msg, time.Duration(g.wait.Load())); err == nil {
			g.acked.Add(1)
			return
		}
		if time.Now().After(end) {
			g.lost.Add(1)
			return
		}
		select {
		case <-g.stop:
			_ = g.nc.Publish(g.subj.input, msg)
			return
		case <-time.After(leaveRetry):
		}
	}
}

// Turn queues a turn.
func (g *Gateway) Turn(s game.Seat, d game.Dir) { g.publish(seatInput(inTurn, g.id, s, d)) }

// Dash queues a dash.
func (g *Gateway) Dash(s game.Seat) { g.publish(seatInput(inDash, g.id, s, game.None)) }

// Respawn asks for a new life.
func (g *Gateway) Respawn(s game.Seat) { g.publish(seatInput(inRespawn, g.id, s, game.None)) }
