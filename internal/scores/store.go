package scores

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Defaults for the zero fields of Options.
const (
	DefaultQueueSize     = 4096
	DefaultFlushEvery    = time.Second
	DefaultClaimTTL      = 30 * 24 * time.Hour
	DefaultNamesPerKey   = 3
	DefaultClaimsPerHour = 60 // admits a classroom behind one NAT joining at once
	DefaultRetryEvery    = 30 * time.Second
)

// Options configure a Store; a zero field takes its default.
type Options struct {
	Log        *slog.Logger  // where the store logs; nil: slog.Default()
	QueueSize  int           // results waiting for the writer before Record drops; default 4096
	FlushEvery time.Duration // how often the writer commits the queue; default 1s
	ClaimTTL   time.Duration // a name claim lapses after this long unused; default 30 days

	// NamesPerKey is the most names a key holds; a new claim beyond it
	// releases the key's least recently played name. Default 3.
	NamesPerKey int
	// ClaimsPerHour bounds the new claims per source (Claim's from): a
	// source may make this many at once, and regains one every
	// hour/ClaimsPerHour, a token bucket; the sources of one IPv6 /48
	// share a bucket four times as large besides. Refreshing a name the
	// key holds never counts. Default 60; negative: no limit.
	ClaimsPerHour int
	// RetryEvery is how often a Store whose database could not be used
	// tries to open it again. Default 30s.
	RetryEvery time.Duration
}

func (o Options) withDefaults() Options {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.FlushEvery <= 0 {
		o.FlushEvery = DefaultFlushEvery
	}
	if o.ClaimTTL <= 0 {
		o.ClaimTTL = DefaultClaimTTL
	}
	if o.NamesPerKey <= 0 {
		o.NamesPerKey = DefaultNamesPerKey
	}
	if o.ClaimsPerHour == 0 {
		o.ClaimsPerHour = DefaultClaimsPerHour
	}
	if o.RetryEvery <= 0 {
		o.RetryEvery = DefaultRetryEvery
	}
	return o
}

// ErrDisabled is returned by the methods of a Store whose database is not
// open (see Open) and of a nil Store.
var ErrDisabled = errors.New("scores: store disabled")

