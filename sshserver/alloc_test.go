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
	srv, err := New(testConfig(t), w)
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

// BenchmarkFramePath is one player's frame through the session (HUD, acquire,
// render, write to a null channel, release) plus the world's Step.
func BenchmarkFramePath(b *testing.B) {
	w := testWorld(b, 8)
	s, r, _ := frameSetup(b, w, "bench", false)
	var hud render.HUD
	tick, last := uint64(0), uint64(0)
	b.ReportAllocs()
	id := game.ID(s.id.Load())
	for b.Loop() {
		tick++
		w.Respawn(id) // ignored while alive
		w.Step(tick)
		last = s.frame(r, &hud, last)
	}
}

// BenchmarkRenderOnly is the same Step and render without the session, the
// baseline for BenchmarkFramePath.
func BenchmarkRenderOnly(b *testing.B) {
	w := testWorld(b, 8)
	id, err := w.Join("bench")
	if err != nil {
		b.Fatal(err)
	}
	r := render.New(render.ANSI16, 80, 24)
	// The HUD the session would build (see session.frame).
	hud := render.HUD{You: id, Follow: id, ShutdownIn: -1, Hint: true, Join: "ssh -p 2222 test"}
	tick := uint64(0)
	b.ReportAllocs()
	for b.Loop() {
		tick++
		w.Respawn(id) // ignored while alive
		w.Step(tick)
		v := w.Acquire()
		r.Frame(v, &hud)
		v.Release()
	}
}
