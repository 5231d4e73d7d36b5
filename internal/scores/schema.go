package scores

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations are the schema's history, oldest first: migrations[i] takes a
// database from PRAGMA user_version i to i+1. Each runs in its own
// transaction together with the version bump, so a crash leaves the file at
// one version or the next, never between. Append only: a released entry is
// never edited, a change is a new entry.
//
// Times are Unix seconds; a day is the number of UTC days since 1970-01-01;
// kind is 1 for a key fingerprint, 2 for a keyless player's name.
var migrations = []string{
	// 1: per-identity records.
	`CREATE TABLE meta (
		k TEXT PRIMARY KEY,
		v TEXT NOT NULL
	) WITHOUT ROWID;
	CREATE TABLE players (
		kind    INTEGER NOT NULL CHECK (kind IN (1, 2)),
		ident   TEXT    NOT NULL,
		name    TEXT    NOT NULL,
		best    INTEGER NOT NULL DEFAULT 0,
		best_at INTEGER NOT NULL DEFAULT 0,
		kills   INTEGER NOT NULL DEFAULT 0,
		deaths  INTEGER NOT NULL DEFAULT 0,
		games   INTEGER NOT NULL DEFAULT 0,
		played  INTEGER NOT NULL DEFAULT 0,
		first   INTEGER NOT NULL,
		last    INTEGER NOT NULL,
		PRIMARY KEY (kind, ident)
	) WITHOUT ROWID;
	CREATE INDEX players_best ON players (best DESC, best_at);`,

	// 2: per-day bests, for today's leaderboard. Each existing record's
	// best is carried over to the day it was set.
	`CREATE TABLE days (
		kind    INTEGER NOT NULL,
		ident   TEXT    NOT NULL,
		day     INTEGER NOT NULL,
		name    TEXT    NOT NULL,
		best    INTEGER NOT NULL,
		best_at INTEGER NOT NULL,
		PRIMARY KEY (kind, ident, day)
	) WITHOUT ROWID;
	CREATE INDEX days_best ON days (day, best DESC, best_at);
	INSERT INTO days (kind, ident, day, name, best, best_at)
		SELECT kind, ident, best_at / 86400, name, best, best_at
		FROM players WHERE games > 0;`,

	// 3: name claims by key fingerprint; name is lower case.
	`CREATE TABLE claims (
		name    TEXT    PRIMARY KEY,
		fp      TEXT    NOT NULL,
		claimed INTEGER NOT NULL,
		used    INTEGER NOT NULL
	) WITHOUT ROWID;`,

	// 4: how many identities hold each best length, kept by triggers, so a
	// rank is a sum over distinct lengths (hundreds) instead of a count
	// over the identities ahead (up to all of them: 9 ms at 100,000).
	`CREATE TABLE best_counts (
		best INTEGER PRIMARY KEY,
		n    INTEGER NOT NULL
	);
	INSERT INTO best_counts (best, n) SELECT best, count(*) FROM players GROUP BY best;
	CREATE TRIGGER players_best_insert AFTER INSERT ON players BEGIN
		INSERT INTO best_counts (best, n) VALUES (new.best, 1)
			ON CONFLICT (best) DO UPDATE SET n = n + 1;
	END;
	CREATE TRIGGER players_best_update AFTER UPDATE OF best ON players WHEN old.best <> new.best BEGIN
		UPDATE best_counts SET n = n - 1 WHERE best = old.best;
		DELETE FROM best_counts WHERE best = old.best AND n <= 0;
		INSERT INTO best_counts (best, n) VALUES (new.best, 1)
			ON CONFLICT (best) DO UPDATE SET n = n + 1;
	END;
	CREATE TRIGGER players_best_delete AFTER DELETE ON players BEGIN
		UPDATE best_counts SET n = n - 1 WHERE best = old.best;
		DELETE FROM best_counts WHERE best = old.best AND n <= 0;
	END;`,

	// 5: a key's claims by last use, for Claim's bound on names per key;
	// the claims on names the server generates ("guest" and 1 to 12
	// digits), which nobody may hold, go.
	`CREATE INDEX claims_fp ON claims (fp, used);
	DELETE FROM claims WHERE name GLOB 'guest[0-9]*'
		AND substr(name, 6) NOT GLOB '*[^0-9]*' AND length(name) <= 17;`,
}

// version is the schema version this package writes.
var version = len(migrations)

// migrate brings db from its current version up to version to, one
// transaction per step, and returns the version it found. It refuses a
// database newer than this package knows.
func migrate(ctx context.Context, db *sql.DB, to int) (int, error) {
	from, err := userVersion(ctx, db)
	if err != nil {
		return 0, err
	}
	if from > len(migrations) {
		return from, fmt.Errorf("scores: database is at schema version %d, newer than this snaked knows (%d); run a newer snaked or move the file away", from, len(migrations))
	}
	for v := from; v < to; v++ {
		if err := step(ctx, db, v); err != nil {
			return from, err
		}
	}
	return from, nil
}

// step applies migrations[v] if the database is still at version v (another
// process may have got there first: the check runs under the write lock).
func step(ctx context.Context, db *sql.DB, v int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("scores: migrate to version %d: %w", v+1, err)
	}
	defer tx.Rollback()
	var cur int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&cur); err != nil {
		return fmt.Errorf("scores: migrate to version %d: %w", v+1, err)
	}
	if cur > v {
		return nil
	}
	if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
		return fmt.Errorf("scores: migrate to version %d: %w", v+1, err)
	}
	// PRAGMA takes no parameters; v is an int we own.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
		return fmt.Errorf("scores: migrate to version %d: %w", v+1, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("scores: migrate to version %d: %w", v+1, err)
	}
	return nil
}

func userVersion(ctx context.Context, db *sql.DB) (int, error) {
	var v int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("scores: read schema version: %w", err)
	}
	return v, nil
}
