package sshserver

import (
	"bytes"
	"io"
	"testing"

	"golang.org/x/crypto/ssh"

	"snaked/game"
	"snaked/render"
)

// nullChannel is an ssh.Channel that swallows writes (and keeps them, when
// asked).
type nullChannel struct {
	n      int
	writes int // Write calls
	most   int // the longest Write
	keep   bool
	got    []byte
}

func (c *nullChannel) Read([]byte) (int, error) { return 0, io.EOF }
func (c *nullChannel) Write(p []byte) (int, error) {
	c.n += len(p)
	c.writes++
	c.most = max(c.most, len(p))
	if c.keep {
		c.got = append(c.got, p...)
	}
	return len(p), nil
}
func (c *nullChannel) Close() error      { return nil }
func (c *nullChannel) CloseWrite() error { return nil }
func (c *nullChannel) SendRequest(string, bool, []byte) (bool, error) {
	return false, nil
}
func (c *nullChannel) Stderr() io.ReadWriter { return nil }

var _ ssh.Channel = (*nullChannel)(nil)

// frameSetup builds a session playing in w without any network.
func frameSetup(t testing.TB, w *game.World, user string, watch bool) (*session, *canvas, *nullChannel) {
	srv, err := New(testConfig(t), w.Host())
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
		s.nick = user
		s.phase.Store(int32(phasePlay))
	}
	c := &canvas{prof: render.ANSI16}
	c.fit(srv, s.cols, s.rows)
	return s, c, ch
}

// TestFrameAllocs checks the steady-state frame path (acquire, HUD, render,
// write, release) allocates nothing per frame, for a player and a spectator.
func TestFrameAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector; make test runs this test without it")
	}
	for _, watch := range []bool{false, true} {
		w := testWorld(t, 4)
		s, r, ch := frameSetup(t, w, "allocs", watch)
		var hud render.HUD
		tick := uint64(0)
		var last uint64
		for range 50 { // warm up: spawn, first full repaint, buffers grown
			tick++
			w.Step(tick)
			s.frame(r, &hud, &last)
		}
		stepOnly := testing.AllocsPerRun(100, func() { tick++; w.Step(tick) })
		both := testing.AllocsPerRun(100, func() {
			tick++
			w.Step(tick)
			s.frame(r, &hud, &last)
		})
		if ch.n == 0 {
			t.Fatal("no bytes written")
		}
		if both-stepOnly > 0.5 {
			t.Errorf("spectator=%v: %.1f allocations per frame (Step alone %.1f)", watch, both-stepOnly, stepOnly)
		}
	}
}

// benchSetup is the shared start of BenchmarkFramePath and
// BenchmarkRenderOnly: a world with 8 bots, one player session, and the HUD
// exactly as the session's writer builds it (filled by one frame).
func benchSetup(b *testing.B) (*game.World, *session, *canvas, *render.HUD, uint64) {
	w := testWorld(b, 8)
	s, r, _ := frameSetup(b, w, "bench", false)
	hud := &render.HUD{Join: s.srv.cfg.JoinHint}
	w.Step(1)
	var last uint64
	s.frame(r, hud, &last)
	return w, s, r, hud, last
}

// BenchmarkFramePath is one player's frame through the session (HUD, acquire,
// render, write to a null channel, release) plus the world's Step.
func BenchmarkFramePath(b *testing.B) {
	w, s, r, hud, tick := benchSetup(b)
	last := tick
	id := game.ID(s.id.Load())
	b.ReportAllocs()
	for b.Loop() {
		tick++
		w.Respawn(id) // ignored while alive
		w.Step(tick)
		s.frame(r, hud, &last)
	}
}

// BenchmarkRenderOnly is the same Step and render on the same world and HUD
// without the session (no HUD refresh, metrics or write): the baseline for
// BenchmarkFramePath. The difference is the session's own cost per frame.
func BenchmarkRenderOnly(b *testing.B) {
	w, s, r, hud, tick := benchSetup(b)
	id := game.ID(s.id.Load())
	b.ReportAllocs()
	for b.Loop() {
		tick++
		w.Respawn(id) // ignored while alive
		w.Step(tick)
		v := w.Acquire()
		r.r.Frame(v, hud)
		v.Release()
	}
}

// TestBenchBaselineAlike: the two benchmarks draw the same frames, byte for
// byte, so their difference is the session's cost and nothing else.
func TestBenchBaselineAlike(t *testing.T) {
	var outs [2][]byte
	for k := range outs {
		w := testWorld(t, 8)
		s, r, ch := frameSetup(t, w, "bench", false)
		hud := &render.HUD{Join: s.srv.cfg.JoinHint}
		ch.keep = true
		var last uint64
		for tick := uint64(1); tick <= 60; tick++ {
			w.Step(tick)
			if k == 0 || tick == 1 {
				s.frame(r, hud, &last)
				continue
			}
			v := w.Acquire()
			ch.Write(r.r.Frame(v, hud))
			v.Release()
		}
		outs[k] = ch.got
	}
	if len(outs[0]) == 0 || string(outs[0]) != string(outs[1]) {
		t.Errorf("session path wrote %d bytes, render-only %d: they differ", len(outs[0]), len(outs[1]))
	}
}

// TestWriteChunks: a frame goes to the channel in one Write up to
// writeChunk bytes and in pieces of at most writeChunk beyond, in order.
func TestWriteChunks(t *testing.T) {
	s, _, ch := frameSetup(t, testWorld(t, 0), "chunks", true)
	ch.keep = true
	for _, c := range []struct{ n, writes int }{
		{1, 1}, {writeChunk - 1, 1}, {writeChunk, 1}, {writeChunk + 1, 2}, {3*writeChunk + 5, 4},
	} {
		p := make([]byte, c.n)
		for i := range p {
			p[i] = byte(i * 7)
		}
		ch.got, ch.writes, ch.most = ch.got[:0], 0, 0
		if err := s.write(p); err != nil {
			t.Fatal(err)
		}
		if ch.writes != c.writes || ch.most > writeChunk || !bytes.Equal(ch.got, p) {
			t.Errorf("%d bytes: %d writes (want %d), longest %d, same bytes %v", c.n, ch.writes, c.writes, ch.most, bytes.Equal(ch.got, p))
		}
	}
}
