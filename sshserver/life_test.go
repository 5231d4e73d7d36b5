package sshserver

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"snaked/game"
	"snaked/internal/testkit"
	"snaked/render"
)

// freezable is a client-side connection whose reads can be stopped, to
// play a client that never reads.
type freezable struct {
	net.Conn
	frozen atomic.Bool
	closed chan struct{}
	once   sync.Once
}

func (f *freezable) Read(p []byte) (int, error) {
	if f.frozen.Load() {
		<-f.closed
		return 0, net.ErrClosed
	}
	return f.Conn.Read(p)
}

func (f *freezable) Close() error {
	f.once.Do(func() { close(f.closed) })
	return f.Conn.Close()
}

func TestStalledReaderDropped(t *testing.T) {
	cfg := testConfig(t)
	cfg.StallTimeout = time.Second
	cfg.SendBuffer = 4096
	h := start(t, cfg, testWorld(t, 4))

	healthy := play(t, h.dial("healthy"), 80, 24)
	healthy.waitScreen("playing")

	raw, err := net.Dial("tcp", h.addr)
	if err != nil {
		t.Fatal(err)
	}
	raw.(*net.TCPConn).SetReadBuffer(4096)
	fz := &freezable{Conn: raw, closed: make(chan struct{})}
	defer fz.Close()
	cc, chans, reqs, err := ssh.NewClientConn(fz, h.addr, clientConfig("frozen"))
	if err != nil {
		t.Fatal(err)
	}
	cl := ssh.NewClient(cc, chans, reqs)
	sess, err := cl.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	sess.RequestPty("xterm", render.MaxRows, render.MaxCols, ssh.TerminalModes{})
	stdin, _ := sess.StdinPipe()
	sess.StdoutPipe()
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	if !testkit.Eventually(5*time.Second, func() bool { return h.sessionOf("frozen") != nil }) {
		t.Fatal("frozen session never started")
	}
	frozen := h.sessionOf("frozen")
	healthy.mu.Lock()
	mark := len(healthy.stamps)
	healthy.mu.Unlock()
	fz.frozen.Store(true)
	t0 := time.Now()
	// Full repaints of a 500x200 screen fill every buffer quickly.
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(30 * time.Millisecond):
			}
			if _, err := stdin.Write([]byte{0x0c}); err != nil {
				return
			}
		}
	}()
	dropped := testkit.Eventually(15*time.Second, func() bool { return strings.Contains(h.logs.String(), "reason="+causeStalled.String()) })
	close(stop)
	took := time.Since(t0)
	if !dropped {
		t.Fatal("a client that never reads was not dropped")
	}
	t.Logf("dropped %v after freezing (stall bound %v)", took, cfg.StallTimeout)
	if !frozen.solo.Load() {
		t.Error("the stalled session was not taken out of the frame workers' lists (solo)")
	}
	// The healthy player kept getting frames at the tick rate meanwhile.
	time.Sleep(300 * time.Millisecond)
	healthy.mu.Lock()
	st := healthy.stamps[mark:]
	healthy.mu.Unlock()
	var gap time.Duration
	for i := 1; i < len(st); i++ {
		gap = max(gap, st[i].Sub(st[i-1]))
	}
	t.Logf("healthy session: %d reads while the other stalled, max gap %v", len(st), gap)
	if len(st) < 3 || gap >= cfg.StallTimeout {
		t.Errorf("healthy session starved: %d reads, max gap %v (stall bound %v)", len(st), gap, cfg.StallTimeout)
	}
	if got := counter(t, h.srv.m.stalls); got != 1 {
		t.Errorf("snaked_stall_disconnects_total = %v, want 1", got)
	}
}

// countFDs is the number of open file descriptors of this process.
func countFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

func TestAbruptDisconnects(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxHandshakesPerIP = 64
	h := start(t, cfg, testWorld(t, 2))
	play(t, h.dial("warmup"), 80, 24).waitScreen("playing")
	time.Sleep(100 * time.Millisecond)
	g0, fd0 := runtime.NumGoroutine(), countFDs()

	const n, par = 1000, 8
	var wg sync.WaitGroup
	var failed atomic.Int32
	jobs := make(chan int)
	for range par {
		wg.Go(func() {
			for i := range jobs {
				if err := abrupt(h.addr, i); err != nil {
					failed.Add(1)
				}
			}
		})
	}
	t0 := time.Now()
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	t.Logf("%d abrupt disconnects in %v (%d client-side errors)", n, time.Since(t0), failed.Load())
	if f := failed.Load(); f > n/10 {
		t.Errorf("%d of %d connections failed before their abrupt end", f, n)
	}
	ok := testkit.Eventually(20*time.Second, func() bool {
		return runtime.NumGoroutine() <= g0+2 && countFDs() <= fd0+2 && h.srv.players.Load() == 1
	})
	if !ok {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Fatalf("not back to baseline: goroutines %d (was %d), fds %d (was %d), players %d\n%s",
			runtime.NumGoroutine(), g0, countFDs(), fd0, h.srv.players.Load(), buf[:min(len(buf), 20000)])
	}
	if strings.Contains(h.logs.String(), "panic") {
		t.Error("a session panicked")
	}
}

