package sshserver

import (
	"io"
	"testing"

	"golang.org/x/crypto/ssh"

	"snaked/game"
	"snaked/render"
)

// nullChannel is an ssh.Channel that swallows writes.
type nullChannel struct{ n int }

func (c *nullChannel) Read([]byte) (int, error)    { return 0, io.EOF }
func (c *nullChannel) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }
func (c *nullChannel) Close() error                { return nil }
func (c *nullChannel) CloseWrite() error           { return nil }
func (c *nullChannel) SendRequest(string, bool, []byte) (bool, error) {
	return false, nil
}
func (c *nullChannel) Stderr() io.ReadWriter { return nil }

var _ ssh.Channel = (*nullChannel)(nil)

// frameSetup builds a session playing in w without any network.
func frameSetup(t testing.TB, w *game.World, user string, watch bool) (*session, *render.Renderer, *nullChannel) {
	srv, err := New(testConfig(t.(*testing.T)), w)
	if err != nil {
		t.Fatal(err)
	}
	ch := &nullChannel{}
	s := &session{srv: srv, ch: ch, user: user, wake: make(chan struct{}, 1), done: make(chan struct{}), cols: 80, rows: 24}
	if watch {
		s.phase.Store(int32(phaseWatch))
	} else {
		id, err := w.Join(user)
		if err != nil {
			t.Fatal(err)
		}
		s.id.Store(uint64(id))
		s.phase.Store(int32(phasePlay))
	}
	return s, render.New(render.ANSI16, 80, 24), ch
}

// TestFrameAllocs checks the steady-state frame path (acquire, HUD, render,
// write, release) allocates nothing per frame, for a player and a spectator.
func TestFrameAllocs(t *testing.T) {
	for _, watch := range []bool{false, true} {
		w := testWorld(t, 4)
		s, r, ch := frameSetup(t, w, "allocs", watch)
		var hud render.HUD
		tick := uint64(0)
		var last uint64
		for range 50 { // warm up: spawn, first full repaint, buffers grown
			tick++
			w.Step(tick)
			last = s.frame(r, &hud, last)
		}
		stepOnly := testing.AllocsPerRun(100, func() { tick++; w.Step(tick) })
		both := testing.AllocsPerRun(100, func() {
			tick++
			w.Step(tick)
			last = s.frame(r, &hud, last)
		})
		if ch.n == 0 {
			t.Fatal("no bytes written")
		}
		if both-stepOnly > 0.5 {
			t.Errorf("spectator=%v: %.1f allocations per frame (Step alone %.1f)", watch, both-stepOnly, stepOnly)
		}
	}
}
