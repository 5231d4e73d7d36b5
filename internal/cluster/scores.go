package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"snaked/internal/scores"
)

// The scores travel too: the database stays with the simulation
// (ScoreServer), and a gateway's sessions use RemoteScores, which has the
// methods of a scores.Store. Each gateway asks under its own name:
//
//	P.gw.NAME.scores.names    who holds a name, claim one (request/reply)
//	P.gw.NAME.scores.ask      a player's record, the leaderboards (request/reply)
//	P.gw.NAME.scores.record   finished games, in numbered batches the simulation acknowledges
//
// The simulation serves each subject with a bounded pool of workers and a
// bounded queue, and each gateway name at a bounded rate, so name
// questions never wait behind leaderboards or games and no gateway
// crowds out another: past a bound requests are dropped (their askers
// time out, and a name that cannot be checked is not handed out).
//
// A gateway's word counts for its own players only: it learns whether a
// name is free, its asker's or another key's, never whose; it claims a
// name only for a key that plays it through that gateway now (Players),
// and from a known address; it records games only for identities that
// play through it, ended by the simulation's clock and no longer than
// any snake of the world was; the leaderboards it reads carry no key
// fingerprints. These messages are rare (a join, a death, the scores
// command), so they are JSON.

// maxScoreMsg bounds a scores message.
const maxScoreMsg = 256 << 10

// maxBatch is the most finished games one record batch carries.
const maxBatch = 64

// Worker pools of the scores service, by subject: workers and queued
// requests past which they are dropped.
const (
	namesWorkers, namesQueue   = 4, 512
	askWorkers, askQueue       = 2, 64
	recordWorkers, recordQueue = 1, 256
)

// Rates of the scores service a gateway name, by subject: requests a
// second and the burst.
const (
	namesRate, namesBurst   = 50, 100
	askRate, askBurst       = 20, 40
	recordRate, recordBurst = 20, 40
)

// Bounds a record is clamped to.
const (
	maxGame  = 24 * time.Hour
	maxKills = 1 << 16
)

type scoreAsk struct {
	Op   string    `json:"op"` // holding, claim, player, top, today
	Name string    `json:"name,omitempty"`
	FP   string    `json:"fp,omitempty"`
	From string    `json:"from,omitempty"` // the claimant's address (IPv4, or IPv6 /64)
	ID   scores.ID `json:"id,omitempty"`
	N    int       `json:"n,omitempty"`
}

type scoreAnswer struct {
	OK       bool           `json:"ok,omitempty"`
	Holding  scores.Holding `json:"holding,omitempty"`
	Outcome  scores.Outcome `json:"outcome,omitempty"`
	Released string         `json:"released,omitempty"`
	Record   scores.Record  `json:"record,omitempty"`
	Entries  []scores.Entry `json:"entries,omitempty"`
	Off      bool           `json:"off,omitempty"` // the simulation keeps no scores: names are not claimed
	Err      string         `json:"err,omitempty"`
}

// recordBatch is a gateway's batch of finished games: seq counts its
// batches, so a batch sent again after a lost acknowledgement is recorded
// once.
type recordBatch struct {
	GW      uint64          `json:"gw"`
	Seq     uint64          `json:"seq"`
	Results []scores.Result `json:"results"`
}

// recordAck is the simulation's answer to a batch: the games it recorded
// and those it refused (another gateway's player, or nobody's).
type recordAck struct {
	Recorded int `json:"recorded"`
	Refused  int `json:"refused"`
}

// Players is what the scores service asks the simulation about a
// gateway's players (a *Sim).
type Players interface {
	MayRecord(gw, ident string) bool   // ident plays through gw now, or did lately
	MayClaim(gw, fp, name string) bool // the key fp plays name through gw now
	Longest() int                      // the longest any snake of the world has been
}

// ScoreServer answers a simulation's gateways from its scores store.
type ScoreServer struct {
	st   *scores.Store // nil: scores are off
	pl   Players       // nil: every gateway's word is taken (tests)
	subj subjects
	subs []*nats.Subscription
	stop chan struct{}
	wg   sync.WaitGroup

	mu    sync.Mutex          // guards seqs and rates
	seqs  map[gwRef]uint64    // each gateway's last batch recorded (at most maxGateways)
	rates map[rateRef]*bucket // each gateway name's requests, by subject (at most maxGateways names)

	bad, asked, records, refused, limited atomic.Uint64
}

