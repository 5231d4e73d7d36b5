package scores

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// Kind says what an identity is.
type Kind uint8

// Kinds of identity; the values are stored in the database.
const (
	Key     Kind = 1 // a public key's SHA256 fingerprint
	Keyless Kind = 2 // the name of a player without a key, in lower case
)

// String returns "key" or "keyless".
func (k Kind) String() string {
	switch k {
	case Key:
		return "key"
	case Keyless:
		return "keyless"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// ID is an identity: a key fingerprint or a keyless player's name.
type ID struct {
	Kind  Kind
	Value string // "SHA256:..." for Key, the lower-case name for Keyless
}

// KeyID is the identity of a player whose key has fingerprint fp.
func KeyID(fp string) ID { return ID{Kind: Key, Value: fp} }

// NameID is the identity of a keyless player called name (case is ignored).
func NameID(name string) ID { return ID{Kind: Keyless, Value: strings.ToLower(name)} }

// Limits on what the store accepts; longer values are refused, not cut.
const (
	maxID   = 256
	maxName = 64
)

// valid reports whether id may be stored, and returns it normalised.
func (id ID) valid() (ID, bool) {
	switch id.Kind {
	case Key:
	case Keyless:
		id.Value = strings.ToLower(id.Value)
	default:
		return id, false
	}
	return id, id.Value != "" && len(id.Value) <= maxID
}

// Result is one finished game.
type Result struct {
	ID       ID
	Name     string        // the name played under (display case)
	Length   int           // the snake's longest length in this game
	Kills    int           // snakes killed
	Died     bool          // the game ended in a death (not a quit or disconnect)
	Duration time.Duration // time played
	End      time.Time     // when the game ended; its UTC day is the day it counts for
}

// clean returns r normalised, or false when it cannot be stored.
func (r Result) clean() (Result, bool) {
	id, ok := r.ID.valid()
	if !ok || r.Name == "" || len(r.Name) > maxName || r.Length < 0 || r.Kills < 0 || r.End.IsZero() {
		return r, false
	}
	r.ID = id
	if r.Duration < 0 {
		r.Duration = 0
	}
	return r, true
}

// Record queues a finished game for the writer and returns at once; it never
// blocks. It returns false, and counts the result as dropped, when the queue
// is full, the store is closed, or its path can never hold a database. A
// store whose database has not opened yet keeps the queue for when it does
// (see Open).
func (s *Store) Record(r Result) bool {
	if s == nil {
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed || s.queue == nil {
		s.dropped.Add(1)
		return false
	}
	select {
	case s.queue <- r:
		s.recorded.Add(1)
		return true
	default:
		s.dropped.Add(1)
		return false
	}
}

// run is the writer: until the database opens it retries the open (see
// retry); then it commits the queue every FlushEvery, and everything left
// when Close stops it. Close waits for it.
func (s *Store) run(ctx context.Context) {
	defer close(s.done)
	if s.conns() == nil && !s.retry(ctx) {
		// Closed before the database opened: Record no longer sends,
		// and what it queued is lost.
		for len(s.queue) > 0 {
			<-s.queue
			s.lost.Add(1)
		}
		return
	}
	t := time.NewTicker(s.opts.FlushEvery)
	defer t.Stop()
	var pending []Result
	for {
		select {
		case <-t.C:
			pending = s.flush(ctx, pending)
		case <-s.stop:
			// Record no longer sends: the queue is complete.
			pending = s.flush(ctx, pending)
			if len(pending) > 0 {
				s.lost.Add(uint64(len(pending)))
			}
			return
		}
	}
}

// flush moves the queue onto pending and commits pending in one
// transaction. It returns what is still to be written: nothing on success,
// else pending (bounded by the queue size, oldest lost first) for the next
// tick.
func (s *Store) flush(ctx context.Context, pending []Result) []Result {
	for n := len(s.queue); n > 0; n-- {
		r, ok := (<-s.queue).clean()
		if !ok {
			s.invalid.Add(1)
			continue
		}
		pending = append(pending, r)
	}
	if len(pending) == 0 {
		return pending
	}
	if err := s.write(ctx, pending); err != nil {
		s.errs.Add(1)
		if over := len(pending) - s.opts.QueueSize; over > 0 {
			s.lost.Add(uint64(over))
			pending = append(pending[:0], pending[over:]...)
		}
		s.log.Warn("scores: commit failed; will retry", "path", s.path, "results", len(pending), "err", err)
		return pending
	}
	s.written.Add(uint64(len(pending)))
	s.batches.Add(1)
	clear(pending) // drop the names' memory
	return pending[:0]
}

const (
	upsertPlayer = `INSERT INTO players
		(kind, ident, name, best, best_at, kills, deaths, games, played, first, last)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1, ?8, ?9, ?5)
		ON CONFLICT (kind, ident) DO UPDATE SET
			name    = CASE WHEN excluded.last >= players.last THEN excluded.name ELSE players.name END,
			best_at = CASE WHEN excluded.best > players.best THEN excluded.best_at ELSE players.best_at END,
			best    = max(players.best, excluded.best),
			kills   = players.kills + excluded.kills,
			deaths  = players.deaths + excluded.deaths,
			games   = players.games + 1,
			played  = players.played + excluded.played,
			first   = min(players.first, excluded.first),
			last    = max(players.last, excluded.last)`
	upsertDay = `INSERT INTO days (kind, ident, day, name, best, best_at)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6)
		ON CONFLICT (kind, ident, day) DO UPDATE SET
			name    = CASE WHEN excluded.best > days.best THEN excluded.name ELSE days.name END,
			best_at = CASE WHEN excluded.best > days.best THEN excluded.best_at ELSE days.best_at END,
			best    = max(days.best, excluded.best)`
	// A game refreshes only a live claim: one that lapsed is no longer
	// the key's (claiming it again is a new claim, see Claim).
	touchClaim = `UPDATE claims SET used = max(used, ?3) WHERE name = ?1 AND fp = ?2 AND used >= ?4`

	playerQuery = `SELECT name, best, best_at, kills, deaths, games, played, first, last,
			(SELECT coalesce(sum(n), 0) FROM best_counts c WHERE c.best > p.best) + 1
		FROM players p WHERE kind = ?1 AND ident = ?2`
	ownerQuery = `SELECT fp, used FROM claims WHERE name = ?1`

	refreshClaim = `UPDATE claims SET used = max(used, ?2) WHERE name = ?1`
	heldQuery    = `SELECT name FROM claims WHERE fp = ?1 AND used >= ?2 ORDER BY used, name`
	releaseClaim = `DELETE FROM claims WHERE name = ?1 AND fp = ?2`
	newClaim     = `INSERT INTO claims (name, fp, claimed, used) VALUES (?1, ?2, ?3, ?3)
		ON CONFLICT (name) DO UPDATE SET fp = excluded.fp, claimed = excluded.claimed, used = excluded.used`
)

// stmts are the statements a Store runs for every game and every join,
// prepared once at Open: the writer's and Claim's on the writer's
// connection, the queries on the read pool (database/sql prepares them
// again on each connection that runs them, once).
type stmts struct {
	upPlayer, upDay, touch             *sql.Stmt // the writer's batch
	get, refresh, held, release, claim *sql.Stmt // Claim's transaction
	player, owner                      *sql.Stmt // Player, Owner
}

// all lists the statements, for closing.
func (st *stmts) all() []*sql.Stmt {
	return []*sql.Stmt{st.upPlayer, st.upDay, st.touch, st.get, st.refresh, st.held, st.release, st.claim, st.player, st.owner}
}

// prepareStmts prepares a Store's statements on w (the writer) and r
// (reads); its error is for open to wrap.
func prepareStmts(ctx context.Context, w, r *sql.DB) (stmts, error) {
	var st stmts
	var err error
	for _, p := range []struct {
		db *sql.DB
		to **sql.Stmt
		q  string
	}{{w, &st.upPlayer, upsertPlayer}, {w, &st.upDay, upsertDay}, {w, &st.touch, touchClaim},
		{w, &st.get, ownerQuery}, {w, &st.refresh, refreshClaim}, {w, &st.held, heldQuery},
		{w, &st.release, releaseClaim}, {w, &st.claim, newClaim},
		{r, &st.player, playerQuery}, {r, &st.owner, ownerQuery}} {
		if *p.to, err = p.db.PrepareContext(ctx, p.q); err != nil {
			st.close()
			return stmts{}, fmt.Errorf("prepare: %w", err)
		}
	}
	return st, nil
}

// close closes the statements prepared (nil ones are skipped).
func (st *stmts) close() {
	for _, s := range st.all() {
		if s != nil {
			s.Close()
		}
	}
}

// dayKey is an identity's row in days.
type dayKey struct {
	kind  Kind
	ident string
	day   int64
}

// dayNote is a length a batch wrote to a days row: known there once the
// batch commits.
type dayNote struct {
	k    dayKey
	best int
}

// dayKeep bounds the writer's dayBest; past it the map starts again
// (it is only a cache: a miss writes the row).
const dayKeep = 1 << 17

// dayKnown reports whether k's row in days holds a best of length or
// more already, so that upserting a game of length there would change
// nothing: its best, name and best_at change only for a longer game. A
// days row is never deleted and its best never falls, so what a
// committed batch wrote stays true.
func (s *Store) dayKnown(k dayKey, length int) bool {
	b, ok := s.dayBest[k]
	return ok && length <= b
}

// write commits batch (already cleaned) in one transaction.
func (s *Store) write(ctx context.Context, batch []Result) error {
	s.dayNotes = s.dayNotes[:0] // a failed batch's notes were never true
	c := s.conns()
	tx, err := c.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("scores: begin batch: %w", err)
	}
	defer tx.Rollback()
	// The writer's one connection prepared these at Open: the batch
	// borrows them rather than preparing three statements each time.
	pl, dy, cl := tx.StmtContext(ctx, c.st.upPlayer), tx.StmtContext(ctx, c.st.upDay), tx.StmtContext(ctx, c.st.touch)
	for _, r := range batch {
		end := r.End.Unix()
		deaths := 0
		if r.Died {
			deaths = 1
		}
		played := int64(r.Duration.Round(time.Second) / time.Second)
		first := r.End.Add(-r.Duration).Unix()
		if _, err := pl.ExecContext(ctx, int(r.ID.Kind), r.ID.Value, r.Name, r.Length, end, r.Kills, deaths, played, first); err != nil {
			return fmt.Errorf("scores: write %s %s: %w", r.ID.Kind, r.ID.Value, err)
		}
		// The day's row, unless it holds this length already (in a
		// crowd most games: a player's day best moves seldom).
		if k := (dayKey{r.ID.Kind, r.ID.Value, day(r.End)}); s.dayKnown(k, r.Length) {
			s.daySkips.Add(1)
		} else {
			if _, err := dy.ExecContext(ctx, int(r.ID.Kind), r.ID.Value, k.day, r.Name, r.Length, end); err != nil {
				return fmt.Errorf("scores: write day of %s %s: %w", r.ID.Kind, r.ID.Value, err)
			}
			s.dayNotes = append(s.dayNotes, dayNote{k, r.Length})
		}
		if r.ID.Kind == Key {
			cutoff := r.End.Add(-s.opts.ClaimTTL).Unix()
			if _, err := cl.ExecContext(ctx, strings.ToLower(r.Name), r.ID.Value, end, cutoff); err != nil {
				return fmt.Errorf("scores: touch claim %s: %w", r.Name, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("scores: commit batch of %d: %w", len(batch), err)
	}
	s.noteDays()
	return nil
}

// noteDays takes the days rows a committed batch wrote into dayBest,
// keeping only the newest day's (and starting again past dayKeep).
func (s *Store) noteDays() {
	for _, n := range s.dayNotes {
		if n.k.day > s.dayOf || s.dayBest == nil || len(s.dayBest) >= dayKeep {
			clear(s.dayBest)
			if s.dayBest == nil {
				s.dayBest = make(map[dayKey]int)
			}
			s.dayOf = max(s.dayOf, n.k.day)
		}
		if n.k.day == s.dayOf && n.best > s.dayBest[n.k] {
			s.dayBest[n.k] = n.best
		}
	}
	clear(s.dayNotes) // drop the identities' memory
	s.dayNotes = s.dayNotes[:0]
}

// day is t's UTC day: days since 1970-01-01.
func day(t time.Time) int64 {
	u := t.Unix()
	d := u / 86400
	if u%86400 < 0 {
		d--
	}
	return d
}
