package cluster

import (
	"context"
	"encoding/json"
	"errors"
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
//	P.gw.NAME.scores.names    who owns a name, claim one (request/reply)
//	P.gw.NAME.scores.ask      a player's record, the leaderboards (request/reply)
//	P.gw.NAME.scores.record   finished games, in numbered batches the simulation acknowledges
//
// The simulation serves each subject with a bounded pool of workers and a
// bounded queue, so name questions never wait behind leaderboards or
// games, and a flood of one kind is dropped (its askers time out, and a
// name that cannot be checked is not handed out) rather than queued
// without end. Claims take the simulation's clock. These messages are
// rare (a join, a death, the scores command), so they are JSON.

// maxScoreMsg bounds a scores message.
const maxScoreMsg = 256 << 10

// maxBatch is the most finished games one record batch carries.
const maxBatch = 64

// Worker pools of the scores service, by subject: workers and queued
// requests past which NATS drops them.
const (
	namesWorkers, namesQueue   = 4, 512
	askWorkers, askQueue       = 2, 64
	recordWorkers, recordQueue = 1, 256
)

type scoreAsk struct {
	Op   string    `json:"op"` // owner, claim, player, top, today
	Name string    `json:"name,omitempty"`
	FP   string    `json:"fp,omitempty"`
	From string    `json:"from,omitempty"` // the claimant's address (IPv4, or IPv6 /64)
	ID   scores.ID `json:"id,omitempty"`
	N    int       `json:"n,omitempty"`
}

type scoreAnswer struct {
	OK       bool           `json:"ok,omitempty"`
	FP       string         `json:"fp,omitempty"`
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

// ScoreServer answers a simulation's gateways from its scores store.
type ScoreServer struct {
	st   *scores.Store                      // nil: scores are off
	may  func(gw string, ident string) bool // whether gateway gw may record identity ident's games; nil: any
	subj subjects
	subs []*nats.Subscription
	stop chan struct{}
	wg   sync.WaitGroup

	mu   sync.Mutex       // guards seqs
	seqs map[gwRef]uint64 // each gateway's last batch recorded (at most maxGateways)

	bad, asked, records, refused atomic.Uint64
}

// ServeScores serves st (nil: scores are off, and the gateways are told
// so) on nc under prefix until Close. A gateway's finished games are
// recorded when may (Sim.MayRecord; nil: always) says the identity plays
// through it; the others are refused and counted.
func ServeScores(nc *nats.Conn, prefix string, st *scores.Store, may func(gw, ident string) bool) (*ScoreServer, error) {
	s := &ScoreServer{st: st, may: may, subj: subjectsOf(prefix, "*"), stop: make(chan struct{}), seqs: map[gwRef]uint64{}}
	for _, p := range []struct {
		subj           string
		workers, queue int
		handle         func(*nats.Msg)
	}{
		{s.subj.names, namesWorkers, namesQueue, s.onAsk},
		{s.subj.ask, askWorkers, askQueue, s.onAsk},
		{s.subj.record, recordWorkers, recordQueue, s.onRecord},
	} {
		ch := make(chan *nats.Msg, p.queue)
		sub, err := nc.ChanSubscribe(p.subj, ch)
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
	if fresh && s.st != nil {
		for _, r := range b.Results {
			if s.may != nil && !s.may(name, r.ID.Value) {
				s.refused.Add(1) // another gateway's player, or nobody's
				continue
			}
			s.st.Record(r) // the store refuses what it cannot keep, and counts it
			s.records.Add(1)
		}
	}
	_ = m.Respond([]byte(`{"ok":true}`))
}

func (s *ScoreServer) onAsk(m *nats.Msg) {
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
	case q.Op != "owner" && q.Op != "claim" && q.Op != "player" && q.Op != "top" && q.Op != "today":
		s.bad.Add(1)
		return
	case s.st == nil:
		a.Off = true
	case q.Op == "owner":
		a.FP, a.OK, err = s.st.Owner(ctx, q.Name, now)
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
	if err != nil {
		a.Err = err.Error()
	}
	s.asked.Add(1)
	b, _ := json.Marshal(a)
	_ = m.Respond(b)
}

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

	recorded, dropped, acked, errs atomic.Uint64
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

// Close stops the sender: a batch being sent gets one more try; what is
// still queued is counted as dropped.
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
			if _, err := r.nc.Request(r.subj.record, msg, r.wait); err == nil {
				r.acked.Add(uint64(len(batch)))
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

// Owner asks who claimed name.
func (r *RemoteScores) Owner(ctx context.Context, name string, _ time.Time) (string, bool, error) {
	a, err := r.ask(ctx, r.subj.names, scoreAsk{Op: "owner", Name: name})
	return a.FP, a.OK, err
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

// Stats counts what this gateway sent: games queued, acknowledged or
// dropped, and questions and batches that failed.
func (r *RemoteScores) Stats() scores.Stats {
	return scores.Stats{Recorded: r.recorded.Load(), Written: r.acked.Load(), Dropped: r.dropped.Load(),
		Errors: r.errs.Load(), Queued: len(r.queue)}
}
