package sshserver

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"snaked/game"
	"snaked/internal/testkit"
	"snaked/render"
)

// perpendicular returns a key that turns a snake heading d by 90 degrees,
// and the heading it yields.
func perpendicular(d game.Dir) (string, game.Dir) {
	if d == game.Up || d == game.Down {
		return "\x1b[C", game.Right // arrow right
	}
	return "j", game.Down // hjkl down
}

// waitSnake waits until alice's snake satisfies cond.
func waitSnake(t *testing.T, w *game.World, name, what string, cond func(testkit.Snake) bool) testkit.Snake {
	t.Helper()
	var got testkit.Snake
	if !testkit.Eventually(10*time.Second, func() bool {
		s, ok := testkit.SnakeNamed(w, name)
		got = s
		return ok && cond(s)
	}) {
		t.Fatalf("%s never happened; last seen: %+v", what, got)
	}
	return got
}

func TestPlay(t *testing.T) {
	h := start(t, testConfig(t), testWorld(t, 0))
	tm := play(t, h.dial("alice"), 80, 24)

	// Frames arrive and the banner names the game.
	tm.waitScreen("1 playing")
	s0 := waitSnake(t, h.w, "alice", "join", func(s testkit.Snake) bool { return s.Alive })

	// It moves, and (fruit is dense) it eats.
	waitSnake(t, h.w, "alice", "moving", func(s testkit.Snake) bool { return s.Head != s0.Head })
	waitSnake(t, h.w, "alice", "eating", func(s testkit.Snake) bool { return s.Length > s0.Length })

	// Steering: an escape sequence split across two writes still turns.
	cur, _ := testkit.SnakeNamed(h.w, "alice")
	k, want := perpendicular(cur.Dir)
	if len(k) > 1 {
		tm.send(k[:2])
		time.Sleep(20 * time.Millisecond)
		tm.send(k[2:])
	} else {
		tm.send(k)
	}
	waitSnake(t, h.w, "alice", "turn", func(s testkit.Snake) bool { return s.Dir == want })

	// Die: a tight square into its own body (protection is one tick).
	die := map[game.Dir][3]string{
		game.Right: {"s", "a", "w"},
		game.Down:  {"a", "w", "d"},
		game.Left:  {"w", "d", "s"},
		game.Up:    {"d", "s", "a"},
	}
	for try := 0; try < 5; try++ {
		cur, _ = testkit.SnakeNamed(h.w, "alice")
		if !cur.Alive {
			break
		}
		seq := die[cur.Dir]
		tm.send(seq[0] + seq[1])
		testkit.Eventually(2*time.Second, func() bool {
			s, _ := testkit.SnakeNamed(h.w, "alice")
			return !s.Alive || s.Dir == dirOf(keyRune, seq[1][0])
		})
		tm.send(seq[2])
		testkit.Eventually(time.Second, func() bool { s, _ := testkit.SnakeNamed(h.w, "alice"); return !s.Alive })
	}
	waitSnake(t, h.w, "alice", "death", func(s testkit.Snake) bool { return !s.Alive })
	tm.waitScreen("respawn")

	// Respawn with enter.
	tm.send("\r")
	waitSnake(t, h.w, "alice", "respawn", func(s testkit.Snake) bool { return s.Alive })

	// Quit: exit status 0, terminal restored, goodbye printed.
	tm.send("q")
	if code := tm.wait(); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	tm.mu.Lock()
	alt, cur2, unsup := tm.vt.AltScreen(), tm.vt.CursorVisible(), tm.vt.Unsupported()
	raw := tm.raw.String()
	tm.mu.Unlock()
	if alt || !cur2 {
		t.Errorf("terminal not restored: alt screen %v, cursor visible %v", alt, cur2)
	}
	if len(unsup) > 0 {
		t.Errorf("terminal model saw unsupported output: %q", unsup)
	}
	if !strings.Contains(raw, "Thanks for playing snaked, alice") {
		t.Errorf("no goodbye in output tail %q", raw[max(0, len(raw)-200):])
	}
	if _, ok := testkit.SnakeNamed(h.w, "alice"); ok {
		if !testkit.Eventually(2*time.Second, func() bool { _, ok := testkit.SnakeNamed(h.w, "alice"); return !ok }) {
			t.Error("alice's snake stayed in the world after quit")
		}
	}
	if !testkit.Eventually(2*time.Second, func() bool {
		logs := h.logs.String()
		return strings.Contains(logs, `msg=connect`) && strings.Contains(logs, `reason=quit`)
	}) {
		t.Errorf("want connect and disconnect log lines, got:\n%s", h.logs.String())
	}
}

