package sshserver

import (
	"snaked/internal/testkit"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// TestFramePoolStalledWorker: workers stalled on one session each, here
// every worker of the pool, one in a write (as to a client that does not
// read) and one in a render (as in a join a gateway waits for), are
// replaced, so every other session of the list is drawn meanwhile, those
// the stalled workers rendered before their stalls included, each once;
// the stalled ones end once their sessions let them go, and close waits
// for them.
func TestFramePoolStalledWorker(t *testing.T) {
	stuck, stuck2 := &session{}, &session{}
	release := make(chan struct{})
	var mu sync.Mutex
	drawn := map[*session]int{}
	p := newFramePool(2, func(s *session) bool {
		if s == stuck2 {
			<-release
		}
		return true
	}, func(s *session) {
		if s == stuck {
			<-release
		}
		mu.Lock()
		drawn[s]++
		mu.Unlock()
	})
	p.run()
	// On a failure, let the stalled workers go and stop the pool.
	fail := func(msg string) {
		close(release)
		p.close()
		t.Fatal(msg)
	}
	others := make([]*session, 200)
	for i := range others {
		others[i] = &session{}
	}
	// The stalled sessions among the first: each of the two workers
	// takes one (the stalled write comes after the rest of its worker's
	// batch is rendered, the stalled render after a few sessions).
	list := append(append(append([]*session{stuck}, others[:3]...), stuck2), others[3:]...)
	if !p.dispatch(list) {
		fail("dispatch refused on a running pool")
	}
	// each reports whether every other session was drawn k times.
	each := func(k int) func() bool {
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, s := range others {
				if drawn[s] != k {
					return false
				}
			}
			return true
		}
	}
	if !testkit.Eventually(5*time.Second, each(1)) {
		mu.Lock()
		c := map[int]int{}
		for _, s := range others {
			c[drawn[s]]++
		}
		t.Logf("counts %v", c)
		mu.Unlock()
		fail("sessions after a stalled one were not drawn")
	}
	p.mu.Lock()
	n := len(p.workers)
	p.mu.Unlock()
	if n != 2 {
		t.Errorf("%d workers in the pool after the stalls, want 2 (the stalled ones replaced)", n)
	}
	// A second tick draws everyone again, the stalled session's worker
	// still waiting.
	if !p.dispatch(others) {
		fail("dispatch refused")
	}
	if !testkit.Eventually(5*time.Second, each(2)) {
		fail("the next list was not drawn while a worker was stalled")
	}
	close(release)
	done := make(chan struct{})
	go func() { p.close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("close did not return once the stalled worker was let go")
	}
	mu.Lock()
	defer mu.Unlock()
	if drawn[stuck] != 1 || drawn[stuck2] != 1 {
		t.Errorf("the stalled sessions were drawn %d and %d times, want 1 each", drawn[stuck], drawn[stuck2])
	}
	if p.dispatch(list) {
		t.Error("dispatch accepted a list after close")
	}
}

// TestFramePoolUnreachedFirst: a tick that comes while the last list is
// being drawn starts a list with the sessions no worker reached yet
// first, each once.
func TestFramePoolUnreachedFirst(t *testing.T) {
	p := newFramePool(1, func(*session) bool { return false }, func(*session) {})
	// Not running: dispatch refuses, and lists are made by hand below.
	if p.dispatch([]*session{{}}) {
		t.Fatal("dispatch accepted a list before run")
	}
	ss := make([]*session, 6)
	for i := range ss {
		ss[i] = &session{}
	}
	p.live.Store(true) // lists without workers: nothing draws them
	p.dispatch(ss)
	p.cur.Load().next.Store(4) // four taken: 4 and 5 not reached
	p.dispatch([]*session{ss[0], ss[5], ss[1]})
	got := p.cur.Load().list
	want := []*session{ss[4], ss[5], ss[0], ss[1]}
	if len(got) != len(want) {
		t.Fatalf("list of %d sessions, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("session %d of the list is not the expected one", i)
		}
	}
}

// slowChannel is a session channel whose writes take a while.
type slowChannel struct {
	ssh.Channel
	delay time.Duration
}

func (c *slowChannel) Write(p []byte) (int, error) {
	time.Sleep(c.delay)
	return len(p), nil
}

// TestSlowWriteGoesSolo: a session whose write takes stallAfter or more
// is drawn by its own writer from then on; quick writes leave it to the
// frame workers.
func TestSlowWriteGoesSolo(t *testing.T) {
	srv := &Server{m: newMetrics()}
	quick := &session{srv: srv, ch: &slowChannel{}}
	for range 3 {
		quick.write([]byte("frame"))
	}
	if quick.solo.Load() {
		t.Error("quick writes made the session solo")
	}
	slow := &session{srv: srv, ch: &slowChannel{delay: stallAfter + 5*time.Millisecond}}
	slow.write([]byte("frame"))
	if !slow.solo.Load() {
		t.Error("a write of stallAfter did not make the session solo")
	}
}

// TestTickSkipsSolo: the tick hands sessions in play to the frame
// workers, but pokes the writers of solo ones and of sessions outside
// play.
func TestTickSkipsSolo(t *testing.T) {
	srv := &Server{m: newMetrics(), frames: newFramePool(1, func(*session) bool { return false }, func(*session) {})}
	srv.frames.live.Store(true) // lists without workers: nothing draws them
	mk := func(ph phase, solo bool) *session {
		s := &session{srv: srv, wake: make(chan struct{}, 1)}
		s.phase.Store(int32(ph))
		s.solo.Store(solo)
		return s
	}
	player, watcher, slow, joining := mk(phasePlay, false), mk(phaseWatch, false), mk(phasePlay, true), mk(phaseJoin, false)
	srv.live = []*session{player, slow, watcher, joining}
	srv.notifyAll()
	got := srv.frames.cur.Load().list
	if len(got) != 2 || got[0] != player || got[1] != watcher {
		t.Errorf("the workers' list has %d sessions, want the player and the watcher", len(got))
	}
	for _, c := range []struct {
		name  string
		s     *session
		poked bool
	}{{"player", player, false}, {"watcher", watcher, false}, {"solo player", slow, true}, {"joining", joining, true}} {
		if poked := len(c.s.wake) == 1; poked != c.poked {
			t.Errorf("%s: poked %v, want %v", c.name, poked, c.poked)
		}
	}
}
