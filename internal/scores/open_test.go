package scores

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"snaked/internal/testkit"
	"strings"
	"sync"
	"testing"
	"time"
)

// fill writes one identity's rows as a database at schema version v holds them.
func fill(t *testing.T, db *sql.DB, v int) {
	t.Helper()
	ctx := context.Background()
	end := t0.Unix()
	if v >= 1 {
		_, err := db.ExecContext(ctx, `INSERT INTO players (kind, ident, name, best, best_at, kills, deaths, games, played, first, last)
			VALUES (1, 'SHA256:old', 'Old', 17, ?1, 3, 2, 2, 120, ?2, ?1),
			       (2, 'top', 'top', 50, ?3, 0, 1, 1, 60, ?3, ?3)`, end, end-3600, end-2*86400)
		if err != nil {
			t.Fatal(err)
		}
	}
	if v >= 2 {
		_, err := db.ExecContext(ctx, `INSERT INTO days (kind, ident, day, name, best, best_at) VALUES (1, 'SHA256:old', ?1, 'Old', 17, ?2)`, day(t0), end)
		if err != nil {
			t.Fatal(err)
		}
	}
	if v >= 3 {
		if _, err := db.ExecContext(ctx, `INSERT INTO claims (name, fp, claimed, used) VALUES ('old', 'SHA256:old', ?1, ?1),
			('guest1234', 'SHA256:old', ?1, ?1), ('guest123456789012', 'SHA256:old', ?1, ?1),
			('guest1234567890123', 'SHA256:old', ?1, ?1), ('guest12a', 'SHA256:old', ?1, ?1)`, end); err != nil {
			t.Fatal(err)
		}
	}
}