// Store is the scores database. Its methods are safe for concurrent use.
//
// An identity is a key fingerprint ("SHA256:...", kind Key) or, for a player
// without a key, the name in lower case (kind Keyless). Per identity the store
// keeps the display name last used, best length, total kills, deaths, games,
// time played and first and last seen; per identity and UTC day the best
// length of that day. It keeps no addresses.
//
// A name is claimed by a key (Claim) and held until the claim lapses,
// ClaimTTL (30 days) after its last use, a claim or a game under it; a
// lapsed claim is not held, and claiming it again is a new claim. A key
// holds at most NamesPerKey (3) names: a new claim beyond releases its
// least recently played one in the same transaction. Names of the form the
// server generates (game.IsGuestName: "guest" and 1 to 12 digits) are never
// claimed and belong to nobody. New claims are bounded per source, an
// opaque address the caller passes ("" is unknown and not limited):
// ClaimsPerHour (60) at once, one back every hour/ClaimsPerHour, a token
// bucket kept in memory only (an IPv6 source's /48 has one four times as
// large besides); buckets that refilled are dropped, at most
// 65,536 sources are tracked, and past them new sources share one bucket
// until entries refill. Refreshing a name the key holds never counts and is
// never refused.
//
// The game never waits on the database: Record puts a finished game on a
// bounded queue and returns at once (a full queue drops the result and counts
// it); one writer goroutine, owned by the Store and stopped by Close, commits
// the queue in one transaction about once a second (Options.FlushEvery). The
// database runs in WAL mode, so a kill -9 loses at most the games queued
// since the last commit.
//
// Open migrates the schema (PRAGMA user_version, one transaction per
// migration), moves a corrupt file aside to <name>.corrupt-<timestamp> and
// starts a fresh one, and, when the database cannot be used (a file it may
// not write, a full disk, a schema newer than this package), returns a
// disabled Store with the error, so the game runs on without scores: Err
// says why, Claim, the queries and Backup report ErrDisabled, and Record
// keeps results on its queue (a full queue drops them and counts them).
// The Store's writer tries the open again every RetryEvery (30 s), each try
// moving a corrupt file aside at most once, until it succeeds: Err is nil
// from then on, the queue is written and everything works, without a
// restart. Close ends the tries; results still queued then count as lost.
//
// The file is the database plus its -wal beside it: copy it while the
// daemon runs with Backup (VACUUM INTO), or copy the file alone after Close,
// which checkpoints the WAL into it.
//
// All its methods,, a disabled one and a nil one included, are safe for
// concurrent use; Err is an atomic load, cheap enough for every join.
// Queries (Top, TopToday, Player, Owner) read through their own connections
// and see what the writer has committed.
type Store struct {
	path string
	opts Options
	log  *slog.Logger
	lim  *limiter // new claims per source; nil: no limit

	db  atomic.Pointer[conns]   // the open database; nil while disabled, set once
	err atomic.Pointer[failure] // why the store is disabled; nil when it works

	queue  chan Result        // nil when the path can never hold a database
	stop   chan struct{}      // closed by Close: the writer flushes and exits
	done   chan struct{}      // closed by the writer when it has exited; nil: no writer
	cancel context.CancelFunc // cancels the writer's context: aborts its transaction (or open) when Close's deadline passes

	mu     sync.RWMutex // guards closed: Record sends under RLock, Close sets it under Lock
	closed bool

	closeOnce sync.Once
	closeErr  error // Close's result, set once

	// dayBest holds, for identities that played today, a length their
	// row in days holds at least (the writer's: only it reads or writes
	// these): a game no longer than that leaves the row as it is, and its
	// upsert is skipped (record.go). For dayOf only; bounded by dayKeep.
	dayBest  map[dayKey]int
	dayOf    int64
	dayNotes []dayNote

	recorded, dropped, invalid, written, lost, batches, errs, daySkips atomic.Uint64
	tries                                                              atomic.Uint64 // opens retry tried
}

// conns is an open database.
type conns struct {
	w  *sql.DB // one connection: the writer's batches, claims, backups
	r  *sql.DB // queries; read-only connections
	st stmts   // prepared on w and r at open; closed with them
}

// failure holds why a store is disabled.
type failure struct{ err error }

// conns returns the open database, or nil while the store is disabled.
func (s *Store) conns() *conns {
	if s == nil {
		return nil
	}
	return s.db.Load()
}

// setErr records why the store is disabled; nil: it works.
func (s *Store) setErr(err error) {
	if err == nil {
		s.err.Store(nil)
		return
	}
	s.err.Store(&failure{err})
}

// Stats are a Store's counters since Open.
type Stats struct {
	Recorded uint64 // results Record put on the queue
	Dropped  uint64 // results Record refused: queue full, store closed, or a path that can never hold a database
	Invalid  uint64 // queued results the writer refused (empty identity, negative length, ...)
	Written  uint64 // results committed to the database
	Lost     uint64 // queued results whose commit failed and could not be retried, or still queued when Close found the database never opened
	Batches  uint64 // transactions the writer committed
	Errors   uint64 // failed database operations: batches, queries, claims
	Queued   int    // results waiting for the writer now
	Disabled bool   // the store has no database open (see Open)
}

