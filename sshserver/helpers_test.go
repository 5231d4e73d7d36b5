package sshserver

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"snaked/game"
	"snaked/internal/testkit"
	"snaked/internal/vtmodel"
)

// harness is a real server on 127.0.0.1:0.
type harness struct {
	t      testing.TB
	srv    *Server
	w      *game.World
	addr   string
	logs   *testkit.SyncBuf
	cancel context.CancelFunc
	served chan error
}

// testWorld is a small world: 128x64 pixels, dense fruit, short spawn
// protection, no bots unless asked.
func testWorld(t testing.TB, bots int) *game.World {
	t.Helper()
	gc := game.DefaultConfig()
	gc.W, gc.H = 128, 64
	gc.MaxSnakes = 64
	gc.Bots = bots
	gc.Seed = 7
	gc.Fruit = 400
	gc.Protect = 1
	w, err := game.New(gc)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// testConfig has small timeouts so the whole package runs fast.
func testConfig(t testing.TB) Config {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.HostSigners = []ssh.Signer{signer}
	cfg.MaxSessions = 100
	cfg.MaxPerIP = 100
	cfg.MaxHandshakes = 64
	cfg.MaxHandshakesPerIP = 32
	cfg.ShutdownGrace = 300 * time.Millisecond
	cfg.HandshakeTimeout = 2 * time.Second
	cfg.KeepAlive = 0
	cfg.IdleTimeout = time.Minute
	cfg.StallTimeout = time.Second
	cfg.SendBuffer = 16 << 10
	cfg.JoinHint = "ssh -p 2222 test"
	return cfg
}

func start(t testing.TB, cfg Config, w *game.World, opts ...option) *harness {
	t.Helper()
	return startHost(t, cfg, w, w.Host(), opts...)
}

// withKeyHook has every key go to hook first.
func withKeyHook(hook func(k key, r byte)) option {
	return func(s *Server) { s.keyHook = hook }
}

// startHost is start for sessions that reach world w through host.
func startHost(t testing.TB, cfg Config, w *game.World, host game.Host, opts ...option) *harness {
	t.Helper()
	logs := &testkit.SyncBuf{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv, err := New(cfg, host, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, srv: srv, w: w, addr: ln.Addr().String(), logs: logs, cancel: cancel, served: make(chan error, 1)}
	// The world's clock, as the daemon's main runs it: it outlives Serve,
	// so the shutdown countdown still ticks.
	clockCtx, stopClock := context.WithCancel(context.Background())
	clockDone := make(chan struct{})
	go func() {
		defer close(clockDone)
		game.Clock{OnRound: srv.Ticked}.Run(clockCtx, w)
	}()
	go func() { h.served <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		h.stop(cfg.ShutdownGrace + 6*time.Second)
		stopClock()
		<-clockDone
	})
	return h
}

// stop cancels Serve and waits for it, at most d.
func (h *harness) stop(d time.Duration) (time.Duration, error) {
	h.cancel()
	t0 := time.Now()
	select {
	case err := <-h.served:
		h.served <- err // for later calls
		return time.Since(t0), err
	case <-time.After(d):
		h.t.Errorf("Serve did not return within %v", d)
		return d, errors.New("timeout")
	}
}

// keylessAuth is how a client without a key gets in: keyboard-interactive,
// answering the server's zero questions.
var keylessAuth = ssh.KeyboardInteractive(func(_, _ string, qs []string, _ []bool) ([]string, error) {
	return make([]string, len(qs)), nil
})

// clientConfig is a keyless client's config for user.
func clientConfig(user string) *ssh.ClientConfig {
	cc := &ssh.ClientConfig{
		User:            user,
		Auth:            []ssh.AuthMethod{keylessAuth},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(),
		Timeout:         5 * time.Second,
	}
	cc.KeyExchanges = []string{ssh.KeyExchangeCurve25519}
	return cc
}

// dial connects as user.
func (h *harness) dial(user string) *ssh.Client {
	h.t.Helper()
	c, err := ssh.Dial("tcp", h.addr, clientConfig(user))
	if err != nil {
		h.t.Fatalf("dial as %q: %v", user, err)
	}
	h.t.Cleanup(func() { c.Close() })
	return c
}

// term is a client session with a pty whose output feeds a terminal model.
type term struct {
	t    testing.TB
	sess *ssh.Session
	c    *ssh.Client // the connection, when play opened the session; wait closes it
	in   io.WriteCloser
	errb *testkit.SyncBuf

	mu     sync.Mutex // guards vt, raw, reads, stamps
	vt     *vtmodel.Term
	raw    bytes.Buffer
	reads  int
	stamps []time.Time
	done   chan struct{} // closed when stdout ends
}

// play opens a pty session (cols x rows, TERM xterm) and starts the shell.
func play(t testing.TB, c *ssh.Client, cols, rows int) *term {
	t.Helper()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.RequestPty("xterm", rows, cols, ssh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	tm := shell(t, sess, cols, rows)
	tm.c = c
	return tm
}

// shell starts the shell on sess and pumps its output.
func shell(t testing.TB, sess *ssh.Session, cols, rows int) *term {
	t.Helper()
	tm := &term{t: t, sess: sess, vt: vtmodel.New(cols, rows), done: make(chan struct{}), errb: &testkit.SyncBuf{}}
	in, err := sess.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := sess.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	sess.Stderr = tm.errb
	tm.in = in
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(tm.done)
		buf := make([]byte, 32<<10)
		for {
			n, err := out.Read(buf)
			if n > 0 {
				tm.mu.Lock()
				tm.vt.Write(buf[:n])
				tm.raw.Write(buf[:n])
				tm.reads++
				tm.stamps = append(tm.stamps, time.Now())
				tm.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	return tm
}

// send types s.
func (tm *term) send(s string) {
	tm.t.Helper()
	if _, err := tm.in.Write([]byte(s)); err != nil {
		tm.t.Fatalf("send %q: %v", s, err)
	}
}

// screen returns the model's rows joined by newlines.
func (tm *term) screen() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	_, rows := tm.vt.Size()
	var b strings.Builder
	for y := range rows {
		b.WriteString(tm.vt.Line(y))
		b.WriteByte('\n')
	}
	return b.String()
}

// bytes is the number of output bytes so far.
func (tm *term) bytes() int {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.raw.Len()
}

// waitScreen waits (at most 10 s) until the screen contains s.
func (tm *term) waitScreen(s string) {
	tm.t.Helper()
	if !testkit.Eventually(10*time.Second, func() bool { return strings.Contains(tm.screen(), s) }) {
		tm.t.Fatalf("screen never showed %q; it shows:\n%s", s, tm.screen())
	}
}

// wait waits for the session's end and returns its exit status; then,
// like OpenSSH and PuTTY once their session is over, it closes the
// connection play opened the session on.
func (tm *term) wait() int {
	tm.t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- tm.sess.Wait() }()
	select {
	case err := <-errc:
		<-tm.done
		if tm.c != nil {
			tm.c.Close()
		}
		var ee *ssh.ExitError
		switch {
		case err == nil:
			return 0
		case errors.As(err, &ee):
			return ee.ExitStatus()
		default:
			tm.t.Fatalf("session ended without exit status: %v", err)
		}
	case <-time.After(10 * time.Second):
		tm.t.Fatal("session did not end")
	}
	return -1
}

// sessionCount is how many live sessions user has.
func (h *harness) sessionCount(user string) int {
	h.srv.mu.Lock()
	defer h.srv.mu.Unlock()
	n := 0
	for _, s := range h.srv.live {
		if s.user == user {
			n++
		}
	}
	return n
}

// sessionOf finds the server's session for user.
func (h *harness) sessionOf(user string) *session {
	h.srv.mu.Lock()
	defer h.srv.mu.Unlock()
	for _, s := range h.srv.live {
		if s.user == user {
			return s
		}
	}
	return nil
}

// dialFrom connects from the loopback address src (e.g. "127.0.0.2").
func (h *harness) dialFrom(src, user string) (*ssh.Client, error) {
	c, _, err := h.dialBanner(src, user)
	return c, err
}

// dialBanner is dialFrom that also returns the SSH banner the server sent.
func (h *harness) dialBanner(src, user string) (*ssh.Client, string, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	raw, err := d.Dial("tcp", h.addr)
	if err != nil {
		return nil, "", err
	}
	var banner string
	cc := clientConfig(user)
	cc.BannerCallback = func(msg string) error { banner += msg; return nil }
	c, chans, reqs, err := ssh.NewClientConn(raw, h.addr, cc)
	if err != nil {
		raw.Close()
		return nil, banner, err
	}
	cl := ssh.NewClient(c, chans, reqs)
	h.t.Cleanup(func() { cl.Close() })
	return cl, banner, nil
}

// rawFrom opens a bare TCP connection from src that never speaks SSH.
func (h *harness) rawFrom(src string) net.Conn {
	h.t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", h.addr)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { c.Close() })
	return c
}

// closedWithin reports whether the peer closes c within d (reads are
// discarded).
func closedWithin(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 4096)
	for {
		_, err := c.Read(buf)
		if err != nil {
			var ne net.Error
			return !(errors.As(err, &ne) && ne.Timeout())
		}
	}
}

// rawConn is an SSH client connection to h as user whose requests and
// channels the test serves itself; closed at the test's end.
func rawConn(t *testing.T, h *harness, user string) (ssh.Conn, <-chan ssh.NewChannel, <-chan *ssh.Request) {
	t.Helper()
	raw, err := net.Dial("tcp", h.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	cc, chans, reqs, err := ssh.NewClientConn(raw, h.addr, clientConfig(user))
	if err != nil {
		t.Fatal(err)
	}
	return cc, chans, reqs
}
