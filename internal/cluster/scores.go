package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"snaked/internal/scores"
)

// The scores travel too: the database stays with the simulation
// (ScoreServer), and a gateway's sessions use RemoteScores, which has the
// methods of a scores.Store: finished games are published
// (PREFIX.scores.record, fire and forget), questions (who owns a name,
// claim it, a player's record, the leaderboards) are requests on
// PREFIX.scores.ask. These messages are rare (a join, a death, the scores
// command), so they are JSON.

// maxScoreMsg bounds a scores message.
const maxScoreMsg = 256 << 10

type scoreAsk struct {
	Op    string    `json:"op"` // owner, claim, player, top, today
	Name  string    `json:"name,omitempty"`
	FP    string    `json:"fp,omitempty"`
	ID    scores.ID `json:"id,omitempty"`
	N     int       `json:"n,omitempty"`
	NowNS int64     `json:"now,omitempty"`
}

type scoreAnswer struct {
	OK      bool           `json:"ok,omitempty"`
	FP      string         `json:"fp,omitempty"`
	Record  scores.Record  `json:"record,omitempty"`
	Entries []scores.Entry `json:"entries,omitempty"`
	Err     string         `json:"err,omitempty"`
}

// ScoreServer answers a simulation's gateways from its scores store.
type ScoreServer struct {
	st   *scores.Store
	subs []*nats.Subscription
	bad  atomic.Uint64
}

// ServeScores serves st on nc under prefix until Close.
func ServeScores(nc *nats.Conn, prefix string, st *scores.Store) (*ScoreServer, error) {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	s := &ScoreServer{st: st}
	rec, err := nc.Subscribe(prefix+".scores.record", s.onRecord)
	if err != nil {
		return nil, err
	}
	ask, err := nc.Subscribe(prefix+".scores.ask", s.onAsk)
	if err != nil {
		_ = rec.Unsubscribe()
		return nil, err
	}
	s.subs = []*nats.Subscription{rec, ask}
	return s, nc.Flush()
}

// Bad counts messages dropped because they did not decode.
func (s *ScoreServer) Bad() uint64 { return s.bad.Load() }

// Close stops serving.
func (s *ScoreServer) Close() {
	for _, sub := range s.subs {
		_ = sub.Unsubscribe()
	}
}

func (s *ScoreServer) onRecord(m *nats.Msg) {
	var r scores.Result
	if len(m.Data) > maxScoreMsg || json.Unmarshal(m.Data, &r) != nil {
		s.bad.Add(1)
		return
	}
	s.st.Record(r) // the store refuses what it cannot keep, and counts it
}

func (s *ScoreServer) onAsk(m *nats.Msg) {
	var q scoreAsk
	if len(m.Data) > maxScoreMsg || json.Unmarshal(m.Data, &q) != nil || m.Reply == "" {
		s.bad.Add(1)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	now := time.Unix(0, q.NowNS)
	var a scoreAnswer
	var err error
	switch q.Op {
	case "owner":
		a.FP, a.OK, err = s.st.Owner(ctx, q.Name, now)
	case "claim":
		a.OK, err = s.st.Claim(ctx, q.Name, q.FP, now)
	case "player":
		a.Record, a.OK, err = s.st.Player(ctx, q.ID)
	case "top":
		a.Entries, err = s.st.Top(ctx, q.N)
	case "today":
		a.Entries, err = s.st.TopToday(ctx, q.N, now)
	default:
		s.bad.Add(1)
		return
	}
	if err != nil {
		a.Err = err.Error()
	}
	b, _ := json.Marshal(a)
	_ = m.Respond(b)
}

// RemoteScores asks a simulation's ScoreServer; it has the methods of a
// scores.Store that sessions use.
type RemoteScores struct {
	nc                *nats.Conn
	prefix            string
	wait              time.Duration
	recorded, dropped atomic.Uint64
	errs              atomic.Uint64
}

// NewRemoteScores asks the ScoreServer under prefix on nc.
func NewRemoteScores(nc *nats.Conn, prefix string) *RemoteScores {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return &RemoteScores{nc: nc, prefix: prefix, wait: 2 * time.Second}
}

// Record publishes a finished game; it never blocks.
func (r *RemoteScores) Record(res scores.Result) bool {
	b, err := json.Marshal(res)
	if err == nil {
		err = r.nc.Publish(r.prefix+".scores.record", b)
	}
	if err != nil {
		r.dropped.Add(1)
		return false
	}
	r.recorded.Add(1)
	return true
}

func (r *RemoteScores) ask(ctx context.Context, q scoreAsk) (scoreAnswer, error) {
	var a scoreAnswer
	b, err := json.Marshal(q)
	if err != nil {
		return a, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.wait)
	defer cancel()
	m, err := r.nc.RequestWithContext(ctx, r.prefix+".scores.ask", b)
	if err != nil {
		r.errs.Add(1)
		return a, ErrNoSim
	}
	if err := json.Unmarshal(m.Data, &a); err != nil {
		r.errs.Add(1)
		return a, err
	}
	if a.Err != "" {
		r.errs.Add(1)
		return a, errors.New(a.Err)
	}
	return a, nil
}

// Owner asks who claimed name.
func (r *RemoteScores) Owner(ctx context.Context, name string, now time.Time) (string, bool, error) {
	a, err := r.ask(ctx, scoreAsk{Op: "owner", Name: name, NowNS: now.UnixNano()})
	return a.FP, a.OK, err
}

// Claim claims name for the key fp.
func (r *RemoteScores) Claim(ctx context.Context, name, fp string, now time.Time) (bool, error) {
	a, err := r.ask(ctx, scoreAsk{Op: "claim", Name: name, FP: fp, NowNS: now.UnixNano()})
	return a.OK, err
}

// Player asks for an identity's record.
func (r *RemoteScores) Player(ctx context.Context, id scores.ID) (scores.Record, bool, error) {
	a, err := r.ask(ctx, scoreAsk{Op: "player", ID: id})
	return a.Record, a.OK, err
}

// Top asks for the all-time leaderboard.
func (r *RemoteScores) Top(ctx context.Context, n int) ([]scores.Entry, error) {
	a, err := r.ask(ctx, scoreAsk{Op: "top", N: n})
	return a.Entries, err
}

// TopToday asks for today's leaderboard.
func (r *RemoteScores) TopToday(ctx context.Context, n int, now time.Time) ([]scores.Entry, error) {
	a, err := r.ask(ctx, scoreAsk{Op: "today", N: n, NowNS: now.UnixNano()})
	return a.Entries, err
}

// Err is nil: a remote store is there as long as the link is (questions
// that go unanswered fail one by one).
func (r *RemoteScores) Err() error { return nil }

// Stats counts what this gateway sent: games published or dropped, and
// questions that failed.
func (r *RemoteScores) Stats() scores.Stats {
	return scores.Stats{Recorded: r.recorded.Load(), Dropped: r.dropped.Load(), Errors: r.errs.Load()}
}