// Open opens the scores database at path, creating it (and its directory,
// 0700) when missing, and migrates it to the current schema. A file that is
// not a database or fails SQLite's quick check is renamed to
// <path>.corrupt-<UTC timestamp> (with its -wal), logged at error level, and
// replaced by a fresh database.
//
// When the database cannot be used (unwritable file or directory, a schema
// newer than this package, a corrupt file that cannot be moved aside, a full
// disk), Open returns a disabled Store together with the error: Claim, the
// queries and Backup report ErrDisabled and Err returns why, so the game
// runs on without scores. Record keeps results on the queue (a full queue
// drops and counts them). The Store tries again every RetryEvery, each try
// as Open's own (a corrupt file found is moved aside once per try), until
// the database opens or Close: then Err returns nil, the queue is written
// and everything works. Only an empty path, or one holding ? or #, is never
// retried; Record drops everything there. The Store is never nil; close it
// either way.
func Open(path string, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	if err := checkPath(path); err != nil {
		return disabled(path, opts, err), err
	}
	s := &Store{
		path:  path,
		opts:  opts,
		log:   opts.Log,
		lim:   newLimiter(opts.ClaimsPerHour),
		queue: make(chan Result, opts.QueueSize),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	c, err := connect(context.Background(), path, opts)
	if err != nil {
		s.setErr(err)
	} else {
		s.db.Store(c)
	}
	var ctx context.Context
	ctx, s.cancel = context.WithCancel(context.Background())
	go s.run(ctx)
	return s, err
}

// connect opens the database at path as Open describes, moving a corrupt
// file aside at most once; its error says what to fix.
func connect(ctx context.Context, path string, opts Options) (*conns, error) {
	c, err := open(ctx, path)
	if err == nil {
		return c, nil
	}
	if isCorrupt(err) {
		aside, merr := moveAside(path, time.Now())
		if merr != nil {
			return nil, fmt.Errorf("scores: %s is corrupt (%v) and could not be moved aside: %w; scores are off until this is fixed", path, err, merr)
		}
		opts.Log.Error("scores: DATABASE FILE IS CORRUPT; moved it aside and started a fresh one (old scores are in the moved file)",
			"path", path, "moved_to", aside, "err", err)
		c, err = open(ctx, path)
		if err == nil {
			return c, nil
		}
	}
	if accessDenied(err) {
		err = fmt.Errorf("%w; let this user write %s and its directory (SQLite creates %s-wal and %s-shm beside it)", err, path, filepath.Base(path), filepath.Base(path))
	}
	return nil, fmt.Errorf("%w; scores are off until this is fixed", err)
}

// retry opens the database every RetryEvery until it opens (true) or Close
// stops the writer (false). It logs an error when it differs from the last
// one, and the database's opening.
func (s *Store) retry(ctx context.Context) bool {
	t := time.NewTicker(s.opts.RetryEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return false
		case <-t.C:
		}
		c, err := connect(ctx, s.path, s.opts)
		s.tries.Add(1)
		if err != nil && ctx.Err() != nil {
			return false // Close gave up waiting: the try was aborted, not failed
		}
		if err != nil {
			if prev := s.Err(); prev == nil || prev.Error() != err.Error() {
				s.log.Warn("scores: still off; will retry", "path", s.path, "every", s.opts.RetryEvery, "err", err)
			}
			s.setErr(err)
			continue
		}
		s.db.Store(c)
		s.setErr(nil)
		s.log.Info("scores: database opened; scores are on", "path", s.path, "queued", len(s.queue))
		return true
	}
}

// accessDenied reports whether err is SQLite failing to open or write a file.
func accessDenied(err error) bool {
	var e *sqlite.Error
	if errors.As(err, &e) {
		switch e.Code() & 0xff {
		case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM:
			return true
		}
	}
	return false
}

// disabled returns a Store that stays disabled with err: no queue, no
// writer, no retry.
func disabled(path string, opts Options, err error) *Store {
	s := &Store{path: path, opts: opts, log: opts.Log}
	s.setErr(err)
	return s
}

// Synchronous mode: NORMAL. In WAL mode a COMMIT has written its frames to
// the WAL file (into the kernel) before it returns; NORMAL leaves out only
// the fsync, done at checkpoints instead. A kill -9 ends the process, not the
// kernel, so every commit survives it, and what a kill loses is what was
// still on the queue: at most FlushEvery (1s) of finished games. FULL would
// add an fsync per commit, guarding only against power loss or an OS crash
// (losing the last commits there is acceptable for game scores) at the price
// of disk latency on Claim, which a joining player waits for.
const (
	writeDSN = "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	readDSN  = "?_pragma=busy_timeout(5000)&_pragma=query_only(1)"
)

