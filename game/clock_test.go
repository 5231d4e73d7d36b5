package game

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestScheduleJitter feeds the schedule jittered wake-up times: on time it
// steps once per period, late it catches up at most max steps and drops the
// rest, and the tick count never runs ahead of real time.
func TestScheduleJitter(t *testing.T) {
	const period = 100 * time.Millisecond
	t0 := time.Unix(1000, 0)
	s := schedule{period: period, max: 3, next: t0.Add(period)}
	cases := []struct {
		at             time.Duration // since t0
		steps, dropped int
	}{
		{100 * time.Millisecond, 1, 0},   // on time
		{205 * time.Millisecond, 1, 0},   // a little late: still one
		{290 * time.Millisecond, 0, 0},   // early wake-up: nothing due
		{300 * time.Millisecond, 1, 0},   // due exactly
		{650 * time.Millisecond, 3, 0},   // 400, 500, 600 due: caught up
		{1999 * time.Millisecond, 3, 10}, // 700..1900 due (13): 3 run, 10 dropped
	}
	for _, c := range cases {
		steps, dropped := s.due(t0.Add(c.at))
		if steps != c.steps || dropped != c.dropped {
			t.Errorf("at %v: %d steps, %d dropped; want %d, %d", c.at, steps, dropped, c.steps, c.dropped)
		}
	}
	// After dropping, the schedule restarts one period after the late wake-up.
	if got, want := s.next, t0.Add(1999*time.Millisecond+period); !got.Equal(want) {
		t.Errorf("next due %v, want %v", got.Sub(t0), want.Sub(t0))
	}
}

// TestClockRun steps a real world with a short period: ticks grow by one a
// step, OnRound sees every tick once, and Run returns when ctx ends.
func TestClockRun(t *testing.T) {
	w, err := New(Config{W: 64, H: 64, MaxSnakes: 8, Bots: 2, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rounds := make(chan Round, 1000)
	c := Clock{Period: 2 * time.Millisecond, OnRound: func(r Round) {
		select {
		case rounds <- r:
		default:
			t.Error("OnRound called more than 1000 times")
		}
	}}
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx, w) }()
	var last uint64
	deadline := time.After(10 * time.Second)
	for last < 20 {
		select {
		case r := <-rounds:
			if r.Steps < 1 || r.Steps > 3 || r.Tick != last+uint64(r.Steps) {
				t.Fatalf("round %+v after tick %d", r, last)
			}
			last = r.Tick
		case <-deadline:
			t.Fatalf("only %d ticks in 10 s", last)
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	v := w.Acquire()
	defer v.Release()
	if v.Tick < last {
		t.Errorf("world at tick %d, clock reported %d", v.Tick, last)
	}
}

// holdCount is a sync.Locker that counts its locks and unlocks and says
// whether it is held.
type holdCount struct {
	locks, unlocks atomic.Int64
	held           atomic.Bool
}

func (h *holdCount) Lock()   { h.locks.Add(1); h.held.Store(true) }
func (h *holdCount) Unlock() { h.held.Store(false); h.unlocks.Add(1) }

// TestClockHold: the clock locks Hold around each round, once a round,
// OnRound included.
func TestClockHold(t *testing.T) {
	w, err := New(Config{W: 64, H: 64, MaxSnakes: 8, Bots: 2, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	var h holdCount
	var steps, rounds, heldRounds atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	c := Clock{Period: 2 * time.Millisecond, Hold: &h, OnRound: func(r Round) {
		steps.Add(int64(r.Steps))
		rounds.Add(1)
		if h.held.Load() {
			heldRounds.Add(1)
		}
	}}
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx, w) }()
	deadline := time.Now().Add(10 * time.Second)
	for steps.Load() < 20 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if n := rounds.Load(); steps.Load() < 20 || h.locks.Load() != n || h.unlocks.Load() != n || heldRounds.Load() != n {
		t.Fatalf("%d rounds: %d locks, %d unlocks, %d rounds told with Hold held", n, h.locks.Load(), h.unlocks.Load(), heldRounds.Load())
	}
}

// TestClockHoldPanic: a round whose OnRound panics releases Hold as the
// panic leaves Run, so a writer waiting on its other side is not stuck
// behind a clock that died.
func TestClockHoldPanic(t *testing.T) {
	w, err := New(Config{W: 64, H: 64, MaxSnakes: 8, Bots: 2, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	var h holdCount
	c := Clock{Period: time.Millisecond, Hold: &h, OnRound: func(Round) { panic("round") }}
	got := make(chan any, 1)
	go func() {
		defer func() { got <- recover() }()
		c.Run(context.Background(), w)
	}()
	select {
	case r := <-got:
		if r != "round" {
			t.Fatalf("Run ended with %v, want the round's panic", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not panic")
	}
	if h.locks.Load() != 1 || h.unlocks.Load() != 1 || h.held.Load() {
		t.Fatalf("after the panic: %d locks, %d unlocks, held %v", h.locks.Load(), h.unlocks.Load(), h.held.Load())
	}
}
