package scores

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	snakedgame "snaked/game" // bench_test.go has a func game
)

// Outcome is what Claim did.
type Outcome uint8

// Claim's outcomes.
const (
	Claimed   Outcome = iota + 1 // the key holds the name now (new, or refreshed)
	Taken                        // another key holds a live claim
	Generated                    // a name the server generates: never claimed
	Limited                      // the source used up its ClaimsPerHour new claims (they come back over the hour): not claimed
)

// String returns "claimed", "taken", "generated" or "limited".
func (o Outcome) String() string {
	switch o {
	case Claimed:
		return "claimed"
	case Taken:
		return "taken"
	case Generated:
		return "generated"
	case Limited:
		return "limited"
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// ClaimResult is Claim's answer.
type ClaimResult struct {
	Outcome  Outcome
	Released string // a name of the key's released to make room (lower case), "" none
}

// ErrNoKey is returned by Claim without a fingerprint: keyless players never
// claim names.
var ErrNoKey = errors.New("scores: a name is claimed by a key; keyless players never claim")

// Claim gives name (case ignored) to the key fp, playing from the source
// from, at now:
//
//   - Claimed when fp holds a live claim on it (used within ClaimTTL of
//     now): the claim's last use is refreshed, whatever the source.
//     Every game Recorded under a name its key holds refreshes it too.
//   - Taken when another key does; nothing changes.
//   - Generated for a name of the form the server generates
//     (snakedgame.IsGuestName): such names are never claimed.
//   - Limited when the name is free (never claimed, or its claim lapsed,
//     fp's own included) but from has used up its new claims
//     (Options.ClaimsPerHour); nothing changes. from is an opaque source,
//     an IPv4 address or IPv6 /64 as text; "" is unknown and never
//     limited. Only a claim that would give fp a name it does not hold
//     counts against from.
//   - Claimed otherwise: fp holds the name now. When fp held NamesPerKey
//     live claims already, its least recently played name (smallest last
//     use; ties by name) is released in the same transaction and returned
//     in Released (lower case); when NamesPerKey was lowered below what fp
//     holds, all beyond it go and Released is the least recently played.
//
// An error (ErrDisabled included) means nothing is known about the name:
// the caller must not hand it out as claimed.
func (s *Store) Claim(ctx context.Context, name, fp, from string, now time.Time) (ClaimResult, error) {
	c := s.conns()
	if c == nil {
		return ClaimResult{}, ErrDisabled
	}
	if fp == "" {
		return ClaimResult{}, ErrNoKey
	}
	if name == "" || len(name) > maxName || len(fp) > maxID || len(from) > maxSource {
		return ClaimResult{}, fmt.Errorf("scores: claim: name or fingerprint empty or too long, or source too long")
	}
	if snakedgame.IsGuestName(name) {
		return ClaimResult{Outcome: Generated}, nil
	}
	res, err := s.claim(ctx, c, strings.ToLower(name), fp, from, now)
	if err != nil {
		s.errs.Add(1)
		return ClaimResult{}, fmt.Errorf("scores: claim %s: %w", name, err)
	}
	return res, nil
}

// claim is Claim's transaction, for a lower-case name.
func (s *Store) claim(ctx context.Context, c *conns, name, fp, from string, now time.Time) (res ClaimResult, err error) {
	t := now.Unix()
	cutoff := now.Add(-s.opts.ClaimTTL).Unix()
	tx, err := c.w.BeginTx(ctx, nil)
	if err != nil {
		return res, err
	}
	defer tx.Rollback()
	var owner string
	var used int64
	switch err = tx.StmtContext(ctx, c.st.get).QueryRowContext(ctx, name).Scan(&owner, &used); {
	case errors.Is(err, sql.ErrNoRows):
		err = nil // free
	case err != nil:
		return res, err
	case used >= cutoff && owner == fp:
		if _, err = tx.StmtContext(ctx, c.st.refresh).ExecContext(ctx, name, t); err != nil {
			return res, err
		}
		return ClaimResult{Outcome: Claimed}, tx.Commit()
	case used >= cutoff:
		return ClaimResult{Outcome: Taken}, nil
	}
	if !s.lim.take(from, now) {
		return ClaimResult{Outcome: Limited}, nil
	}
	defer func() {
		if err != nil {
			s.lim.undo(from)
		}
	}()
	held, err := heldNames(ctx, tx.StmtContext(ctx, c.st.held), fp, cutoff)
	if err != nil {
		return res, err
	}
	if over := len(held) - (s.opts.NamesPerKey - 1); over > 0 {
		drop := tx.StmtContext(ctx, c.st.release)
		for _, n := range held[:over] {
			if _, err = drop.ExecContext(ctx, n, fp); err != nil {
				return res, err
			}
		}
		res.Released = held[0]
	}
	if _, err = tx.StmtContext(ctx, c.st.claim).ExecContext(ctx, name, fp, t); err != nil {
		return res, err
	}
	if err = tx.Commit(); err != nil {
		return res, err
	}
	res.Outcome = Claimed
	return res, nil
}

// heldNames returns the names fp holds live claims on (used at cutoff or
// later), least recently played first, ties by name.
func heldNames(ctx context.Context, q *sql.Stmt, fp string, cutoff int64) ([]string, error) {
	rows, err := q.QueryContext(ctx, fp, cutoff)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, rows.Err()
}

// Owner returns the fingerprint of the key holding a live claim (used within
// ClaimTTL of now) on name, case ignored; false when nobody does, always for
// a name the server generates.
func (s *Store) Owner(ctx context.Context, name string, now time.Time) (string, bool, error) {
	c := s.conns()
	if c == nil {
		return "", false, ErrDisabled
	}
	if snakedgame.IsGuestName(name) {
		return "", false, nil
	}
	var fp string
	var used int64
	err := c.st.owner.QueryRowContext(ctx, strings.ToLower(name)).Scan(&fp, &used)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		s.errs.Add(1)
		return "", false, fmt.Errorf("scores: owner of %s: %w", name, err)
	}
	if used < now.Add(-s.opts.ClaimTTL).Unix() {
		return "", false, nil
	}
	return fp, true, nil
}