// errCorrupt marks a database that opened but failed its quick check.
var errCorrupt = errors.New("database failed its integrity check")

// checkPath refuses a path that can never hold a database.
func checkPath(path string) error {
	if path == "" {
		return errors.New("scores: empty database path")
	}
	if strings.ContainsAny(path, "?#") {
		return fmt.Errorf("scores: database path %q contains ? or #; choose another state directory", path)
	}
	return nil
}

// open opens, checks, migrates and test-writes the database at path.
func open(ctx context.Context, path string) (*conns, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("scores: create database directory: %w", err)
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("scores: %s is not a regular file", path)
	}
	if err := checkHeader(path); err != nil {
		return nil, err
	}
	w, err := sql.Open("sqlite", path+writeDSN)
	if err != nil {
		return nil, fmt.Errorf("scores: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	if err := prepare(ctx, w, path); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite", path+readDSN)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("scores: open %s for reading: %w", path, err)
	}
	r.SetMaxOpenConns(4)
	r.SetMaxIdleConns(4)
	if err := r.PingContext(ctx); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("scores: open %s for reading: %w", path, err)
	}
	st, err := prepareStmts(ctx, w, r)
	if err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("scores: open %s: %w", path, err)
	}
	return &conns{w: w, r: r, st: st}, nil
}

// prepare checks, migrates and test-writes a freshly opened database.
func prepare(ctx context.Context, w *sql.DB, path string) error {
	rows, err := w.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return fmt.Errorf("scores: open %s: %w", path, err)
	}
	var msgs []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			rows.Close()
			return fmt.Errorf("scores: check %s: %w", path, err)
		}
		if len(msgs) < 3 {
			msgs = append(msgs, m)
		}
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("scores: check %s: %w", path, err)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("scores: check %s: %w", path, err)
	}
	if len(msgs) != 1 || msgs[0] != "ok" {
		return fmt.Errorf("scores: %s: %w: %s", path, errCorrupt, strings.Join(msgs, "; "))
	}
	var mode string
	if err := w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("scores: open %s: %w", path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("scores: %s: could not switch to WAL mode (journal_mode is %s); is the file or its directory read-only?", path, mode)
	}
	if _, err := migrate(ctx, w, version); err != nil {
		return fmt.Errorf("%w (database %s)", err, path)
	}
	// A write now, so an unwritable file disables the store at Open rather
	// than failing every batch later.
	_, err = w.ExecContext(ctx, `INSERT INTO meta (k, v) VALUES ('opened', ?)
		ON CONFLICT (k) DO UPDATE SET v = excluded.v`, time.Now().UTC().Format(time.RFC3339))
	if err != nil {
		return fmt.Errorf("scores: %s is not writable: %w", path, err)
	}
	return nil
}

// checkHeader reports errCorrupt for a non-empty file that does not start
// with SQLite's magic string. SQLite would refuse it too, but may first
// delete its -wal, which moveAside keeps.
func checkHeader(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("scores: open %s: %w", path, err)
	}
	defer f.Close()
	const magic = "SQLite format 3\x00"
	buf := make([]byte, len(magic))
	n, err := io.ReadFull(f, buf)
	switch {
	case n == 0 && errors.Is(err, io.EOF):
		return nil // empty: SQLite makes it a database
	case errors.Is(err, io.ErrUnexpectedEOF) || err == nil && string(buf) != magic:
		return fmt.Errorf("scores: %s: %w: no SQLite header", path, errCorrupt)
	case err != nil:
		return fmt.Errorf("scores: read %s: %w", path, err)
	}
	return nil
}

