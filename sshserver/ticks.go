package sshserver

import (
	"time"

	"snaked/game"
)

// This file is when the server draws. One goroutine of the server's own,
// its tick loop (run by Serve), hands the sessions to the frame workers
// and their writers (notifyAll) each time its Wake is signalled: by
// Ticked, which the world's clock calls in a single process, or by
// whatever was given the Wake at construction (a gateway's follower, after
// each delta it applies). While no signal comes for idleAfter (a gateway
// whose simulation is away), the loop draws every idleEvery by itself, so
// the banner's notice and the shutdown countdown stay current; the
// sessions then draw the view they have.

// Idle redraws: after idleAfter without a tick, one every idleEvery.
const (
	idleAfter = 300 * time.Millisecond
	idleEvery = 250 * time.Millisecond
)

// Wake tells a server that the world has a new view to draw. Build it
// before the server and give it to the server (Config.Wake) and to
// whatever hears of the world's views first (a gateway's follower), so
// that neither needs the other built. Latest wins: Tick never blocks, and
// the signals that come while the server has not taken the last one make
// one draw.
type Wake struct{ c chan struct{} }

// NewWake returns a Wake with nothing signalled.
func NewWake() *Wake { return &Wake{c: make(chan struct{}, 1)} }

// Tick signals that a new view is there; it never blocks. It is safe for
// concurrent use.
func (w *Wake) Tick() {
	select {
	case w.c <- struct{}{}:
	default:
	}
}

// Ticked tells the server that the world's clock ran round r: it records
// the round's steps and drops, then signals the server's Wake. It never
// blocks. A single process's clock calls it after each round.
func (s *Server) Ticked(r game.Round) {
	if r.Steps > 0 {
		per := r.Took.Seconds() / float64(r.Steps)
		for range r.Steps {
			s.m.tick.Observe(per)
		}
	}
	if r.Dropped > 0 {
		s.m.ticksLate.Add(float64(r.Dropped))
	}
	s.cfg.Wake.Tick()
}

// tickLoop draws at each signal of the server's Wake, and every idleEvery
// after idleAfter without one, until stop closes.
func (s *Server) tickLoop(stop <-chan struct{}) {
	idle := time.NewTimer(idleAfter)
	defer idle.Stop()
	for {
		select {
		case <-stop:
			return
		case <-s.cfg.Wake.c:
			s.notifyAll()
			idle.Reset(idleAfter)
		case <-idle.C:
			s.notifyAll()
			idle.Reset(idleEvery)
		}
	}
}

// notifyAll hands the sessions in play to the frame workers and pokes
// the others' writers, and those of slow clients (session.solo): latest
// wins, it never blocks.
func (s *Server) notifyAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.tickList[:0]
	for _, ss := range s.live {
		switch phase(ss.phase.Load()) {
		case phasePlay, phaseWatch:
			if !ss.solo.Load() {
				list = append(list, ss)
				break
			}
			fallthrough
		default:
			ss.poke()
		}
	}
	if !s.frames.dispatch(list) {
		for _, ss := range list {
			ss.poke()
		}
	}
	clear(list)
	s.tickList = list[:0]
}