// rateRef is one gateway name's rate on one subject.
type rateRef struct {
	gw   string
	subj int
}

// bucket is a token bucket: burst tokens, refilled at rate a second.
type bucket struct {
	tokens float64
	at     time.Time
}

// take reports whether a request may go now, refilling at rate up to
// burst.
func (b *bucket) take(now time.Time, rate, burst float64) bool {
	b.tokens = min(burst, b.tokens+now.Sub(b.at).Seconds()*rate)
	b.at = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// ServeScores serves st (nil: scores are off, and the gateways are told
// so) on nc under prefix until Close, asking pl (the simulation; nil:
// trusting every gateway) about the gateways' players.
func ServeScores(nc *nats.Conn, prefix string, st *scores.Store, pl Players) (*ScoreServer, error) {
	s := &ScoreServer{st: st, pl: pl, subj: subjectsOf(prefix, "*"), stop: make(chan struct{}),
		seqs: map[gwRef]uint64{}, rates: map[rateRef]*bucket{}}
	for k, p := range []struct {
		subj           string
		workers, queue int
		rate, burst    float64
		handle         func(*nats.Msg)
	}{
		{s.subj.names, namesWorkers, namesQueue, namesRate, namesBurst, s.onAsk},
		{s.subj.ask, askWorkers, askQueue, askRate, askBurst, s.onAsk},
		{s.subj.record, recordWorkers, recordQueue, recordRate, recordBurst, s.onRecord},
	} {
		ch := make(chan *nats.Msg, p.queue)
		sub, err := nc.Subscribe(p.subj, func(m *nats.Msg) {
			gw, ok := s.subj.sender(m.Subject)
			if !ok || !s.allow(rateRef{gw, k}, p.rate, p.burst) {
				s.limited.Add(1)
				return
			}
			select {
			case ch <- m:
			default:
				s.limited.Add(1) // the pool is behind: the asker times out
			}
		})
		if err != nil {
			s.Close()
			return nil, err
		}
		s.subs = append(s.subs, sub)
		for range p.workers {
			s.wg.Go(func() {
				for {
					select {
					case <-s.stop:
						return
					case m := <-ch:
						p.handle(m)
					}
				}
			})
		}
	}
	return s, nc.Flush()
}

// allow reports whether gateway name r.gw may make a request on subject
// r.subj now.
func (s *ScoreServer) allow(r rateRef, rate, burst float64) bool {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.rates[r]
	if b == nil {
		if len(s.rates) >= 3*maxGateways {
			for k, x := range s.rates { // forget the full ones: they are as new
				if now.Sub(x.at).Seconds()*rate >= burst {
					delete(s.rates, k)
				}
			}
			if len(s.rates) >= 3*maxGateways {
				return false
			}
		}
		b = &bucket{tokens: burst, at: now}
		s.rates[r] = b
	}
	return b.take(now, rate, burst)
}

// Bad counts messages dropped because they did not decode.
func (s *ScoreServer) Bad() uint64 { return s.bad.Load() }

// Close stops serving and waits for the workers.
func (s *ScoreServer) Close() {
	for _, sub := range s.subs {
		_ = sub.Unsubscribe()
	}
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.wg.Wait()
}

func (s *ScoreServer) onRecord(m *nats.Msg) {
	name, ok := s.subj.sender(m.Subject)
	var b recordBatch
	if !ok || !s.subj.replyOK(m) || len(m.Data) > maxScoreMsg || json.Unmarshal(m.Data, &b) != nil || len(b.Results) > maxBatch || b.Seq == 0 {
		s.bad.Add(1)
		return
	}
	gw := gwRef{name, b.GW}
	s.mu.Lock()
	last, known := s.seqs[gw]
	fresh := b.Seq > last
	if fresh {
		if !known && len(s.seqs) >= maxGateways {
			clear(s.seqs) // forget the oldest gateways' numbers: at worst a batch sent again is recorded twice
		}
		s.seqs[gw] = b.Seq
	}
	s.mu.Unlock()
	var ack recordAck
	if fresh && s.st != nil {
		now, longest := time.Now(), math.MaxInt
		if s.pl != nil {
			longest = s.pl.Longest()
		}
		for _, r := range b.Results {
			if s.pl != nil && !s.pl.MayRecord(name, r.ID.Value) {
				ack.Refused++
				continue
			}
			// the simulation's clock ends it; what it claims is bounded
			r.End = now
			r.Duration = min(max(r.Duration, 0), maxGame)
			r.Length, r.Kills = min(r.Length, longest), min(r.Kills, maxKills)
			s.st.Record(r) // the store refuses what it cannot keep, and counts it
			ack.Recorded++
		}
	}
	s.records.Add(uint64(ack.Recorded))
	s.refused.Add(uint64(ack.Refused))
	a, _ := json.Marshal(ack)
	_ = m.Respond(a)
}

func (s *ScoreServer) onAsk(m *nats.Msg) {
	name, _ := s.subj.sender(m.Subject)
	var q scoreAsk
	if !s.subj.replyOK(m) || len(m.Data) > maxScoreMsg || json.Unmarshal(m.Data, &q) != nil {
		s.bad.Add(1)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	now := time.Now() // the simulation's clock, never the gateway's
	var a scoreAnswer
	var err error
	switch {
	case q.Op != "holding" && q.Op != "claim" && q.Op != "player" && q.Op != "top" && q.Op != "today":
		s.bad.Add(1)
		return
	case s.st == nil:
		a.Off = true
	case q.Op == "holding":
		a.Holding, err = s.st.Holding(ctx, q.Name, q.FP, now)
	case q.Op == "claim" && (q.From == "" || s.pl != nil && !s.pl.MayClaim(name, q.FP, q.Name)):
		err = errNotPlaying
	case q.Op == "claim":
		var c scores.ClaimResult
		c, err = s.st.Claim(ctx, q.Name, q.FP, q.From, now)
		a.Outcome, a.Released = c.Outcome, c.Released
	case q.Op == "player":
		a.Record, a.OK, err = s.st.Player(ctx, q.ID)
	case q.Op == "top":
		a.Entries, err = s.st.Top(ctx, q.N)
	case q.Op == "today":
		a.Entries, err = s.st.TopToday(ctx, q.N, now)
	}
	for i := range a.Entries {
		if a.Entries[i].ID.Kind == scores.Key {
			a.Entries[i].ID.Value = "" // no key's fingerprint leaves the simulation
		}
	}
	if err != nil {
		a.Err = err.Error()
	}
	s.asked.Add(1)
	b, _ := json.Marshal(a)
	_ = m.Respond(b)
}

// errNotPlaying refuses a claim for a key that does not play the name
// through the gateway that asks.
var errNotPlaying = errors.New("cluster: a claim for a name the key does not play through this gateway")

// RemoteScores asks a simulation's ScoreServer; it has the methods of a
// scores.Store that sessions use. Finished games wait on a bounded queue
// (full: dropped and counted) and go out in batches, each sent again until
// the simulation acknowledges it, so games played while the simulation is
// away are recorded when it is back.
type RemoteScores struct {
	nc    *nats.Conn
	subj  subjects
	gw    uint64
	wait  time.Duration
	queue chan scores.Result
	stop  chan struct{}
	done  chan struct{}

	recorded, dropped, acked, refused, errs atomic.Uint64
}

// Record queue and retry bounds.
const (
	recordQueueSize = 4096
	recordRetryMin  = 250 * time.Millisecond
	recordRetryMax  = 5 * time.Second
)

// NewRemoteScores asks the ScoreServer under prefix on nc for gateway
// name; gw is the gateway's instance (Gateway.ID). Close stops it.
func NewRemoteScores(nc *nats.Conn, prefix, name string, gw uint64) *RemoteScores {
	r := &RemoteScores{nc: nc, subj: subjectsOf(prefix, name), gw: gw, wait: 2 * time.Second,
		queue: make(chan scores.Result, recordQueueSize), stop: make(chan struct{}), done: make(chan struct{})}
	go r.sender()
	return r
}

// Record queues a finished game for the simulation; it never blocks. A
// full queue drops it (counted).
func (r *RemoteScores) Record(res scores.Result) bool {
	select {
	case r.queue <- res:
		r.recorded.Add(1)
		return true
	default:
		r.dropped.Add(1)
		return false
	}
}

// Close stops the sender: a batch being sent ends with the try in flight
// (dropped and counted when it fails); what is still queued is counted as
// dropped.
func (r *RemoteScores) Close() {
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	<-r.done
	r.dropped.Add(uint64(len(r.queue)))
}

// sender sends the queued games in batches of at most maxBatch, each until
// the simulation acknowledges it, in order.
func (r *RemoteScores) sender() {
	defer close(r.done)
	var seq uint64
	batch := make([]scores.Result, 0, maxBatch)
	for {
		select {
		case <-r.stop:
			return
		case res := <-r.queue:
			batch = append(batch[:0], res)
		}
	fill:
		for len(batch) < maxBatch {
			select {
			case res := <-r.queue:
				batch = append(batch, res)
			default:
				break fill
			}
		}
		seq++
		msg, err := json.Marshal(recordBatch{GW: r.gw, Seq: seq, Results: batch})
		if err != nil {
			r.dropped.Add(uint64(len(batch)))
			continue
		}
		for wait := recordRetryMin; ; wait = min(2*wait, recordRetryMax) {
			if m, err := r.nc.Request(r.subj.record, msg, r.wait); err == nil {
				var ack recordAck
				if json.Unmarshal(m.Data, &ack) != nil {
					ack.Recorded = len(batch)
				}
				r.acked.Add(uint64(len(batch)))
				r.refused.Add(uint64(min(max(ack.Refused, 0), len(batch))))
				break
			}
			r.errs.Add(1)
			select {
			case <-r.stop:
				r.dropped.Add(uint64(len(batch)))
				return
			case <-time.After(wait):
			}
		}
	}
}

func (r *RemoteScores) ask(ctx context.Context, subj string, q scoreAsk) (scoreAnswer, error) {
	var a scoreAnswer
	b, err := json.Marshal(q)
	if err != nil {
		return a, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.wait)
	defer cancel()
	m, err := r.nc.RequestWithContext(ctx, subj, b)
	if err != nil {
		r.errs.Add(1)
		return a, ErrNoSim
	}
	if len(m.Data) > maxScoreMsg || json.Unmarshal(m.Data, &a) != nil {
		r.errs.Add(1)
		return scoreAnswer{}, errBad
	}
	if a.Off {
		return scoreAnswer{}, scores.ErrOff
	}
	if a.Err != "" {
		r.errs.Add(1)
		return a, errors.New(a.Err)
	}
	return a, nil
}

// Holding asks who holds name, as the key fp sees it.
func (r *RemoteScores) Holding(ctx context.Context, name, fp string, _ time.Time) (scores.Holding, error) {
	a, err := r.ask(ctx, r.subj.names, scoreAsk{Op: "holding", Name: name, FP: fp})
	return a.Holding, err
}

// Claim claims name for the key fp, from the address from.
func (r *RemoteScores) Claim(ctx context.Context, name, fp, from string, _ time.Time) (scores.ClaimResult, error) {
	a, err := r.ask(ctx, r.subj.names, scoreAsk{Op: "claim", Name: name, FP: fp, From: from})
	return scores.ClaimResult{Outcome: a.Outcome, Released: a.Released}, err
}

// Player asks for an identity's record.
func (r *RemoteScores) Player(ctx context.Context, id scores.ID) (scores.Record, bool, error) {
	a, err := r.ask(ctx, r.subj.ask, scoreAsk{Op: "player", ID: id})
	return a.Record, a.OK, err
}

// Top asks for the all-time leaderboard.
func (r *RemoteScores) Top(ctx context.Context, n int) ([]scores.Entry, error) {
	a, err := r.ask(ctx, r.subj.ask, scoreAsk{Op: "top", N: n})
	return a.Entries, err
}

// TopToday asks for today's leaderboard (the simulation's day).
func (r *RemoteScores) TopToday(ctx context.Context, n int, _ time.Time) ([]scores.Entry, error) {
	a, err := r.ask(ctx, r.subj.ask, scoreAsk{Op: "today", N: n})
	return a.Entries, err
}

// Err is nil: a remote store is there as long as the link is (questions
// that go unanswered fail one by one, and a name that cannot be checked is
// not handed out).
func (r *RemoteScores) Err() error { return nil }

// Stats counts what this gateway sent: games queued, acknowledged
// (Written; the simulation refused Invalid of them: players it does not
// know through this gateway, as after its restart) or dropped, and
// questions and batches that failed.
func (r *RemoteScores) Stats() scores.Stats {
	return scores.Stats{Recorded: r.recorded.Load(), Written: r.acked.Load(), Dropped: r.dropped.Load(),
		Invalid: r.refused.Load(), Errors: r.errs.Load(), Queued: len(r.queue)}
}