func schemaOf(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query(`SELECT type, name, coalesce(sql, '') FROM sqlite_master ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var typ, name, text string
		if err := rows.Scan(&typ, &name, &text); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s: %s\n", typ, name, text)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestMigrations opens an empty file and a file at every older schema
// version, each holding data of its version, and checks that each ends at
// the current version with the current schema and its data intact.
func TestMigrations(t *testing.T) {
	ctx := context.Background()
	var fresh string
	for v := 0; v <= version; v++ {
		t.Run(fmt.Sprint("from", v), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "scores.db")
			if v == 0 {
				if err := os.WriteFile(path, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			} else {
				db := rawDB(t, path)
				if _, err := migrate(ctx, db, v); err != nil {
					t.Fatal(err)
				}
				if got, err := userVersion(ctx, db); err != nil || got != v {
					t.Fatalf("set up at version %d, file says %d (%v)", v, got, err)
				}
				fill(t, db, v)
				db.Close()
			}
			s := openT(t, path, testOpts(nil))
			if got, err := userVersion(ctx, s.conns().r); err != nil || got != version {
				t.Fatalf("after Open, version %d (%v), want %d", got, err, version)
			}
			schema := schemaOf(t, s.conns().r)
			if v == 0 {
				fresh = schema
			} else if schema != fresh {
				t.Errorf("schema migrated from %d differs from a fresh one:\n%s\nfresh:\n%s", v, schema, fresh)
			}
			checkBestCounts(t, s)
			for _, want := range []string{"table players", "table days", "table claims", "index players_best", "index days_best", "table best_counts", "trigger players_best_update", "index claims_fp"} {
				if !strings.Contains(schema, want) {
					t.Errorf("schema lacks %s:\n%s", want, schema)
				}
			}
			old := KeyID("SHA256:old")
			rec, ok, err := s.Player(ctx, old)
			if v >= 1 {
				want := Record{ID: old, Name: "Old", Rank: 2, Best: 17, BestAt: t0, Kills: 3, Deaths: 2, Games: 2,
					Played: 2 * time.Minute, First: t0.Add(-time.Hour), Last: t0}
				if err != nil || !ok || rec != want {
					t.Errorf("Player(old) = %+v, %v, %v; want %+v", rec, ok, err, want)
				}
				// Version 1 had no days: migration 2 carries the best over.
				today, err := s.TopToday(ctx, 10, t0)
				if err != nil || len(today) != 1 || today[0].ID != old || today[0].Best != 17 {
					t.Errorf("TopToday = %v, %v; want old's 17", today, err)
				}
			} else if ok || err != nil {
				t.Errorf("Player(old) in a fresh file = %v, %v", ok, err)
			}
			if fp, ok, err := s.Owner(ctx, "OLD", t0); v >= 3 && (fp != "SHA256:old" || !ok || err != nil) {
				t.Errorf("Owner(old) = %q, %v, %v; want the claim kept", fp, ok, err)
			}
			// Claims on generated names go; names merely like them stay.
			var claims string
			if err := s.conns().r.QueryRow(`SELECT coalesce(group_concat(name, ' '), '') FROM (SELECT name FROM claims ORDER BY name)`).Scan(&claims); err != nil {
				t.Fatal(err)
			}
			want := ""
			switch {
			case v >= 5: // no migration ran over these rows
				want = "guest1234 guest123456789012 guest1234567890123 guest12a old"
			case v >= 3:
				want = "guest1234567890123 guest12a old"
			}
			if claims != want {
				t.Errorf("claims after migrating = %q, want %q", claims, want)
			}
			// The migrated file takes new games.
			s.Record(Result{ID: old, Name: "Old", Length: 20, Kills: 1, Died: true, Duration: time.Minute, End: t0.Add(time.Hour)})
			waitWritten(t, s, 1)
			if rec, ok, err := s.Player(ctx, old); err != nil || !ok || rec.Best != 20 || rec.Games != 1+2*min(v, 1) || rec.Rank != 1+min(v, 1) {
				t.Errorf("after a game, Player(old) = %+v, %v, %v", rec, ok, err)
			}
			checkBestCounts(t, s)
		})
	}
}

func TestNewerSchemaDisables(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "scores.db")
	db := rawDB(t, path)
	if _, err := migrate(context.Background(), db, version); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", version+1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := Open(path, testOpts(nil))
	defer func() { s.Close(context.Background()) }() // a Store comes back with an error too
	if err == nil || !strings.Contains(err.Error(), "newer") || s.Err() == nil {
		t.Fatalf("Open of a newer schema = %v; want a disabled store and an error saying newer", err)
	}
	if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) != 0 {
		t.Errorf("a newer schema was moved aside as corrupt: %v", m)
	}
}

func TestCorruptFileMovedAside(t *testing.T) {
	ctx := context.Background()
	t.Run("not a database", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "scores.db")
		garbage := bytes.Repeat([]byte("this is not an SQLite database\n"), 300)
		if err := os.WriteFile(path, garbage, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path+"-wal", []byte("stale wal"), 0o600); err != nil {
			t.Fatal(err)
		}
		checkMovedAside(t, path, garbage, []byte("stale wal"))
	})
	t.Run("damaged pages", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "scores.db")
		s := openT(t, path, testOpts(nil))
		for i := range 3000 {
			s.Record(Result{ID: NameID(fmt.Sprintf("player%05d", i)), Name: "p", Length: i, End: t0})
		}
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) < 16*4096 {
			t.Fatalf("database is only %d bytes", len(data))
		}
		// Pages 4..11 (whatever b-tree pages they are) become noise; page 1,
		// the header and schema, stays intact so the file still opens.
		for i := 3 * 4096; i < 11*4096; i++ {
			data[i] = byte(i*7 + 13)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		checkMovedAside(t, path, data, nil)
	})
}

// checkMovedAside opens the corrupt file at path and checks that it (and its
// wal, when one is given) moved aside intact, that the move was logged
// loudly and that the store works on a fresh file.
func checkMovedAside(t *testing.T, path string, data, wal []byte) {
	t.Helper()
	var log testkit.SyncBuf
	s := openT(t, path, testOpts(&log))
	if !strings.Contains(log.String(), "level=ERROR") || !strings.Contains(log.String(), "CORRUPT") {
		t.Errorf("no loud log line; log:\n%s", log.String())
	}
	m, _ := filepath.Glob(path + ".corrupt-*")
	var aside []string
	for _, f := range m {
		if !strings.HasSuffix(f, "-wal") && !strings.HasSuffix(f, "-shm") {
			aside = append(aside, f)
		}
	}
	if len(aside) != 1 {
		t.Fatalf("moved-aside files: %v; want one", m)
	}
	if !strings.Contains(log.String(), aside[0]) {
		t.Errorf("log does not name %s:\n%s", aside[0], log.String())
	}
	if got, err := os.ReadFile(aside[0]); err != nil || !bytes.Equal(got, data) {
		t.Errorf("moved-aside file differs from the corrupt one (%v)", err)
	}
	if wal != nil {
		if got, err := os.ReadFile(aside[0] + "-wal"); err != nil || !bytes.Equal(got, wal) {
			t.Errorf("wal not moved aside with it: %q, %v", got, err)
		}
	}
	ctx := context.Background()
	if top, err := s.Top(ctx, 10); err != nil || len(top) != 0 {
		t.Errorf("fresh database: Top = %v, %v; want empty", top, err)
	}
	s.Record(Result{ID: NameID("new"), Name: "new", Length: 9, End: t0})
	waitWritten(t, s, 1)
	if rec, ok, err := s.Player(ctx, NameID("new")); err != nil || !ok || rec.Best != 9 {
		t.Errorf("fresh database: Player(new) = %+v, %v, %v", rec, ok, err)
	}
}

// readOnly makes path unwritable, also for root (chattr +i), and returns
// the function making it writable again, also run at cleanup; it skips the
// test when it cannot.
func readOnly(t *testing.T, path string) (undo func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, st.Mode().Perm()&^0o222); err != nil {
			t.Fatal(err)
		}
		undo = func() { os.Chmod(path, st.Mode().Perm()) }
		t.Cleanup(undo)
		return undo
	}
	if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
		t.Skipf("running as root and chattr +i %s failed (%v: %s): cannot make a file unwritable", path, err, out)
	}
	var once sync.Once
	undo = func() {
		once.Do(func() {
			if out, err := exec.Command("chattr", "-i", path).CombinedOutput(); err != nil {
				t.Errorf("chattr -i %s: %v: %s", path, err, out)
			}
		})
	}
	t.Cleanup(undo)
	return undo
}

// parentIsFile returns a path that is a regular file, under which no
// directory can be made (whoever runs the test, root included).
func parentIsFile(t *testing.T) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// waitTries waits (boundedly) until a disabled store has tried n opens.
func waitTries(t *testing.T, s *Store, n uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.tries.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("store tried %d opens in 10 s, want %d", s.tries.Load(), n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waitOpen waits (boundedly) for a retrying store's database to open.
func waitOpen(t *testing.T, s *Store) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.Err() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("store still disabled after 10 s: %v", s.Err())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestUnwritableDisables(t *testing.T) {
	existing := func(t *testing.T) string {
		path := filepath.Join(t.TempDir(), "db", "scores.db")
		s := openT(t, path, testOpts(nil))
		s.Record(Result{ID: NameID("a"), Name: "a", Length: 5, End: t0})
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cases := map[string]func(t *testing.T) string{
		"parent is a file": func(t *testing.T) string {
			return filepath.Join(parentIsFile(t), "scores.db")
		},
		"path is a directory": func(t *testing.T) string {
			d := filepath.Join(t.TempDir(), "scores.db")
			if err := os.Mkdir(d, 0o700); err != nil {
				t.Fatal(err)
			}
			return d
		},
		"read-only directory": func(t *testing.T) string {
			path := existing(t)
			readOnly(t, filepath.Dir(path))
			return path
		},
		"read-only file": func(t *testing.T) string {
			path := existing(t)
			readOnly(t, path)
			return path
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			path := setup(t)
			before, _ := os.ReadFile(path)
			s, err := Open(path, testOpts(nil))
			if err == nil {
				s.Close(context.Background())
				t.Fatal("Open succeeded on an unwritable database")
			}
			if s == nil || !errors.Is(s.Err(), err) || !s.Stats().Disabled {
				t.Fatalf("Open = %v, %v; want a disabled store holding the error", s, err)
			}
			t.Logf("Open: %v", err)
			// Results wait on the queue for the database to open.
			for range 3 {
				if !s.Record(Result{ID: NameID("b"), Name: "b", Length: 1, End: t0}) {
					t.Error("disabled store refused a result with room on its queue")
				}
			}
			if st := s.Stats(); st.Dropped != 0 || st.Recorded != 3 || st.Queued != 3 {
				t.Errorf("Stats = %+v; want 3 recorded, queued", st)
			}
			if _, err := s.Top(context.Background(), 10); !errors.Is(err, ErrDisabled) {
				t.Errorf("Top on a disabled store: %v", err)
			}
			if _, err := s.Claim(context.Background(), "b", "SHA256:b", "", t0); !errors.Is(err, ErrDisabled) {
				t.Errorf("Claim on a disabled store: %v", err)
			}
			if err := s.Close(context.Background()); err != nil {
				t.Errorf("Close = %v", err)
			}
			if st := s.Stats(); st.Lost != 3 || st.Written != 0 {
				t.Errorf("after Close, Stats = %+v; want the 3 queued lost", st)
			}
			if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) != 0 {
				t.Errorf("an unwritable database was moved aside as corrupt: %v", m)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
				t.Error("the unwritable database changed")
			}
		})
	}
}

// checkBestCounts checks the rank table kept by triggers against a count.
func checkBestCounts(t *testing.T, s *Store) {
	t.Helper()
	var bad int
	err := s.conns().r.QueryRow(`SELECT
		(SELECT count(*) FROM (SELECT best, count(*) FROM players GROUP BY best
			EXCEPT SELECT best, n FROM best_counts)) +
		(SELECT count(*) FROM (SELECT best, n FROM best_counts
			EXCEPT SELECT best, count(*) FROM players GROUP BY best))`).Scan(&bad)
	if err != nil {
		t.Fatal(err)
	}
	if bad != 0 {
		t.Errorf("best_counts disagrees with players on %d lengths", bad)
	}
}

// TestRetryOpen: a store whose directory cannot be made (its parent is a
// regular file) is disabled, queues results (a full queue drops them), and
// once the file is replaced by a directory opens by itself, writes the
// queue, and claims and queries work. Err is read from other goroutines
// throughout (run with -race).
func TestRetryOpen(t *testing.T) {
	parent := parentIsFile(t)
	path := filepath.Join(parent, "scores.db")
	var log testkit.SyncBuf
	o := testOpts(&log)
	o.RetryEvery = 20 * time.Millisecond
	o.QueueSize = 2
	s, err := Open(path, o)
	defer func() { s.Close(context.Background()) }() // a Store comes back with an error too
	if err == nil || s.Err() == nil || !s.Stats().Disabled {
		t.Fatalf("Open under a regular file = %v, Err %v; want disabled", err, s.Err())
	}
	if !strings.Contains(err.Error(), "scores are off until this is fixed") {
		t.Errorf("Open's error lacks the operator's text: %v", err)
	}
	ctx := context.Background()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if s.Err() == nil {
					if _, err := s.Top(ctx, 1); err != nil {
						t.Errorf("Top with Err nil: %v", err)
						return
					}
				}
			}
		})
	}
	games := []Result{
		{ID: KeyID("SHA256:a"), Name: "alice", Length: 7, End: t0},
		{ID: NameID("bob"), Name: "bob", Length: 5, End: t0},
		{ID: NameID("carol"), Name: "carol", Length: 3, End: t0},
	}
	for i, g := range games {
		if got := s.Record(g); got != (i < 2) {
			t.Errorf("Record %d on a disabled store with a queue of 2 = %v", i, got)
		}
	}
	if _, err := s.Claim(ctx, "alice", "SHA256:a", "192.0.2.1", t0); !errors.Is(err, ErrDisabled) {
		t.Errorf("Claim while disabled = %v, want ErrDisabled", err)
	}
	waitTries(t, s, 3)
	if s.Err() == nil || s.Err().Error() != err.Error() {
		t.Errorf("after failed tries, Err = %v; want Open's error", s.Err())
	}
	if n := strings.Count(log.String(), "will retry"); n != 0 {
		t.Errorf("tries failing as Open did logged %d lines, want none:\n%s", n, log.String())
	}
	if err := os.Remove(parent); err != nil {
		t.Fatal(err)
	}
	// A try may make the directory first.
	if err := os.Mkdir(parent, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		t.Fatal(err)
	}
	waitOpen(t, s)
	close(stop)
	wg.Wait()
	waitWritten(t, s, 2)
	if st := s.Stats(); st.Disabled || st.Recorded != 2 || st.Dropped != 1 || st.Written != 2 {
		t.Errorf("Stats = %+v; want 2 recorded and written, 1 dropped", st)
	}
	if rec, ok, err := s.Player(ctx, KeyID("SHA256:a")); err != nil || !ok || rec.Best != 7 {
		t.Errorf("Player(alice) after the store opened = %+v, %v, %v", rec, ok, err)
	}
	if res, err := s.Claim(ctx, "alice", "SHA256:a", "192.0.2.1", t0); err != nil || res.Outcome != Claimed {
		t.Errorf("Claim after the store opened = %+v, %v", res, err)
	}
	if fp, ok, err := s.Owner(ctx, "alice", t0); err != nil || !ok || fp != "SHA256:a" {
		t.Errorf("Owner(alice) = %q, %v, %v", fp, ok, err)
	}
	if !s.Record(Result{ID: NameID("dave"), Name: "dave", Length: 1, End: t0}) {
		t.Error("Record refused after the store opened")
	}
	waitWritten(t, s, 3)
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "scores are on") {
		t.Errorf("the opening was not logged:\n%s", log.String())
	}
	// The file holds what was written.
	s2 := openT(t, path, testOpts(nil))
	if top, err := s2.Top(ctx, 10); err != nil || len(top) != 3 {
		t.Errorf("reopened: Top = %v, %v; want 3 entries", top, err)
	}
}

// TestRetryMovesCorruptAside: a corrupt file that cannot be moved aside
// (its directory is read-only) disables the store; each try finds it so
// again, without moving anything; once the directory is writable a try
// moves it aside, once, and opens a fresh database.
func TestRetryMovesCorruptAside(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "scores.db")
	garbage := bytes.Repeat([]byte("this is not an SQLite database\n"), 300)
	if err := os.WriteFile(path, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	undo := readOnly(t, dir)
	var log testkit.SyncBuf
	o := testOpts(&log)
	o.RetryEvery = 20 * time.Millisecond
	s, err := Open(path, o)
	defer func() { s.Close(context.Background()) }() // a Store comes back with an error too
	if err == nil || !strings.Contains(err.Error(), "could not be moved aside") {
		t.Fatalf("Open of a corrupt file in a read-only directory = %v", err)
	}
	waitTries(t, s, 3)
	if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) != 0 || s.Err() == nil {
		t.Fatalf("after tries in a read-only directory: moved %v, Err %v", m, s.Err())
	}
	undo()
	waitOpen(t, s)
	m, _ := filepath.Glob(path + ".corrupt-*")
	if len(m) != 1 {
		t.Fatalf("moved-aside files: %v; want one", m)
	}
	if got, err := os.ReadFile(m[0]); err != nil || !bytes.Equal(got, garbage) {
		t.Errorf("moved-aside file differs from the corrupt one (%v)", err)
	}
	if n := strings.Count(log.String(), "CORRUPT"); n != 1 {
		t.Errorf("%d moves logged, want 1:\n%s", n, log.String())
	}
	ctx := context.Background()
	if res, err := s.Claim(ctx, "alice", "SHA256:a", "", t0); err != nil || res.Outcome != Claimed {
		t.Errorf("Claim on the fresh database = %+v, %v", res, err)
	}
}