// abrupt connects, starts playing, reads part of a frame and drops the TCP
// connection (with a reset for every other one).
func abrupt(addr string, i int) error {
	raw, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(10 * time.Second))
	cc, chans, reqs, err := ssh.NewClientConn(raw, addr, clientConfig(fmt.Sprintf("p%d", i)))
	if err != nil {
		return err
	}
	cl := ssh.NewClient(cc, chans, reqs)
	defer cl.Close()
	sess, err := cl.NewSession()
	if err != nil {
		return err
	}
	if err := sess.RequestPty("xterm", 24, 80, ssh.TerminalModes{}); err != nil {
		return err
	}
	out, _ := sess.StdoutPipe()
	sess.StdinPipe()
	if err := sess.Shell(); err != nil {
		return err
	}
	buf := make([]byte, 100+i%500)
	if _, err := io.ReadFull(out, buf); err != nil {
		return err
	}
	if i%2 == 0 {
		raw.(*net.TCPConn).SetLinger(0)
	}
	return nil
}

func TestShutdown(t *testing.T) {
	cfg := testConfig(t)
	cfg.ShutdownGrace = 2 * time.Second
	cfg.StallTimeout = 3 * time.Second
	h := start(t, cfg, testWorld(t, 2))
	tm := play(t, h.dial("stayer"), 80, 24)
	tm.waitScreen("playing")
	watcher := play(t, h.dial("watch"), 80, 24)
	// A client that never reads, connected through the whole countdown.
	raw, _ := net.Dial("tcp", h.addr)
	raw.(*net.TCPConn).SetReadBuffer(4096)
	fz := &freezable{Conn: raw, closed: make(chan struct{})}
	defer fz.Close()
	cc, chans, reqs, err := ssh.NewClientConn(fz, h.addr, clientConfig("deaf"))
	if err != nil {
		t.Fatal(err)
	}
	deaf, _ := ssh.NewClient(cc, chans, reqs).NewSession()
	deaf.RequestPty("xterm", render.MaxRows, render.MaxCols, ssh.TerminalModes{})
	deafIn, _ := deaf.StdinPipe()
	deaf.Shell()
	fz.frozen.Store(true)
	deafIn.Write([]byte{0x0c})

	h.cancel()
	t0 := time.Now()
	tm.waitScreen("SHUTTING DOWN IN")
	if code := tm.wait(); code != 0 {
		t.Errorf("exit status %d at shutdown, want 0", code)
	}
	if code := watcher.wait(); code != 0 {
		t.Errorf("spectator exit status %d at shutdown, want 0", code)
	}
	var err2 error
	select {
	case err2 = <-h.served:
		h.served <- err2
	case <-time.After(cfg.ShutdownGrace + 5*time.Second):
		t.Fatalf("Serve did not return within grace + 5 s")
	}
	t.Logf("Serve returned %v after cancel (grace %v)", time.Since(t0), cfg.ShutdownGrace)
	if err2 != nil {
		t.Errorf("Serve: %v", err2)
	}
	tm.mu.Lock()
	alt, vis, raw2 := tm.vt.AltScreen(), tm.vt.CursorVisible(), tm.raw.String()
	tm.mu.Unlock()
	if alt || !vis || !strings.Contains(raw2, "shutting down") {
		t.Errorf("after shutdown: alt screen %v, cursor visible %v, goodbye present %v", alt, vis, strings.Contains(raw2, "shutting down"))
	}
	if _, err := net.DialTimeout("tcp", h.addr, time.Second); err == nil {
		t.Error("still accepting after shutdown")
	}
}