// isCorrupt reports whether err says the file is not a usable database, as
// opposed to one we may not write or cannot reach.
func isCorrupt(err error) bool {
	if errors.Is(err, errCorrupt) {
		return true
	}
	var e *sqlite.Error
	if errors.As(err, &e) {
		switch e.Code() & 0xff {
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return true
		}
	}
	return false
}

// moveAside renames path and its journal files to path.corrupt-<UTC time>
// (-wal and -journal keep their suffix, so SQLite can open the pair) and
// removes the shared-memory index. It returns the new name.
func moveAside(path string, now time.Time) (string, error) {
	base := path + ".corrupt-" + now.UTC().Format("20060102T150405Z")
	dst := base
	for i := 1; ; i++ {
		if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
			break
		}
		if i > 100 {
			return "", fmt.Errorf("scores: too many files named %s*", base)
		}
		dst = fmt.Sprintf("%s.%d", base, i)
	}
	if err := os.Rename(path, dst); err != nil {
		return "", fmt.Errorf("scores: move corrupt database aside: %w", err)
	}
	for _, suf := range []string{"-wal", "-journal"} {
		err := os.Rename(path+suf, dst+suf)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("scores: move corrupt database's %s aside: %w", suf, err)
		}
	}
	if err := os.Remove(path + "-shm"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("scores: remove corrupt database's -shm: %w", err)
	}
	return dst, nil
}

// Err reports why the store is disabled, or nil when it works. A store
// whose database opens later (see Open) has Err nil from then on.
func (s *Store) Err() error {
	if s == nil {
		return ErrDisabled
	}
	if f := s.err.Load(); f != nil {
		return f.err
	}
	return nil
}

// Path is the database file's path.
func (s *Store) Path() string {
	if s == nil {
		return ""
	}
	return s.path
}

// Stats returns the store's counters.
func (s *Store) Stats() Stats {
	if s == nil {
		return Stats{Disabled: true}
	}
	return Stats{
		Recorded: s.recorded.Load(),
		Dropped:  s.dropped.Load(),
		Invalid:  s.invalid.Load(),
		Written:  s.written.Load(),
		Lost:     s.lost.Load(),
		Batches:  s.batches.Load(),
		Errors:   s.errs.Load(),
		Queued:   len(s.queue),
		Disabled: s.db.Load() == nil,
	}
}

// Close stops accepting results, commits what is queued, stops the writer,
// checkpoints the WAL into the database file and closes it. When ctx ends
// first, the writer's transaction is aborted (its results count as lost) and
// Close still waits for the writer before returning ctx's error. A store
// whose database never opened stops retrying (aborting a try under way when
// ctx ends) and counts what was queued as lost. Later calls return the first
// call's result.
func (s *Store) Close(ctx context.Context) error {
	if s == nil || s.done == nil {
		return nil
	}
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		close(s.stop)
		select {
		case <-s.done:
		case <-ctx.Done():
			s.cancel()
			<-s.done
			s.closeErr = fmt.Errorf("scores: close: %w", ctx.Err())
		}
		s.cancel()
		c := s.db.Load() // the writer has exited: final
		if c == nil {
			return
		}
		if s.closeErr == nil {
			// Best effort: leaves a self-contained file for backups.
			if _, err := c.w.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
				s.log.Warn("scores: checkpoint at close", "path", s.path, "err", err)
			}
		}
		c.st.close()
		rerr := c.r.Close()
		werr := c.w.Close()
		if s.closeErr == nil {
			if err := errors.Join(rerr, werr); err != nil {
				s.closeErr = fmt.Errorf("scores: close %s: %w", s.path, err)
			}
		}
	})
	return s.closeErr
}

// Backup writes a consistent copy of the database to dst (which must not
// exist), waiting for the writer's current batch.
func (s *Store) Backup(ctx context.Context, dst string) error {
	c := s.conns()
	if c == nil {
		return ErrDisabled
	}
	if _, err := c.w.ExecContext(ctx, "VACUUM INTO ?", dst); err != nil {
		s.errs.Add(1)
		return fmt.Errorf("scores: backup to %s: %w", dst, err)
	}
	return nil
}
