package game

import (
	"context"
	"runtime/trace"
	"sync"
	"time"
)

// Clock steps a World in real time: TicksPerSecond rounds a second, each
// round stepping once (or a few times back to back, up to MaxCatchUp, when
// the goroutine ran late), then telling OnRound. It is the only code in the
// package whose time the rules follow; the rules only ever see tick numbers
// (the step's workers read the clock only to bound their spinning between
// passes, parts.go, which changes no result).
// Whoever runs the world runs one Clock: the daemon's main in a single
// process, or a cluster's simulation. In an execution trace (runtime/trace,
// /debug/pprof/trace) each step is a region "step" and each call of
// OnRound a region "round".
type Clock struct {
	Period     time.Duration // time per tick; 0 = time.Second / TicksPerSecond
	MaxCatchUp int           // steps one round may run back to back; 0 = 3
	// OnRound, when set, is called from the clock's goroutine after each
	// round's steps, with what the round did. It must not block: the next
	// tick waits for it.
	OnRound func(Round)
	// Hold, when set, is locked around each round, its steps and OnRound:
	// work beside the world that takes its other side (a
	// cluster.Publisher's snapshot writer) waits while a round runs
	// rather than share its cores.
	Hold sync.Locker
}

// Round is what one round of the clock did.
type Round struct {
	Tick    uint64        // the newest tick stepped
	Steps   int           // steps run this round (more than 1 when catching up)
	Took    time.Duration // time spent in Step, all steps together
	Dropped int           // ticks given up because the clock fell too far behind
}

// schedule is the clock's pure arithmetic: which steps are due at a given
// time, with bounded catch-up.
type schedule struct {
	period time.Duration
	max    int
	next   time.Time // when the next tick is due
}

// due reports how many steps to run at now and how many ticks to give up,
// and advances the schedule. When more than max ticks are due, the rest are
// dropped and the schedule restarts one period after now.
func (s *schedule) due(now time.Time) (steps, dropped int) {
	for steps < s.max && !now.Before(s.next) {
		steps++
		s.next = s.next.Add(s.period)
	}
	if !now.Before(s.next) {
		dropped = int(now.Sub(s.next)/s.period) + 1
		s.next = now.Add(s.period)
	}
	return steps, dropped
}

// Run steps w until ctx is done. The first tick is due one period after
// Run starts; tick numbers continue from the world's current one.
func (c Clock) Run(ctx context.Context, w *World) {
	period := c.Period
	if period <= 0 {
		period = time.Second / TicksPerSecond
	}
	maxSteps := c.MaxCatchUp
	if maxSteps <= 0 {
		maxSteps = 3
	}
	v := w.Acquire()
	tick := v.Tick
	v.Release()
	s := schedule{period: period, max: maxSteps, next: time.Now().Add(period)}
	t := time.NewTimer(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		steps, dropped := s.due(time.Now())
		if steps > 0 {
			tick = c.round(ctx, w, tick, steps, dropped)
		}
		t.Reset(time.Until(s.next))
	}
}

// round steps w steps times from tick and calls OnRound, holding Hold
// throughout (released even when OnRound panics), and returns the newest
// tick.
func (c Clock) round(ctx context.Context, w *World, tick uint64, steps, dropped int) uint64 {
	if c.Hold != nil {
		c.Hold.Lock()
		defer c.Hold.Unlock()
	}
	t0 := time.Now()
	for range steps {
		tick++
		reg := trace.StartRegion(ctx, "step")
		w.Step(tick)
		reg.End()
	}
	r := Round{Tick: tick, Steps: steps, Took: time.Since(t0), Dropped: dropped}
	if c.OnRound != nil {
		reg := trace.StartRegion(ctx, "round")
		c.OnRound(r)
		reg.End()
	}
	return tick
}