func TestSpectate(t *testing.T) {
	h := start(t, testConfig(t), testWorld(t, 3))
	tm := play(t, h.dial("watch"), 80, 24)
	if !testkit.Eventually(10*time.Second, func() bool { return tm.bytes() > 500 }) {
		t.Fatal("no frames for the spectator")
	}
	used := func() (n, players int) {
		v := h.w.Acquire()
		defer v.Release()
		for _, s := range v.Snakes {
			if s.Used {
				n++
			}
		}
		return n, v.Players
	}
	n0, p0 := used()
	// Every key a player might use, plus the spectator's own.
	tm.send("wasdhjkl \r\x1b[A\x1b[B\x1b[C\x1b[D\tnpf?\x0c?")
	before := tm.bytes()
	if !testkit.Eventually(5*time.Second, func() bool { return tm.bytes() > before+200 }) {
		t.Fatal("frames stopped after spectator input")
	}
	n1, p1 := used()
	if n1 != n0 || p0 != 0 || p1 != 0 {
		t.Errorf("spectator changed the world: snakes %d -> %d, players %d -> %d", n0, n1, p0, p1)
	}
	if got := h.srv.spectators.Load(); got != 1 {
		t.Errorf("spectators = %d, want 1", got)
	}
	if _, ok := testkit.SnakeNamed(h.w, "watch"); ok {
		t.Error("the spectator got a snake")
	}
	// Free camera, then follow again: the session keeps drawing.
	s := h.sessionOf("watch")
	tm.send("\x1b[C\x1b[C")
	if !testkit.Eventually(5*time.Second, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.free }) {
		t.Error("arrows did not free the camera")
	}
	tm.send("f")
	if !testkit.Eventually(5*time.Second, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return !s.free }) {
		t.Error("f did not follow again")
	}
	tm.send("\x03")
	if code := tm.wait(); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
}

// TestRepaintsPacedByTick: a client flooding Ctrl-L, '?' and window-changes
// gets at most one frame per tick, and its bytes per second stay within
// one full repaint per tick.
func TestRepaintsPacedByTick(t *testing.T) {
	h := start(t, testConfig(t), testWorld(t, 4))
	c := h.dial("flood")
	tm := play(t, c, 200, 60)
	tm.waitScreen("1 playing")
	// The biggest frame the session can get: a full repaint at 200x60.
	full := func() int {
		r := render.New(render.ANSI256, 200, 60)
		v := h.w.Acquire()
		defer v.Release()
		id := game.ID(h.sessionOf("flood").id.Load())
		return len(r.Frame(v, &render.HUD{You: id, Follow: id, Help: true, ShutdownIn: -1}))
	}()

	const window = 2 * time.Second
	frames0, bytes0 := counter(t, h.srv.m.frames), counter(t, h.srv.m.bytes)
	t0 := time.Now()
	keys := []string{"\x0c", "?", "\x0c", "\x0c"}
	for i := 0; time.Since(t0) < window; i++ {
		tm.send(keys[i%len(keys)])
		if i%8 == 0 {
			cols := 160 + i%40
			if err := tm.sess.WindowChange(60, cols); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(5 * time.Millisecond) // 200 a second
	}
	secs := time.Since(t0).Seconds()
	// what the server wrote in the window, frames and bytes alike
	frames, bytes := counter(t, h.srv.m.frames)-frames0, counter(t, h.srv.m.bytes)-bytes0
	t.Logf("%.0f frames, %.0f bytes in %.2f s (full repaint %d B)", frames, bytes, secs, full)
	if rate := frames / secs; rate > 11 {
		t.Errorf("%.1f frames a second, want at most 11", rate)
	}
	if rate := bytes / secs; rate > 11*float64(full) {
		t.Errorf("%.0f B/s, more than a full repaint (%d B) per tick", rate, full)
	}
	if frames < 5 {
		t.Errorf("only %.0f frames in %.1f s: the session stopped drawing", frames, secs)
	}
}

// counter reads a counter's value.
func counter(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// TestTagsKey: t hides the name tags of other snakes and shows them again,
// for players and spectators.
func TestTagsKey(t *testing.T) {
	h := start(t, testConfig(t), testWorld(t, 2))
	for _, user := range []string{"tagger", "watch"} {
		tm := play(t, h.dial(user), 80, 24)
		tm.waitScreen("playing")
		s := h.sessionOf(user)
		hidden := func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.hideTags }
		if hidden() {
			t.Fatalf("%s: tags hidden from the start", user)
		}
		tm.send("t")
		if !testkit.Eventually(5*time.Second, hidden) {
			t.Fatalf("%s: t did not hide the tags", user)
		}
		tm.send("T")
		if !testkit.Eventually(5*time.Second, func() bool { return !hidden() }) {
			t.Fatalf("%s: T did not show the tags again", user)
		}
	}
}

// TestGoodbyeWaitsForDisconnect: after the goodbye the server leaves the
// connection to the client for a moment, so that the client disconnects
// itself (a server that drops it first makes PuTTY report "Remote side
// unexpectedly closed network connection"), and drops it itself about a
// second after the goodbye when the client stays.
func TestGoodbyeWaitsForDisconnect(t *testing.T) {
	h := start(t, testConfig(t), testWorld(t, 0))
	c := h.dial("gus")
	tm := play(t, c, 80, 24)
	tm.waitScreen("playing")
	tm.send("q")
	errc := make(chan error, 1)
	go func() { errc <- tm.sess.Wait() }()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("session: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end after q")
	}
	ended := time.Now()
	time.Sleep(100 * time.Millisecond)
	if _, _, err := c.SendRequest("keepalive@openssh.com", true, nil); err != nil {
		t.Fatalf("the server dropped the connection right after the goodbye: %v", err)
	}
	gone := make(chan struct{})
	go func() {
		c.Wait()
		close(gone)
	}()
	select {
	case <-gone:
		if d := time.Since(ended); d < 500*time.Millisecond {
			t.Errorf("connection dropped %v after the goodbye", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the server kept a connection whose client stayed after the goodbye")
	}
}
