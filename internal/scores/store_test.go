package scores

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	snakedgame "snaked/game"
	"snaked/internal/testkit"
)

func testOpts(log *testkit.SyncBuf) Options {
	o := Options{FlushEvery: 10 * time.Millisecond}
	if log != nil {
		o.Log = slog.New(slog.NewTextHandler(log, nil))
	} else {
		o.Log = slog.New(slog.NewTextHandler(testWriter{}, nil))
	}
	return o
}

type testWriter struct{}

func (testWriter) Write(p []byte) (int, error) { return len(p), nil }

func openT(t testing.TB, path string, o Options) *Store {
	t.Helper()
	s, err := Open(path, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// waitWritten waits (boundedly) until the writer has committed n results.
func waitWritten(t testing.TB, s *Store, n uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.Stats().Written < n {
		if time.Now().After(deadline) {
			t.Fatalf("writer committed %d results in 10s, want %d (stats %+v)", s.Stats().Written, n, s.Stats())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

var t0 = time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)

func TestRecordAndQuery(t *testing.T) {
	s := openT(t, filepath.Join(t.TempDir(), "scores.db"), testOpts(nil))
	alice := KeyID("SHA256:alice")
	games := []Result{
		{ID: alice, Name: "alice", Length: 12, Kills: 2, Died: true, Duration: 90 * time.Second, End: t0},
		{ID: alice, Name: "Alice2", Length: 30, Kills: 1, Died: true, Duration: 61*time.Second + 400*time.Millisecond, End: t0.Add(30 * time.Minute)},
		{ID: alice, Name: "alice", Length: 20, Kills: 0, Died: false, Duration: 10 * time.Second, End: t0.Add(90 * time.Minute)},
		{ID: NameID("Bob"), Name: "Bob", Length: 30, Kills: 5, Died: true, Duration: time.Minute, End: t0.Add(2 * time.Hour)},
		{ID: ID{Kind: Keyless, Value: "BOB"}, Name: "bob", Length: 8, Died: true, Duration: time.Minute, End: t0.Add(3 * time.Hour)},
		{ID: NameID("carol"), Name: "carol", Length: 45, Died: true, Duration: time.Minute, End: t0.Add(-time.Hour)},
		{ID: KeyID("SHA256:dave"), Name: "dave", Length: 5, Died: true, Duration: time.Minute, End: t0.Add(4 * time.Hour)},
	}
	for _, g := range games {
		if !s.Record(g) {
			t.Fatalf("Record(%+v) refused", g)
		}
	}
	waitWritten(t, s, uint64(len(games)))
	ctx := context.Background()

	rec, ok, err := s.Player(ctx, alice)
	if err != nil || !ok {
		t.Fatalf("Player(alice) = %v, %v", ok, err)
	}
	want := Record{
		ID: alice, Name: "alice", Rank: 2, Best: 30, BestAt: t0.Add(30 * time.Minute),
		Kills: 3, Deaths: 2, Games: 3, Played: (90 + 61 + 10) * time.Second,
		First: t0.Add(-90 * time.Second), Last: t0.Add(90 * time.Minute),
	}
	if rec != want {
		t.Errorf("Player(alice):\n got %+v\nwant %+v", rec, want)
	}
	bob, ok, err := s.Player(ctx, NameID("BoB"))
	if err != nil || !ok || bob.Games != 2 || bob.Best != 30 || bob.Kills != 5 || bob.Name != "bob" || bob.Rank != 2 {
		t.Errorf("Player(bob) = %+v, %v, %v; want 2 games, best 30, 5 kills, name bob, rank 2", bob, ok, err)
	}
	if _, ok, err := s.Player(ctx, KeyID("SHA256:nobody")); ok || err != nil {
		t.Errorf("Player(nobody) = %v, %v; want false, nil", ok, err)
	}

	top, err := s.Top(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(top)
	// alice reached 30 before bob did, so she is listed first; both rank 2.
	wantTop := "[{1 {keyless carol} carol 45} {2 {key SHA256:alice} alice 30} {2 {keyless bob} bob 30} {4 {key SHA256:dave} dave 5}]"
	if got != wantTop {
		t.Errorf("Top(10) =\n %s\nwant\n %s", got, wantTop)
	}
	if top, _ := s.Top(ctx, 2); len(top) != 2 {
		t.Errorf("Top(2) has %d entries", len(top))
	}
	if top, err := s.Top(ctx, -1); len(top) != 0 || err != nil {
		t.Errorf("Top(-1) = %v, %v", top, err)
	}

	// t0 is 23:00 UTC on Nov 30: carol's game and alice's first two count
	// for Nov 30, the rest for Dec 1 (a day's name is that of its best).
	today, err := s.TopToday(ctx, 10, t0.Add(5*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	wantToday := "[{1 {keyless bob} Bob 30} {2 {key SHA256:alice} alice 20} {3 {key SHA256:dave} dave 5}]"
	if got := fmt.Sprint(today); got != wantToday {
		t.Errorf("TopToday(Dec 1) =\n %s\nwant\n %s", got, wantToday)
	}
	yesterday, err := s.TopToday(ctx, 10, t0)
	if err != nil {
		t.Fatal(err)
	}
	wantYesterday := "[{1 {keyless carol} carol 45} {2 {key SHA256:alice} Alice2 30}]"
	if got := fmt.Sprint(yesterday); got != wantYesterday {
		t.Errorf("TopToday(Nov 30) =\n %s\nwant\n %s", got, wantYesterday)
	}

	checkBestCounts(t, s)
	st := s.Stats()
	if st.Recorded != uint64(len(games)) || st.Written != uint64(len(games)) || st.Dropped != 0 || st.Errors != 0 || st.Batches == 0 || st.Disabled {
		t.Errorf("Stats = %+v", st)
	}
}

func TestInvalidResults(t *testing.T) {
	s := openT(t, filepath.Join(t.TempDir(), "scores.db"), testOpts(nil))
	good := Result{ID: KeyID("SHA256:x"), Name: "x", Length: 3, End: t0}
	bad := []Result{
		{},
		{ID: ID{Kind: 9, Value: "x"}, Name: "x", End: t0},
		{ID: KeyID(""), Name: "x", End: t0},
		{ID: KeyID(strings.Repeat("k", maxID+1)), Name: "x", End: t0},
		{ID: KeyID("SHA256:x"), Name: "", End: t0},
		{ID: KeyID("SHA256:x"), Name: strings.Repeat("n", maxName+1), End: t0},
		{ID: KeyID("SHA256:x"), Name: "x", Length: -1, End: t0},
		{ID: KeyID("SHA256:x"), Name: "x", Kills: -1, End: t0},
		{ID: KeyID("SHA256:x"), Name: "x"},
	}
	for _, r := range bad {
		s.Record(r)
	}
	s.Record(good)
	waitWritten(t, s, 1)
	st := s.Stats()
	if st.Invalid != uint64(len(bad)) || st.Written != 1 {
		t.Errorf("Stats = %+v; want Invalid %d, Written 1", st, len(bad))
	}
	top, err := s.Top(context.Background(), 10)
	if err != nil || len(top) != 1 || top[0].ID != good.ID {
		t.Errorf("Top = %v, %v; want only %v", top, err, good.ID)
	}
}

func TestQueueFullDrops(t *testing.T) {
	o := testOpts(nil)
	o.QueueSize = 4
	o.FlushEvery = time.Hour // nothing drains the queue until Close
	s := openT(t, filepath.Join(t.TempDir(), "scores.db"), o)
	accepted := 0
	for i := range 10 {
		if s.Record(Result{ID: NameID(fmt.Sprint("p", i)), Name: "p", Length: i, End: t0}) {
			accepted++
		}
	}
	if accepted != 4 {
		t.Errorf("accepted %d of 10 with a queue of 4", accepted)
	}
	if st := s.Stats(); st.Recorded != 4 || st.Dropped != 6 || st.Queued != 4 {
		t.Errorf("Stats = %+v; want Recorded 4, Dropped 6, Queued 4", st)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Written != 4 || st.Batches != 1 {
		t.Errorf("after Close, Stats = %+v; want the 4 queued written in 1 batch", st)
	}
	if s.Record(Result{ID: NameID("late"), Name: "late", End: t0}) {
		t.Error("Record after Close accepted a result")
	}
	if st := s.Stats(); st.Dropped != 7 {
		t.Errorf("Record after Close: Dropped = %d, want 7", st.Dropped)
	}
	// Close flushed to the file: a new store sees all four.
	s2 := openT(t, s.Path(), testOpts(nil))
	top, err := s2.Top(context.Background(), 10)
	if err != nil || len(top) != 4 {
		t.Errorf("after reopening, Top = %v, %v; want 4 entries", top, err)
	}
}

func TestClaims(t *testing.T) {
	o := testOpts(nil)
	o.ClaimTTL = 30 * 24 * time.Hour
	s := openT(t, filepath.Join(t.TempDir(), "scores.db"), o)
	ctx := context.Background()
	day := 24 * time.Hour
	claim := func(name, fp string, at time.Time, want Outcome) {
		t.Helper()
		res, err := s.Claim(ctx, name, fp, "", at)
		if err != nil || res != (ClaimResult{Outcome: want}) {
			t.Errorf("Claim(%s, %s, +%v) = %+v, %v; want %v", name, fp, at.Sub(t0), res, err, want)
		}
	}
	owner := func(name string, at time.Time, want string) {
		t.Helper()
		fp, ok, err := s.Owner(ctx, name, at)
		if err != nil || ok != (want != "") || fp != want {
			t.Errorf("Owner(%s, +%v) = %q, %v, %v; want %q", name, at.Sub(t0), fp, ok, err, want)
		}
	}
	owner("alice", t0, "")
	claim("alice", "SHA256:a", t0, Claimed)
	claim("ALICE", "SHA256:b", t0.Add(time.Hour), Taken)
	owner("Alice", t0.Add(time.Hour), "SHA256:a")
	claim("alice", "SHA256:a", t0.Add(20*day), Claimed) // refreshes
	owner("alice", t0.Add(45*day), "SHA256:a")
	claim("alice", "SHA256:b", t0.Add(45*day), Taken)
	owner("alice", t0.Add(51*day), "") // lapsed: 31 days unused
	claim("alice", "SHA256:b", t0.Add(51*day), Claimed)
	owner("alice", t0.Add(51*day), "SHA256:b")
	claim("alice", "SHA256:a", t0.Add(52*day), Taken)

	// Playing under a claimed name refreshes it too.
	claim("carol", "SHA256:c", t0, Claimed)
	s.Record(Result{ID: KeyID("SHA256:c"), Name: "Carol", Length: 4, Duration: time.Minute, End: t0.Add(25 * day)})
	// A game by another key under the name does not.
	s.Record(Result{ID: KeyID("SHA256:x"), Name: "carol", Length: 4, Duration: time.Minute, End: t0.Add(40 * day)})
	waitWritten(t, s, 2)
	owner("carol", t0.Add(50*day), "SHA256:c")
	owner("carol", t0.Add(56*day), "")

	if _, err := s.Claim(ctx, "dave", "", "", t0); !errors.Is(err, ErrNoKey) {
		t.Errorf("keyless Claim: err = %v, want ErrNoKey", err)
	}
	if _, err := s.Claim(ctx, "", "SHA256:a", "", t0); err == nil {
		t.Error("Claim of an empty name succeeded")
	}
	owner("dave", t0, "")
}

// TestNamesPerKey: a key holds NamesPerKey names (3 by default); a new
// claim beyond releases its least recently played (ties by name), which is
// then free for another key. A lapsed claim is not held: it does not count,
// and a game under it does not bring it back.
func TestNamesPerKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scores.db")
	s := openT(t, path, testOpts(nil))
	ctx := context.Background()
	claim := func(s *Store, name, fp string, at time.Time, want ClaimResult) {
		t.Helper()
		res, err := s.Claim(ctx, name, fp, "", at)
		if err != nil || res != want {
			t.Errorf("Claim(%s, %s, +%v) = %+v, %v; want %+v", name, fp, at.Sub(t0), res, err, want)
		}
	}
	owner := func(s *Store, name string, at time.Time, want string) {
		t.Helper()
		fp, ok, err := s.Owner(ctx, name, at)
		if err != nil || ok != (want != "") || fp != want {
			t.Errorf("Owner(%s, +%v) = %q, %v, %v; want %q", name, at.Sub(t0), fp, ok, err, want)
		}
	}
	claimed := ClaimResult{Outcome: Claimed}
	a, b := "SHA256:a", "SHA256:b"
	claim(s, "one", a, t0, claimed)
	claim(s, "Two", a, t0.Add(time.Minute), claimed)
	claim(s, "three", a, t0.Add(2*time.Minute), claimed)
	claim(s, "one", a, t0.Add(3*time.Minute), claimed) // refreshed: "two" is now the least recently played
	s.Record(Result{ID: KeyID(a), Name: "THREE", Length: 3, End: t0.Add(4 * time.Minute)})
	waitWritten(t, s, 1)
	claim(s, "four", a, t0.Add(5*time.Minute), ClaimResult{Outcome: Claimed, Released: "two"})
	now := t0.Add(6 * time.Minute)
	owner(s, "two", now, "")
	for _, n := range []string{"one", "three", "four"} {
		owner(s, n, now, a)
	}
	claim(s, "TWO", b, now, claimed) // free for another key
	owner(s, "two", now, b)
	claim(s, "one", a, now, claimed) // held: refreshing releases nothing
	claim(s, "five", a, now.Add(time.Minute), ClaimResult{Outcome: Claimed, Released: "three"})

	// Ties by name.
	c := "SHA256:c"
	for _, n := range []string{"x3", "x1", "x2"} {
		claim(s, n, c, t0, claimed)
	}
	claim(s, "x4", c, t0, ClaimResult{Outcome: Claimed, Released: "x1"})

	// d's claim on "old" lapses (30 days unused): it no longer counts,
	// and a game under it does not revive it.
	d := "SHA256:d"
	claim(s, "old", d, t0, claimed)
	later := t0.Add(31 * 24 * time.Hour)
	for _, n := range []string{"d1", "d2", "d3"} {
		claim(s, n, d, later, claimed)
	}
	s.Record(Result{ID: KeyID(d), Name: "old", Length: 3, End: later})
	waitWritten(t, s, 2)
	owner(s, "old", later, "")
	claim(s, "old", d, later.Add(time.Minute), ClaimResult{Outcome: Claimed, Released: "d1"}) // a new claim

	// NamesPerKey lowered under what a key holds: a new claim brings it
	// down to the bound.
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	o := testOpts(nil)
	o.NamesPerKey = 1
	s = openT(t, path, o)
	claim(s, "six", a, now.Add(2*time.Minute), ClaimResult{Outcome: Claimed, Released: "four"})
	for _, n := range []string{"one", "four", "five"} {
		owner(s, n, now.Add(2*time.Minute), "")
	}
	owner(s, "six", now.Add(2*time.Minute), a)
	var n int
	if err := s.conns().r.QueryRow(`SELECT count(*) FROM claims WHERE fp = ?`, a).Scan(&n); err != nil || n != 1 {
		t.Errorf("a holds %d claims (%v), want 1", n, err)
	}
}

// TestGeneratedNames: the names the join screen hands out, and any of
// their form, are never claimed and belong to nobody; names that only
// start like them are claimed as any other.
func TestGeneratedNames(t *testing.T) {
	for n := 1000; n <= 9999; n++ {
		if g := snakedgame.GuestName(n); !snakedgame.IsGuestName(g) || g != fmt.Sprint("guest", n) {
			t.Fatalf("GuestName(%d) = %q, IsGuestName %v", n, g, snakedgame.IsGuestName(g))
		}
	}
	for name, want := range map[string]bool{
		"guest1234": true, "GUEST42": true, "Guest0": true, "guest123456789012": true,
		"guest": false, "guesthouse": false, "guest12a": false, "guest1234567890123": false,
		"xguest1": false, "guest-1": false, "guest 1": false, "guest１": false, "": false,
	} {
		if got := snakedgame.IsGuestName(name); got != want {
			t.Errorf("IsGuestName(%q) = %v, want %v", name, got, want)
		}
	}
	o := testOpts(nil)
	o.ClaimsPerHour = 1
	s := openT(t, filepath.Join(t.TempDir(), "scores.db"), o)
	ctx := context.Background()
	for _, name := range []string{"guest1234", "GUEST42", "guest1234"} {
		res, err := s.Claim(ctx, name, "SHA256:g", "192.0.2.1", t0)
		if err != nil || res != (ClaimResult{Outcome: Generated}) {
			t.Errorf("Claim(%s) = %+v, %v; want generated", name, res, err)
		}
		if fp, ok, err := s.Owner(ctx, name, t0); ok || err != nil {
			t.Errorf("Owner(%s) = %q, %v, %v; want nobody", name, fp, ok, err)
		}
	}
	// A claim on a generated name made before this rule (the row kept by
	// an older database) does not count either.
	if _, err := s.conns().w.Exec(`INSERT INTO claims (name, fp, claimed, used) VALUES ('guest7777', 'SHA256:old', ?1, ?1)`, t0.Unix()); err != nil {
		t.Fatal(err)
	}
	if fp, ok, err := s.Owner(ctx, "guest7777", t0); ok || err != nil {
		t.Errorf("Owner(guest7777) held by an old row = %q, %v, %v; want nobody", fp, ok, err)
	}
	var n int
	if err := s.conns().r.QueryRow(`SELECT count(*) FROM claims WHERE fp = 'SHA256:g'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d claims on generated names (%v)", n, err)
	}
	// Generated answers spent nothing of the source's one claim an hour.
	for _, name := range []string{"guesthouse", "guest"} {
		res, err := s.Claim(ctx, name, "SHA256:g", "", t0)
		if err != nil || res.Outcome != Claimed {
			t.Errorf("Claim(%s) = %+v, %v; want claimed", name, res, err)
		}
	}
	if res, err := s.Claim(ctx, "guesting", "SHA256:h", "192.0.2.1", t0); err != nil || res.Outcome != Claimed {
		t.Errorf("the source's first new claim = %+v, %v; want claimed", res, err)
	}
}

// TestClaimsPerHour: a source makes ClaimsPerHour new claims, then gets
// Limited for new names (whichever key asks) until its claims come back,
// one per hour/ClaimsPerHour, all after an hour; it can always refresh the
// names its keys hold. Other sources and the unknown source "" are not
// touched.
func TestClaimsPerHour(t *testing.T) {
	o := testOpts(nil)
	o.ClaimsPerHour = 3
	o.NamesPerKey = 100
	s := openT(t, filepath.Join(t.TempDir(), "scores.db"), o)
	ctx := context.Background()
	claim := func(name, fp, from string, at time.Time, want Outcome) {
		t.Helper()
		res, err := s.Claim(ctx, name, fp, from, at)
		if err != nil || res != (ClaimResult{Outcome: want}) {
			t.Errorf("Claim(%s, %s, %q, +%v) = %+v, %v; want %v", name, fp, from, at.Sub(t0), res, err, want)
		}
	}
	const src, other = "203.0.113.7", "2001:db8:1:2::/64"
	k, j := "SHA256:k", "SHA256:j"
	claim("a", k, src, t0, Claimed)
	claim("b", k, src, t0, Claimed)
	claim("taken", j, other, t0, Claimed)
	claim("taken", k, src, t0, Taken) // does not count
	claim("c", j, src, t0, Claimed)
	claim("d", k, src, t0, Limited)
	claim("d", j, src, t0, Limited) // per source, not per key
	if _, ok, err := s.Owner(ctx, "d", t0); ok || err != nil {
		t.Errorf("Owner(d) after Limited = %v, %v; want nobody", ok, err)
	}
	for _, n := range []string{"a", "B", "b"} {
		claim(n, k, src, t0.Add(time.Minute), Claimed) // refreshes: never limited
	}
	claim("c", j, src, t0.Add(time.Minute), Claimed)
	claim("e", k, other, t0, Claimed)
	for i := range 10 {
		claim(fmt.Sprint("u", i), k, "", t0, Claimed)
	}
	claim("d", k, src, t0.Add(19*time.Minute), Limited)
	claim("d", k, src, t0.Add(20*time.Minute), Claimed) // one back after hour/3
	claim("f", k, src, t0.Add(21*time.Minute), Limited)
	later := t0.Add(time.Hour + 20*time.Minute)
	for _, n := range []string{"f", "g", "h"} {
		claim(n, k, src, later, Claimed)
	}
	claim("i", k, src, later, Limited)

	// Claiming again a name whose claim lapsed is a new claim.
	lapse := t0.Add(DefaultClaimTTL + 2*time.Hour)
	claim("x", k, src, lapse, Claimed)
	claim("y", k, src, lapse, Claimed)
	claim("z", k, src, lapse, Claimed)
	claim("a", k, src, lapse, Limited)

	// Negative: no limit.
	o.ClaimsPerHour = -1
	u := openT(t, filepath.Join(t.TempDir(), "scores.db"), o)
	for i := range DefaultClaimsPerHour + 5 {
		if res, err := u.Claim(ctx, fmt.Sprint("n", i), k, src, t0); err != nil || res.Outcome != Claimed {
			t.Fatalf("unlimited store: claim %d = %+v, %v", i, res, err)
		}
	}
	if d := (Options{}).withDefaults(); d.ClaimsPerHour != DefaultClaimsPerHour || d.NamesPerKey != DefaultNamesPerKey || d.RetryEvery != DefaultRetryEvery {
		t.Errorf("defaults: %+v", d)
	}
	if _, err := s.Claim(ctx, "long", k, strings.Repeat("s", maxSource+1), t0); err == nil {
		t.Error("Claim from an overlong source succeeded")
	}
}

// TestLimiterBounded: the limiter tracks at most maxSources sources; past
// them, new sources share one bucket of ClaimsPerHour; entries whose bucket
// refilled are dropped, so new sources get their own bucket again.
func TestLimiterBounded(t *testing.T) {
	l := newLimiter(DefaultClaimsPerHour)
	src := func(i int) string { return fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&0xff, i&0xff) }
	for i := range maxSources {
		if !l.take(src(i), t0) {
			t.Fatalf("source %d refused its first claim", i)
		}
	}
	if n := l.sources(); n != maxSources {
		t.Fatalf("%d sources tracked, want %d", n, maxSources)
	}
	admitted := 0
	for i := maxSources; i < 4*maxSources; i++ {
		if l.take(src(i), t0.Add(30*time.Second)) {
			admitted++
		}
	}
	if admitted != DefaultClaimsPerHour {
		t.Errorf("past the cap, %d new sources admitted, want %d (one shared bucket)", admitted, DefaultClaimsPerHour)
	}
	if n := l.sources(); n != maxSources {
		t.Errorf("%d sources tracked past the cap, want %d", n, maxSources)
	}
	if !l.take(src(0), t0.Add(30*time.Second)) {
		t.Error("a tracked source lost its own bucket past the cap")
	}
	// A minute on, the buckets that spent one claim are full again.
	if !l.take(src(4*maxSources), t0.Add(time.Minute)) {
		t.Error("a new source refused after the map's entries refilled")
	}
	if n := l.sources(); n != 2 {
		t.Errorf("%d sources tracked after the sweep, want 2 (src(0) and the new one)", n)
	}
	// A single source: ClaimsPerHour at once, then none until one comes back.
	l = newLimiter(DefaultClaimsPerHour)
	for i := range DefaultClaimsPerHour {
		if !l.take("a", t0) {
			t.Fatalf("claim %d refused", i)
		}
	}
	if l.take("a", t0) || !l.take("b", t0) || !l.take("", t0) {
		t.Error("the limit is not per source")
	}
	if !l.take("a", t0.Add(time.Hour/DefaultClaimsPerHour)) {
		t.Error("no claim back after hour/ClaimsPerHour")
	}
	if newLimiter(0) != nil || newLimiter(-1) != nil || !newLimiter(-1).take("a", t0) {
		t.Error("a limit of 0 or less is not unlimited")
	}
}

func TestNilAndDisabledStore(t *testing.T) {
	ctx := context.Background()
	var nilStore *Store
	disabled := disabled("x", Options{}.withDefaults(), errors.New("test"))
	for name, s := range map[string]*Store{"nil": nilStore, "disabled": disabled} {
		if s.Record(Result{ID: NameID("a"), Name: "a", End: t0}) {
			t.Errorf("%s: Record accepted", name)
		}
		if _, err := s.Top(ctx, 10); !errors.Is(err, ErrDisabled) {
			t.Errorf("%s: Top err = %v", name, err)
		}
		if _, err := s.TopToday(ctx, 10, t0); !errors.Is(err, ErrDisabled) {
			t.Errorf("%s: TopToday err = %v", name, err)
		}
		if _, _, err := s.Player(ctx, NameID("a")); !errors.Is(err, ErrDisabled) {
			t.Errorf("%s: Player err = %v", name, err)
		}
		if _, err := s.Claim(ctx, "a", "SHA256:a", "192.0.2.1", t0); !errors.Is(err, ErrDisabled) {
			t.Errorf("%s: Claim err = %v", name, err)
		}
		if _, _, err := s.Owner(ctx, "a", t0); !errors.Is(err, ErrDisabled) {
			t.Errorf("%s: Owner err = %v", name, err)
		}
		if err := s.Backup(ctx, "/nonexistent"); !errors.Is(err, ErrDisabled) {
			t.Errorf("%s: Backup err = %v", name, err)
		}
		if s.Err() == nil || !s.Stats().Disabled {
			t.Errorf("%s: Err() = %v, Stats = %+v", name, s.Err(), s.Stats())
		}
		if err := s.Close(ctx); err != nil {
			t.Errorf("%s: Close = %v", name, err)
		}
	}
	if st := disabled.Stats(); st.Dropped != 1 {
		t.Errorf("disabled store: Dropped = %d, want 1", st.Dropped)
	}
}

// goroutinesBack waits (boundedly) for the goroutine count to fall to n.
func goroutinesBack(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before the store:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestCloseLeavesNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	s, err := Open(filepath.Join(t.TempDir(), "scores.db"), testOpts(nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 100 {
		s.Record(Result{ID: NameID(fmt.Sprint("p", i)), Name: "p", Length: i, End: t0})
	}
	if _, err := s.Top(ctx, 10); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Player(ctx, NameID("p1")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Errorf("second Close = %v", err)
	}
	// The prepared statements went with the store: queries after Close
	// fail cleanly.
	if _, _, err := s.Player(ctx, NameID("p1")); err == nil {
		t.Error("Player after Close: no error")
	}
	if _, _, err := s.Owner(ctx, "p1", t0); err == nil {
		t.Error("Owner after Close: no error")
	}
	if st := s.Stats(); st.Written != 100 {
		t.Errorf("Close committed %d of 100", st.Written)
	}
	goroutinesBack(t, before)

	// Close with a context that has already ended still stops the writer.
	s, err = Open(filepath.Join(t.TempDir(), "scores.db"), testOpts(nil))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		s.Record(Result{ID: NameID(fmt.Sprint("p", i)), Name: "p", Length: i, End: t0})
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	s.Close(cctx)
	if st := s.Stats(); st.Written+st.Lost != st.Recorded {
		t.Errorf("after a cancelled Close, Written %d + Lost %d != Recorded %d", st.Written, st.Lost, st.Recorded)
	}
	goroutinesBack(t, before)

	// A store whose database cannot open retries in the background; Close
	// stops it without waiting for the next try (RetryEvery is 30 s here,
	// Close's context 10 s), and what was queued is lost.
	s, err = Open(filepath.Join(parentIsFile(t), "scores.db"), testOpts(nil))
	if err == nil {
		t.Fatal("Open under a regular file succeeded")
	}
	for i := range 3 {
		s.Record(Result{ID: NameID(fmt.Sprint("p", i)), Name: "p", Length: i, End: t0})
	}
	cctx, cancel = context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.Close(cctx); err != nil {
		t.Errorf("Close of a retrying store = %v", err)
	}
	if st := s.Stats(); st.Recorded != 3 || st.Lost != 3 || st.Queued != 0 || st.Written != 0 {
		t.Errorf("after Close of a store that never opened, Stats = %+v; want the 3 recorded lost", st)
	}
	if s.Record(Result{ID: NameID("late"), Name: "late", End: t0}) {
		t.Error("Record after Close accepted a result")
	}
	goroutinesBack(t, before)

	// The same, with tries failing every 20 ms while Close comes.
	o := testOpts(nil)
	o.RetryEvery = 20 * time.Millisecond
	s, _ = Open(filepath.Join(parentIsFile(t), "scores.db"), o)
	if err := s.Close(cctx); err != nil {
		t.Errorf("Close of a store retrying every 20ms = %v", err)
	}
	goroutinesBack(t, before)
}

func TestBackup(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, filepath.Join(dir, "scores.db"), testOpts(nil))
	s.Record(Result{ID: NameID("a"), Name: "a", Length: 7, End: t0})
	waitWritten(t, s, 1)
	dst := filepath.Join(dir, "backup.db")
	if err := s.Backup(context.Background(), dst); err != nil {
		t.Fatal(err)
	}
	b := openT(t, dst, testOpts(nil))
	if rec, ok, err := b.Player(context.Background(), NameID("a")); err != nil || !ok || rec.Best != 7 {
		t.Errorf("backup's Player(a) = %+v, %v, %v", rec, ok, err)
	}
}

func TestRejectsOddPaths(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"", filepath.Join(dir, "a?b.db"), filepath.Join(dir, "a#b.db")} {
		s, err := Open(p, testOpts(nil))
		if err == nil || s == nil || s.Err() == nil {
			t.Errorf("Open(%q) = %v, %v; want a disabled store and an error", p, s, err)
		}
	}
}

// rawDB opens path without the store, for tests that shape a file.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	return db
}

// TestFailedCommitRetried makes commits fail (the days table renamed away),
// then work again: the writer keeps what failed for the next tick, up to
// QueueSize results (the oldest beyond are lost and counted), and writes
// them once it can.
func TestFailedCommitRetried(t *testing.T) {
	o := testOpts(nil)
	o.QueueSize = 8
	s := openT(t, filepath.Join(t.TempDir(), "scores.db"), o)
	ctx := context.Background()
	if _, err := s.conns().w.ExecContext(ctx, `ALTER TABLE days RENAME TO days_off`); err != nil {
		t.Fatal(err)
	}
	wait := func(what string, cond func(Stats) bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond(s.Stats()) {
			if time.Now().After(deadline) {
				t.Fatalf("waited 10 s for %s: %+v", what, s.Stats())
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	rec := func(i int) {
		t.Helper()
		if !s.Record(Result{ID: NameID(fmt.Sprint("p", i)), Name: "p", Length: i + 1, End: t0}) {
			t.Fatalf("Record %d refused", i)
		}
	}
	for i := range 5 {
		rec(i)
	}
	wait("a failed commit", func(st Stats) bool { return st.Errors >= 1 && st.Queued == 0 })
	for i := 5; i < 10; i++ {
		rec(i)
	}
	wait("2 lost", func(st Stats) bool { return st.Lost == 2 && st.Queued == 0 })
	if st := s.Stats(); st.Written != 0 {
		t.Fatalf("written %d while commits fail", st.Written)
	}
	if _, err := s.conns().w.ExecContext(ctx, `ALTER TABLE days_off RENAME TO days`); err != nil {
		t.Fatal(err)
	}
	wait("8 written", func(st Stats) bool { return st.Written == 8 })
	for i := range 10 {
		_, ok, err := s.Player(ctx, NameID(fmt.Sprint("p", i)))
		if err != nil || ok != (i >= 2) {
			t.Errorf("Player(p%d) = %v, %v; want the oldest two lost, the rest kept", i, ok, err)
		}
	}
	if st := s.Stats(); st.Lost != 2 || st.Dropped != 0 {
		t.Errorf("Stats = %+v; want Lost 2, Dropped 0", st)
	}
}

// TestConcurrentUse records from several goroutines while others query and
// claim, then closes while they still record: every result is accounted for
// as written or dropped (run it with -race).
func TestConcurrentUse(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "scores.db"), testOpts(nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	const writers, each = 4, 500
	stop := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				s.Record(Result{ID: NameID(fmt.Sprintf("w%d-%d", w, i%50)), Name: "w", Length: i, Kills: 1, Died: true, End: t0})
				if i == each/2 && w == 0 {
					close(stop) // half way: start closing while the others record
				}
			}
		})
	}
	for q := range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.Top(ctx, 10); err != nil {
					t.Errorf("Top: %v", err)
					return
				}
				if _, _, err := s.Player(ctx, NameID(fmt.Sprint("w", q, "-1"))); err != nil {
					t.Errorf("Player: %v", err)
					return
				}
				if _, err := s.Claim(ctx, fmt.Sprint("n", q), fmt.Sprint("SHA256:", q), "192.0.2.1", t0); err != nil {
					t.Errorf("Claim: %v", err)
					return
				}
			}
		})
	}
	<-stop
	wg.Go(func() {
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	wg.Wait()
	st := s.Stats()
	if st.Recorded+st.Dropped != writers*each || st.Written != st.Recorded || st.Lost != 0 || st.Errors != 0 {
		t.Errorf("Stats = %+v; want Recorded + Dropped = %d, all recorded written", st, writers*each)
	}
}

// TestDayRowsSkipped: a game no longer than what its player's row of the
// day holds, as far as the writer knows from the batches it committed,
// is not written there again (the upsert would change nothing); the rows
// come out as if every game had been written, across a day's change, a
// result from the day before, and a store opened again (which knows
// nothing yet).
func TestDayRowsSkipped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scores.db")
	s := openT(t, path, testOpts(nil))
	erin := KeyID("SHA256:erin")
	day2 := t0.Add(2 * time.Hour) // t0 is 23:00 on Nov 30
	games := []struct {
		r    Result
		skip bool
	}{
		{Result{ID: erin, Name: "erin1", Length: 10, End: t0}, false},
		{Result{ID: erin, Name: "erin2", Length: 7, End: t0.Add(time.Minute)}, true},
		{Result{ID: erin, Name: "erin3", Length: 10, End: t0.Add(2 * time.Minute)}, true},
		{Result{ID: erin, Name: "erin4", Length: 15, End: t0.Add(3 * time.Minute)}, false},
		{Result{ID: erin, Name: "erin5", Length: 12, End: t0.Add(4 * time.Minute)}, true},
		{Result{ID: erin, Name: "erin6", Length: 3, End: day2}, false},                     // a new day
		{Result{ID: erin, Name: "erin7", Length: 2, End: day2.Add(time.Minute)}, true},     // known on it
		{Result{ID: erin, Name: "erin8", Length: 14, End: t0.Add(5 * time.Minute)}, false}, // Nov 30 again: forgotten
	}
	skips := uint64(0)
	for i, g := range games {
		s.Record(g.r)
		waitWritten(t, s, uint64(i+1))
		if g.skip {
			skips++
		}
		if got := s.daySkips.Load(); got != skips {
			t.Fatalf("after game %d (%s, %d): %d day rows skipped, want %d", i, g.r.Name, g.r.Length, got, skips)
		}
	}
	ctx := context.Background()
	check := func(s *Store, when time.Time, want string) {
		t.Helper()
		got, err := s.TopToday(ctx, 10, when)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != want {
			t.Errorf("TopToday(%s) = %v, want %s", when.Format(time.DateOnly), got, want)
		}
	}
	check(s, t0, "[{1 {key SHA256:erin} erin4 15}]")
	check(s, day2, "[{1 {key SHA256:erin} erin6 3}]")
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s = openT(t, path, testOpts(nil))
	s.Record(Result{ID: erin, Name: "erin9", Length: 2, End: day2.Add(2 * time.Minute)})
	waitWritten(t, s, 1)
	if got := s.daySkips.Load(); got != 0 {
		t.Errorf("a store opened again skipped %d day rows; it knows none", got)
	}
	check(s, day2, "[{1 {key SHA256:erin} erin6 3}]")
}

// TestLimiterSites: the /64s of one IPv6 /48 take at most siteSources
// times ClaimsPerHour new claims together and so cannot fill the map;
// another /48, a single /64 and IPv4 sources keep their own limits, and
// undo gives the site's claim back too.
func TestLimiterSites(t *testing.T) {
	l := newLimiter(DefaultClaimsPerHour)
	net64 := func(site, i int) string { return fmt.Sprintf("2001:db8:%x:%x::", site, i) }
	admitted := 0
	for i := range 1 << 16 {
		if l.take(net64(1, i), t0) {
			admitted++
		}
	}
	if want := siteSources * DefaultClaimsPerHour; admitted != want {
		t.Fatalf("one /48's /64s took %d claims, want %d", admitted, want)
	}
	if n := l.sources(); n > siteSources*DefaultClaimsPerHour+1 {
		t.Fatalf("one /48 put %d entries in the map", n)
	}
	for i := range DefaultClaimsPerHour {
		if !l.take(net64(2, 7), t0) {
			t.Fatalf("a /64 of another /48 refused its claim %d", i)
		}
	}
	if l.take(net64(2, 7), t0) {
		t.Fatal("a /64 took more than its own ClaimsPerHour")
	}
	for i := range siteSources * DefaultClaimsPerHour {
		if !l.take(fmt.Sprintf("10.0.%d.%d", i>>8, i&0xff), t0) {
			t.Fatalf("IPv4 source %d refused", i)
		}
	}
	// undo: the site's spent claim comes back with the source's
	l = newLimiter(DefaultClaimsPerHour)
	for i := range siteSources * DefaultClaimsPerHour {
		if !l.take(net64(3, i), t0) {
			t.Fatalf("claim %d of site 3 refused", i)
		}
	}
	if l.take(net64(3, 9999), t0) {
		t.Fatal("a full site took one more")
	}
	l.undo(net64(3, 5))
	if !l.take(net64(3, 9999), t0) {
		t.Fatal("undo did not give the site's claim back")
	}
	if l.take(net64(3, 10000), t0) {
		t.Fatal("the site took more than undo gave back")
	}
	// a minute on, the site has one claim per hour/(siteSources*ClaimsPerHour)
	later := t0.Add(time.Hour / (siteSources * DefaultClaimsPerHour))
	if !l.take(net64(3, 10001), later) || l.take(net64(3, 10002), later) {
		t.Fatal("the site's bucket does not refill at siteSources*ClaimsPerHour an hour")
	}
	if site("10.1.2.3") != "" || site("::ffff:10.1.2.3") != "" || site("junk") != "" || site("2001:db8:1:2::") != "site 2001:db8:1::/48" {
		t.Fatalf("site keys: %q %q %q %q", site("10.1.2.3"), site("::ffff:10.1.2.3"), site("junk"), site("2001:db8:1:2::"))
	}
}
