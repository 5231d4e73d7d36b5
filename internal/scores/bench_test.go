package scores

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// players returns n identities, half with keys and half keyless.
func players(n int) []ID {
	ids := make([]ID, n)
	for i := range ids {
		if i%2 == 0 {
			ids[i] = KeyID(fmt.Sprintf("SHA256:%043d", i))
		} else {
			ids[i] = NameID(fmt.Sprintf("player%06d", i))
		}
	}
	return ids
}

// game is a finished game of id ending at end, with plausible figures.
func game(rng *rand.Rand, id ID, end time.Time) Result {
	return Result{
		ID:       id,
		Name:     "p" + id.Value[len(id.Value)-6:],
		Length:   3 + int(rng.ExpFloat64()*40),
		Kills:    rng.IntN(4),
		Died:     true,
		Duration: time.Duration(5+rng.IntN(600)) * time.Second,
		End:      end,
	}
}

// BenchmarkRecord times one Record call, the tick's whole cost per finished
// game: queued (the queue has room; the benchmark empties it, untimed, when
// full) and full (the result is dropped and counted).
func BenchmarkRecord(b *testing.B) {
	r := Result{ID: NameID("bench"), Name: "bench", Length: 10, End: t0}
	b.Run("queued", func(b *testing.B) {
		o := testOpts(nil)
		o.FlushEvery = time.Hour
		o.QueueSize = 1 << 16
		s := openT(b, filepath.Join(b.TempDir(), "scores.db"), o)
		b.ReportAllocs()
		for b.Loop() {
			if len(s.queue) == cap(s.queue) {
				b.StopTimer()
				for range len(s.queue) {
					<-s.queue
				}
				b.StartTimer()
			}
			s.Record(r)
		}
		if st := s.Stats(); st.Dropped != 0 {
			b.Fatalf("dropped %d", st.Dropped)
		}
	})
	b.Run("full", func(b *testing.B) {
		o := testOpts(nil)
		o.FlushEvery = time.Hour
		o.QueueSize = 1
		s := openT(b, filepath.Join(b.TempDir(), "scores.db"), o)
		s.Record(r)
		b.ReportAllocs()
		for b.Loop() {
			s.Record(r)
		}
		if st := s.Stats(); st.Recorded != 1 {
			b.Fatalf("recorded %d", st.Recorded)
		}
	})
}

// BenchmarkFlood records games of 2,500 players from one goroutine as fast
// as Record returns, far above any real server, through the default queue
// (4,096) and writer (1 s): what is kept is the queue's capacity per flush,
// the rest is dropped and counted. Reports games recorded and written per
// second of the run.
func BenchmarkFlood(b *testing.B) {
	s := openT(b, filepath.Join(b.TempDir(), "scores.db"), Options{Log: testOpts(nil).Log})
	ids := players(2500)
	rng := rand.New(rand.NewPCG(9, 10))
	games := make([]Result, len(ids))
	for i, id := range ids {
		games[i] = game(rng, id, t0)
	}
	i := 0
	for b.Loop() {
		s.Record(games[i])
		i = (i + 1) % len(games)
	}
	el := b.Elapsed()
	if err := s.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	st := s.Stats()
	b.ReportMetric(float64(st.Recorded)/el.Seconds(), "kept/s")
	b.ReportMetric(float64(st.Written)/el.Seconds(), "written/s")
	b.ReportMetric(float64(st.Dropped)/float64(b.N), "dropped/op")
	if st.Written != st.Recorded {
		b.Errorf("kept %d, wrote %d", st.Recorded, st.Written)
	}
}

// BenchmarkWriteBatch times the writer's transaction for a batch of n games
// by 2,500 players (upsert of the record and of the day, claim refresh for
// keys, commit). results/s is the writer's sustained capacity at that batch
// size; the queue's capacity is QueueSize per FlushEvery (4,096/s by default).
func BenchmarkWriteBatch(b *testing.B) {
	for _, n := range []int{250, 2500, 4096} {
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) {
			o := testOpts(nil)
			o.FlushEvery = time.Hour // the writer stays idle; the benchmark writes
			s := openT(b, filepath.Join(b.TempDir(), "scores.db"), o)
			ids := players(2500)
			rng := rand.New(rand.NewPCG(1, 2))
			batch := make([]Result, n)
			end := t0
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				for i := range batch {
					end = end.Add(time.Millisecond)
					batch[i] = game(rng, ids[rng.IntN(len(ids))], end)
				}
				if err := s.write(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "results/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/result")
		})
	}
}

