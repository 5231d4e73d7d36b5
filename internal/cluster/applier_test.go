package cluster

import (
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"snaked/game"
	"snaked/internal/cluster/wire"
)

// TestFollowerApplier: a whole-feed follower's deltas go through one
// queue to one applier. Deltas the connection delivers from its own
// goroutine while the applier works are applied in order, once each, with
// no gap; one from before the replica's snapshot is passed over; the
// replica ends at the world's tick with its pixels. A lost delta and a
// delta of another simulation instance each stop the batch and ask for a
// snapshot, the view showing the last delta applied; Stats counts the
// deltas queued until the applier takes them. A batch publishes views of
// every maxQuiet-th delta and of the last quietFrom. Once it keeps up, a
// delta costs no allocation.
func TestFollowerApplier(t *testing.T) {
	gc := game.DefaultConfig()
	gc.W, gc.H, gc.MaxSnakes, gc.Bots, gc.Seed = 192, 96, 40, 30, 11
	w, err := game.New(gc)
	if err != nil {
		t.Fatal(err)
	}
	e := wire.NewEncoder(w)
	stream := func(sim uint64) []byte {
		w.Step(w.Feed().Tick() + 1)
		d, err := e.AppendDelta(appendStream(nil, sim))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	old := stream(1) // from before the snapshot
	chunks, err := wire.Snapshot(w, ChunkSize)
	if err != nil {
		t.Fatal(err)
	}
	snapTick := w.Feed().Tick() // msgs[k] below, k >= 1, brings a replica to snapTick+k
	newFollower := func() *Follower {
		gr, err := wire.NewReplica(chunks)
		if err != nil {
			t.Fatal(err)
		}
		f := &Follower{wake: make(chan struct{}, 1), empty: game.EmptyView()}
		f.rep.Store(&replica{gr, 1})
		return f
	}
	const n = 200 // fewer than maxPending: none is dropped however the two goroutines run
	msgs := [][]byte{old}
	for range n {
		msgs = append(msgs, stream(1))
	}

	f := newFollower()
	go func() { // the connection
		for _, m := range msgs {
			f.onDelta(&nats.Msg{Data: m})
		}
	}()
	deadline := time.After(10 * time.Second)
	for f.Stats().Applied < n {
		select {
		case <-f.wake:
		case <-deadline:
			t.Fatalf("stats %+v after 10 s, want %d applied", f.Stats(), n)
		}
		if f.applyPending() {
			t.Fatalf("a snapshot asked for; stats %+v", f.Stats())
		}
	}
	if s := f.Stats(); s.Applied != n || s.Gaps != 0 || s.Bad != 0 || s.Foreign != 0 {
		t.Fatalf("stats %+v: want %d applied, nothing else", s, n)
	}
	v := f.Acquire()
	wv := w.Acquire()
	if v.Tick != wv.Tick || !slices.Equal(v.Pix, wv.Pix) {
		t.Fatalf("replica at tick %d, world at %d; pixels equal: %v", v.Tick, wv.Tick, slices.Equal(v.Pix, wv.Pix))
	}
	v.Release()
	wv.Release()

	// A follower that keeps up reuses its buffers: queueing and applying
	// a delta allocates nothing, once its view buffers' lists have grown
	// (the runs above published only the last delta of each, a whole
	// copy after a long one).
	const warm = 30
	for range warm {
		f.onDelta(&nats.Msg{Data: stream(1)})
		if f.applyPending() {
			t.Fatal("a snapshot asked for")
		}
	}
	const runs = 20
	next := make([]*nats.Msg, runs+1) // AllocsPerRun runs once more first
	for i := range next {
		next[i] = &nats.Msg{Data: stream(1)}
	}
	k := 0
	allocs := testing.AllocsPerRun(runs, func() {
		f.onDelta(next[k])
		if f.applyPending() {
			t.Fatal("a snapshot asked for")
		}
		k++
	})
	if allocs != 0 || f.Stats().Applied != n+warm+runs+1 {
		t.Errorf("%v allocations a delta, stats %+v", allocs, f.Stats())
	}

	for _, c := range []struct {
		name  string
		msgs  [][]byte
		stats FollowerStats
	}{
		{"a lost delta", [][]byte{msgs[1], msgs[2], msgs[4], msgs[5]}, FollowerStats{Applied: 2, Gaps: 1}},
		{"another instance", [][]byte{msgs[1], appendStream(nil, 2), msgs[2]}, FollowerStats{Applied: 1, Foreign: 1}},
	} {
		f := newFollower()
		for _, m := range c.msgs {
			f.onDelta(&nats.Msg{Data: m})
		}
		if q := f.Stats().Queued; q != uint64(len(c.msgs)) {
			t.Errorf("%s: %d queued, want %d", c.name, q, len(c.msgs))
		}
		if !f.applyPending() {
			t.Errorf("%s: no snapshot asked for", c.name)
		}
		s := f.Stats()
		s.Bytes = 0
		if s != c.stats {
			t.Errorf("%s: stats %+v, want %+v", c.name, s, c.stats)
		}
		// the batch ended early: the view shows the last delta applied
		v := f.Acquire()
		if v.Tick != snapTick+uint64(c.stats.Applied) || f.rep.Load().Tick() != v.Tick {
			t.Errorf("%s: the view at tick %d, the replica at %d", c.name, v.Tick, f.rep.Load().Tick())
		}
		v.Release()
	}

	// A batch of 40 queued deltas publishes views of the 16th, the 32nd
	// (maxQuiet) and the last three (quietFrom), each told to onTick.
	f = newFollower()
	views := 0
	f.onTick = func() { views++ }
	for _, m := range msgs[1:41] {
		f.onDelta(&nats.Msg{Data: m})
	}
	if f.applyPending() {
		t.Fatal("a snapshot asked for")
	}
	v = f.Acquire()
	defer v.Release()
	if views != 5 || v.Tick != snapTick+40 || f.rep.Load().Tick() != snapTick+40 {
		t.Fatalf("%d views told, the view at tick %d, the replica at %d, want 5 and tick %d", views, v.Tick, f.rep.Load().Tick(), snapTick+40)
	}
}
