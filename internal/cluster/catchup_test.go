package cluster

import (
	"slices"
	"testing"

	"github.com/nats-io/nats.go"

	"snaked/game"
	"snaked/internal/cluster/wire"
)

// TestCatchUp: a follower catching a new replica up applies every delta
// that reached it while it synced, those from before the catch-up and
// those the connection delivers during it (from another goroutine, as
// NATS does), in order and once each; the replica goes live at the last
// tick with no gap, and shows the world's pixels. Deltas from another
// simulation instance and from before the snapshot are left out.
func TestCatchUp(t *testing.T) {
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
	gr, err := wire.NewReplica(chunks)
	if err != nil {
		t.Fatal(err)
	}
	const before, during = 60, 150 // fewer than maxPending in all
	var msgs [][]byte
	for range before + during {
		msgs = append(msgs, stream(1))
	}
	// Another instance's tick: never applied to this replica.
	msgs = slices.Insert(msgs, before/2, appendStream(nil, 2))
	msgs = slices.Insert(msgs, 0, old)

	f := &Follower{stop: make(chan struct{}), empty: game.EmptyView()}
	f.syncing = true
	for _, m := range msgs[:before+2] {
		f.onDelta(&nats.Msg{Data: m})
	}
	done := make(chan error, 1)
	go func() { done <- f.catchUp(&replica{gr, 1}) }()
	for _, m := range msgs[before+2:] {
		f.onDelta(&nats.Msg{Data: m})
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s := f.Stats()
	if s.Applied != before+during || s.Gaps != 0 || s.Bad != 0 {
		t.Fatalf("stats %+v: want %d applied, no gap, nothing bad", s, before+during)
	}
	f.mu.Lock()
	left := len(f.pending)
	f.mu.Unlock()
	if left != 0 || f.syncing {
		t.Fatalf("%d deltas left pending, syncing %v", left, f.syncing)
	}
	v := f.Acquire()
	defer v.Release()
	wv := w.Acquire()
	defer wv.Release()
	if v.Tick != wv.Tick {
		t.Fatalf("replica at tick %d, world at %d", v.Tick, wv.Tick)
	}
	if !slices.Equal(v.Pix, wv.Pix) {
		t.Fatal("the replica's pixels are not the world's")
	}
}