// TestSustainedRate runs the whole pipeline (Record, queue, writer at its
// default 1 s) with 2,500 players each dying once a second: ten times the
// rate of a busy server (2,500 deaths per 10 s). Nothing may be dropped.
// Under the race detector the writer commits ~2,000 games/s on two loaded
// cores (25x slower), so there the test runs the busy server's own rate.
func TestSustainedRate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 3 s")
	}
	perTick := 250 // 10 ticks a second
	if raceEnabled {
		perTick = 25
	}
	o := testOpts(nil)
	o.FlushEvery = DefaultFlushEvery
	s := openT(t, filepath.Join(t.TempDir(), "scores.db"), o)
	ids := players(2500)
	rng := rand.New(rand.NewPCG(3, 4))
	const ticks = 30 // 3 s
	maxQueued := 0
	start := time.Now()
	for tick := range ticks {
		now := time.Now()
		for i := range perTick {
			s.Record(game(rng, ids[(tick*perTick+i)%len(ids)], now))
		}
		maxQueued = max(maxQueued, s.Stats().Queued)
		time.Sleep(time.Until(start.Add(time.Duration(tick+1) * 100 * time.Millisecond)))
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	t.Logf("%d games in %v: %+v, at most %d queued", ticks*perTick, time.Since(start).Round(time.Millisecond), st, maxQueued)
	if st.Dropped != 0 || st.Written != uint64(ticks*perTick) || st.Errors != 0 {
		t.Errorf("at %d deaths/s: %+v; want none dropped, all %d written", perTick*10, st, ticks*perTick)
	}
}

// BenchmarkQueries times the queries on a database of 100,000 identities
// (built in the setup by the writer's own batches, one game each, ended over
// the last 30 days).
func BenchmarkQueries(b *testing.B) {
	const n = 100_000
	o := testOpts(nil)
	o.FlushEvery = time.Hour
	path := filepath.Join(b.TempDir(), "scores.db")
	s := openT(b, path, o)
	ids := players(n)
	rng := rand.New(rand.NewPCG(5, 6))
	now := t0
	ctx := context.Background()
	start := time.Now()
	batch := make([]Result, 0, 10_000)
	for i, id := range ids {
		batch = append(batch, game(rng, id, now.Add(-time.Duration(rng.Int64N(int64(30*24*time.Hour))))))
		if len(batch) == cap(batch) || i == len(ids)-1 {
			if err := s.write(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	b.Logf("built %d identities in %v", n, time.Since(start).Round(time.Millisecond))
	today, err := s.TopToday(ctx, MaxTop, now)
	if err != nil || len(today) == 0 {
		b.Fatalf("TopToday = %d entries, %v", len(today), err)
	}

	b.Run("Top10", func(b *testing.B) {
		for b.Loop() {
			if top, err := s.Top(ctx, 10); err != nil || len(top) != 10 {
				b.Fatal(len(top), err)
			}
		}
	})
	b.Run("Top100", func(b *testing.B) {
		for b.Loop() {
			if top, err := s.Top(ctx, 100); err != nil || len(top) != 100 {
				b.Fatal(len(top), err)
			}
		}
	})
	b.Run("TopToday10", func(b *testing.B) {
		for b.Loop() {
			if top, err := s.TopToday(ctx, 10, now); err != nil || len(top) != 10 {
				b.Fatal(len(top), err)
			}
		}
	})
	b.Run("Player/random", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(7, 8))
		for b.Loop() {
			if _, ok, err := s.Player(ctx, ids[rng.IntN(n)]); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
	// The rank counts the identities ahead: the last-ranked player costs most.
	var lastID ID
	if err := s.conns().r.QueryRowContext(ctx, `SELECT kind, ident FROM players ORDER BY best, best_at DESC LIMIT 1`).Scan(&lastID.Kind, &lastID.Value); err != nil {
		b.Fatal(err)
	}
	b.Run("Player/last", func(b *testing.B) {
		for b.Loop() {
			if rec, ok, err := s.Player(ctx, lastID); err != nil || !ok || rec.Rank < n/2 {
				b.Fatal(rec, ok, err)
			}
		}
	})
	b.Run("Owner", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := s.Owner(ctx, "player000001", now); err != nil {
				b.Fatal(err)
			}
		}
	})
	if err := s.Close(ctx); err != nil {
		b.Fatal(err)
	}
	if st, err := os.Stat(path); err == nil {
		b.Logf("database file: %d bytes for %d identities (%d days rows)", st.Size(), n, n)
	}
	// Open checks (quick_check) and migrates: the daemon's start-up cost.
	b.Run("Open+Close", func(b *testing.B) {
		for b.Loop() {
			s, err := Open(path, o)
			if err != nil {
				b.Fatal(err)
			}
			s.Close(ctx)
		}
	})
}