func TestKeepAlive(t *testing.T) {
	cfg := testConfig(t)
	cfg.KeepAlive = 100 * time.Millisecond
	h := start(t, cfg, testWorld(t, 0))
	// A responsive client stays.
	good := play(t, h.dial("lively"), 80, 24)
	// A client whose SSH layer never answers global requests.
	cc, chans, reqs := rawConn(t, h, "mute")
	go func() {
		for range reqs { // read, never answered; ends when the connection does
		}
	}()
	go func() {
		for nc := range chans {
			nc.Reject(ssh.Prohibited, "")
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cc.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("unanswered keepalives did not drop the connection")
	}
	if !testkit.Eventually(5*time.Second, func() bool { return strings.Contains(h.logs.String(), "reason="+causeKeepAlive.String()) }) {
		t.Errorf("no keepalive timeout logged:\n%s", h.logs.String())
	}
	before := good.bytes()
	if !testkit.Eventually(5*time.Second, func() bool { return good.bytes() > before+100 }) {
		t.Error("the responsive client was dropped")
	}
	if h.sessionOf("lively") == nil {
		t.Error("the responsive client's session is gone")
	}
}

func TestIdlePlayerDropped(t *testing.T) {
	cfg := testConfig(t)
	cfg.IdleTimeout = 500 * time.Millisecond
	h := start(t, cfg, testWorld(t, 0))
	w := play(t, h.dial("watch"), 80, 24)
	tm := play(t, h.dial("sleepy"), 80, 24)
	if code := tm.wait(); code != 1 {
		t.Errorf("idle player exit status %d, want 1", code)
	}
	tm.mu.Lock()
	raw := tm.raw.String()
	tm.mu.Unlock()
	if !strings.Contains(raw, "without input") {
		t.Errorf("no idle message in %q", raw[max(0, len(raw)-200):])
	}
	before := w.bytes()
	if !testkit.Eventually(5*time.Second, func() bool { return w.bytes() > before+100 }) || h.sessionOf("watch") == nil {
		t.Error("the spectator was dropped as idle")
	}
}

func TestJoinScreen(t *testing.T) {
	h := start(t, testConfig(t), testWorld(t, 0))
	// A generic login gets the join screen.
	tm := play(t, h.dial("root"), 80, 24)
	tm.waitScreen("Pick a nickname")
	tm.send("bo\x7fob!") // backspace and a dropped '!'
	tm.waitScreen("Pick a nickname: bob")
	tm.send("\x15bob\r") // Ctrl-U clears, then type again
	tm.waitScreen("1 playing")
	if !testkit.Eventually(5*time.Second, func() bool { _, ok := testkit.SnakeNamed(h.w, "bob"); return ok }) {
		t.Fatal("bob never joined")
	}
	// A taken name (case-insensitive) gets the join screen with a reason.
	tm2 := play(t, h.dial("BOB"), 80, 24)
	tm2.waitScreen("is taken")
	tm2.send("\r") // empty: a guest name
	tm2.waitScreen("2 playing")
	if !testkit.Eventually(5*time.Second, func() bool {
		v := h.w.Acquire()
		defer v.Release()
		for _, s := range v.Snakes {
			if s.Used && strings.HasPrefix(s.Name, "guest") {
				return true
			}
		}
		return false
	}) {
		t.Error("empty nickname did not join as a guest")
	}
	// Leaving from the join screen restores the terminal.
	tm3 := play(t, h.dial(""), 80, 24)
	tm3.waitScreen("Pick a nickname")
	tm3.send("\x03")
	tm3.wait()
	tm3.mu.Lock()
	defer tm3.mu.Unlock()
	if tm3.vt.AltScreen() || !tm3.vt.CursorVisible() {
		t.Error("terminal not restored after leaving the join screen")
	}
	tm3.mu.Unlock()
	// A lone Esc leaves too, as the screen says: nothing follows it, so
	// after the escape timeout it is the Esc key.
	tm4 := play(t, h.dial("admin"), 80, 24)
	tm4.waitScreen("Esc or Ctrl-C leaves")
	tm4.send("\x1b")
	if code := tm4.wait(); code != 0 {
		t.Errorf("Esc: exit status %d, want 0", code)
	}
	tm3.mu.Lock() // for the deferred unlock
}

func TestFullWorld(t *testing.T) {
	gc := game.DefaultConfig()
	gc.W, gc.H, gc.MaxSnakes, gc.Bots, gc.Seed = 128, 64, 1, 0, 1
	w, err := game.New(gc)
	if err != nil {
		t.Fatal(err)
	}
	h := start(t, testConfig(t), w)
	play(t, h.dial("first"), 80, 24).waitScreen("playing")
	tm := play(t, h.dial("second"), 80, 24)
	if code := tm.wait(); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if !strings.Contains(tm.raw.String(), "the world is full") {
		t.Errorf("no full-world message: %q", tm.raw.String())
	}
}

func TestMetricsEndpoint(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	maddr := ln.Addr().String()
	ln.Close()
	cfg := testConfig(t)
	cfg.MetricsAddr = maddr
	h := start(t, cfg, testWorld(t, 0))
	play(t, h.dial("metric"), 80, 24).waitScreen("playing")
	get := func(path string) string {
		resp, err := http.Get("http://" + maddr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Errorf("%s: %s", path, resp.Status)
		}
		return string(b)
	}
	var body string
	testkit.Eventually(5*time.Second, func() bool {
		body = get("/metrics")
		return strings.Contains(body, `snaked_frames_total`) && !strings.Contains(body, "snaked_frames_total 0\n")
	})
	for _, m := range []string{`snaked_sessions{kind="player"} 1`, "snaked_tick_seconds_bucket", "snaked_render_seconds", "snaked_render_cpu_seconds", "snaked_write_seconds",
		"snaked_bytes_sent_total", `snaked_joins_total{kind="player"} 1`, "go_goroutines"} {
		if !strings.Contains(body, m) {
			t.Errorf("/metrics lacks %q", m)
		}
	}
	if !strings.Contains(get("/debug/pprof/"), "goroutine") {
		t.Error("pprof index missing")
	}
	if runtime.GOOS == "linux" {
		// One frame in cpuEvery (the cpuAt-th first) is timed on its
		// thread's clock.
		if !testkit.Eventually(3*(cpuAt+1)*time.Second/game.TicksPerSecond, func() bool {
			body = get("/metrics")
			return strings.Contains(body, "snaked_render_cpu_seconds_count") && !strings.Contains(body, "snaked_render_cpu_seconds_count 0\n")
		}) {
			t.Errorf("no frame's render CPU time sampled:\n%s", body)
		}
	}
}

func TestPanicRecovered(t *testing.T) {
	h := start(t, testConfig(t), testWorld(t, 0), withKeyHook(func(k key, r byte) {
		if k == keyRune && r == '!' {
			panic("boom")
		}
	}))
	tm := play(t, h.dial("crasher"), 80, 24)
	tm.waitScreen("playing")
	tm.send("!")
	if code := tm.wait(); code != 1 {
		t.Errorf("exit status %d after a panic, want 1", code)
	}
	tm.mu.Lock()
	alt, vis, raw := tm.vt.AltScreen(), tm.vt.CursorVisible(), tm.raw.String()
	tm.mu.Unlock()
	if alt || !vis || !strings.Contains(raw, "internal error") {
		t.Errorf("after a panic: alt screen %v, cursor visible %v, message %v", alt, vis, strings.Contains(raw, "internal error"))
	}
	if !strings.Contains(h.logs.String(), "panic in session") {
		t.Error("panic not logged")
	}
	play(t, h.dial("next"), 80, 24).waitScreen("playing")
}

func TestShutdownWithoutSessionsIsQuick(t *testing.T) {
	cfg := testConfig(t)
	cfg.ShutdownGrace = time.Minute
	h := start(t, cfg, testWorld(t, 0))
	took, err := h.stop(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Serve returned %v after cancel with no sessions (grace %v)", took, cfg.ShutdownGrace)
}

// TestKeepAliveHeard: as with OpenSSH's ClientAliveInterval, the server
// asks a client for a sign of life only after an interval without input
// from it: a client that types gets no keepalive, one that stops does.
func TestKeepAliveHeard(t *testing.T) {
	cfg := testConfig(t)
	cfg.KeepAlive = 200 * time.Millisecond
	h := start(t, cfg, testWorld(t, 0))
	cc, chans, reqs := rawConn(t, h, "typist")
	var pings atomic.Int32
	go func() {
		for r := range reqs { // ends when the connection does
			if r.Type == "keepalive@openssh.com" {
				pings.Add(1)
			}
			if r.WantReply {
				r.Reply(true, nil)
			}
		}
	}()
	none := make(chan *ssh.Request) // the client's own request loop gets nothing
	defer close(none)
	tm := play(t, ssh.NewClient(cc, chans, none), 80, 24)
	// Ten intervals of typing, a key every quarter of one.
	for range 40 {
		if _, err := tm.in.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(cfg.KeepAlive / 4)
	}
	if n := pings.Load(); n != 0 {
		t.Fatalf("%d keepalives to a client that typed all along", n)
	}
	if !testkit.Eventually(5*time.Second, func() bool { return pings.Load() > 0 }) {
		t.Fatal("no keepalive after the client fell quiet")
	}
}
