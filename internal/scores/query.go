package scores

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// MaxTop is the most entries Top and TopToday return.
const MaxTop = 1000

// Entry is one row of a leaderboard.
type Entry struct {
	Rank int // 1 for the best; equal bests share a rank
	ID   ID
	Name string // display name (the last used; for today, the one of the day's best)
	Best int    // best length (all-time, or of the day)
}

// Record is one identity's lifetime record.
type Record struct {
	ID     ID
	Name   string // display name last used
	Rank   int    // all-time rank by best length; equal bests share a rank
	Best   int
	BestAt time.Time // when Best was set
	Kills  int
	Deaths int
	Games  int
	Played time.Duration // whole seconds
	First  time.Time     // start of the first game recorded
	Last   time.Time     // end of the last game recorded
}

// Top returns the all-time leaderboard's first n entries (at most MaxTop),
// best length first; among equal bests, who reached it first.
func (s *Store) Top(ctx context.Context, n int) ([]Entry, error) {
	return s.top(ctx, n, `SELECT kind, ident, name, best FROM players
		ORDER BY best DESC, best_at, kind, ident LIMIT ?1`)
}

// TopToday returns the first n entries (at most MaxTop) of the leaderboard of
// now's UTC day.
func (s *Store) TopToday(ctx context.Context, n int, now time.Time) ([]Entry, error) {
	return s.top(ctx, n, `SELECT kind, ident, name, best FROM days WHERE day = ?2
		ORDER BY best DESC, best_at, kind, ident LIMIT ?1`, day(now))
}

func (s *Store) top(ctx context.Context, n int, query string, args ...any) ([]Entry, error) {
	c := s.conns()
	if c == nil {
		return nil, ErrDisabled
	}
	n = min(n, MaxTop)
	if n <= 0 {
		return nil, nil
	}
	rows, err := c.r.QueryContext(ctx, query, append([]any{n}, args...)...)
	if err != nil {
		s.errs.Add(1)
		return nil, fmt.Errorf("scores: leaderboard: %w", err)
	}
	defer rows.Close()
	out := make([]Entry, 0, n)
	for rows.Next() {
		var e Entry
		var kind int
		if err := rows.Scan(&kind, &e.ID.Value, &e.Name, &e.Best); err != nil {
			s.errs.Add(1)
			return nil, fmt.Errorf("scores: leaderboard: %w", err)
		}
		e.ID.Kind = Kind(kind)
		e.Rank = len(out) + 1
		if len(out) > 0 && out[len(out)-1].Best == e.Best {
			e.Rank = out[len(out)-1].Rank
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		s.errs.Add(1)
		return nil, fmt.Errorf("scores: leaderboard: %w", err)
	}
	return out, nil
}

// Player returns id's record and rank; false when the store has none.
func (s *Store) Player(ctx context.Context, id ID) (Record, bool, error) {
	c := s.conns()
	if c == nil {
		return Record{}, false, ErrDisabled
	}
	id, ok := id.valid()
	if !ok {
		return Record{}, false, nil
	}
	rec := Record{ID: id}
	var bestAt, played, first, last int64
	err := c.st.player.QueryRowContext(ctx, int(id.Kind), id.Value).
		Scan(&rec.Name, &rec.Best, &bestAt, &rec.Kills, &rec.Deaths, &rec.Games, &played, &first, &last, &rec.Rank)
	if errors.Is(err, sql.ErrNoRows) {
		return Record{}, false, nil
	}
	if err != nil {
		s.errs.Add(1)
		return Record{}, false, fmt.Errorf("scores: player %s %s: %w", id.Kind, id.Value, err)
	}
	rec.BestAt = time.Unix(bestAt, 0).UTC()
	rec.Played = time.Duration(played) * time.Second
	rec.First = time.Unix(first, 0).UTC()
	rec.Last = time.Unix(last, 0).UTC()
	return rec, true, nil
}
