package sshserver

import (
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"golang.org/x/crypto/ssh"

	"snaked/game"
	"snaked/internal/testkit"
	"snaked/internal/vtmodel"
	"snaked/render"
)

func TestWindowChangesBeforeShell(t *testing.T) {
	h := start(t, testConfig(t), testWorld(t, 0))
	c := h.dial("wendy")
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.RequestPty("xterm", 24, 80, ssh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if err := sess.WindowChange(30+i, 100+i); err != nil {
			t.Fatal(err)
		}
	}
	errc := make(chan error, 1)
	go func() {
		tm := shell(t, sess, 139, 69)
		errc <- nil
		_ = tm
	}()
	select {
	case <-errc:
	case <-time.After(10 * time.Second):
		t.Fatal("shell was not answered after 40 window-changes")
	}
	s := h.sessionOf("wendy")
	if !testkit.Eventually(5*time.Second, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.cols == 139 && s.rows == 69
	}) {
		t.Errorf("size %dx%d, want the last window-change 139x69", s.cols, s.rows)
	}
	// A window-change while playing is applied too.
	sess.WindowChange(25, 90)
	if !testkit.Eventually(5*time.Second, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.cols == 90 && s.rows == 25 }) {
		t.Error("window-change during play not applied")
	}
}

func TestEnvFlood(t *testing.T) {
	h := start(t, testConfig(t), testWorld(t, 0))
	c := h.dial("envy")
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 200)
	for i := range 5000 {
		name := "LC_FLOOD" + string(rune('A'+i%26)) + string(rune('A'+i/26%26))
		p := ssh.Marshal(struct{ Name, Value string }{name, big})
		if _, err := sess.SendRequest("env", false, p); err != nil {
			t.Fatal(err)
		}
	}
	huge := ssh.Marshal(struct{ Name, Value string }{"LANG", strings.Repeat("y", 100<<10)})
	sess.SendRequest("env", false, huge)
	if ok, _ := sess.SendRequest("env", true, ssh.Marshal(struct{ Name, Value string }{"COLORTERM", "truecolor"})); ok {
		t.Error("env request accepted after the flood")
	}
	if err := sess.RequestPty("xterm", 24, 80, ssh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	tm := shell(t, sess, 80, 24)
	tm.waitScreen("playing")
	s := h.sessionOf("envy")
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := 0
	for _, e := range s.env {
		kept += len(e)
	}
	if len(s.env) > maxEnvKept || kept > maxEnvKept*(maxEnvValue+40) {
		t.Errorf("kept %d env vars (%d bytes), bound is %d", len(s.env), kept, maxEnvKept)
	}
	if s.envReqs < 5000 {
		t.Errorf("server saw %d env requests, want all 5002 processed", s.envReqs)
	}
}

func TestOneSessionPerConnection(t *testing.T) {
	h := start(t, testConfig(t), testWorld(t, 0))
	c := h.dial("solo")
	tm := play(t, c, 80, 24)
	if _, err := c.NewSession(); err == nil || !strings.Contains(err.Error(), "one session per connection") {
		t.Errorf("second session: err %v, want refusal", err)
	}
	tm.waitScreen("playing")
	if n := h.srv.players.Load(); n != 1 {
		t.Errorf("players = %d, want 1", n)
	}
}

func TestRefusedRequests(t *testing.T) {
	h := start(t, testConfig(t), testWorld(t, 0))
	c := h.dial("mallory")

	// exec runs nothing: one line on stderr and exit status 1.
	sess, _ := c.NewSession()
	var stderr testkit.SyncBuf
	sess.Stderr = &stderr
	err := sess.Run("cat /etc/passwd")
	var ee *ssh.ExitError
	if !errors.As(err, &ee) || ee.ExitStatus() != 1 {
		t.Errorf("exec: %v, want exit status 1", err)
	}
	if !strings.Contains(stderr.String(), "snaked is a game: connect with ssh -p 2222 test") {
		t.Errorf("exec stderr %q", stderr.String())
	}

	// No pty: the same line and exit status 1.
	c2 := h.dial("mallory")
	sess, _ = c2.NewSession()
	stderr = testkit.SyncBuf{}
	sess.Stderr = &stderr
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	if err := sess.Wait(); !errors.As(err, &ee) || ee.ExitStatus() != 1 {
		t.Errorf("shell without pty: %v, want exit status 1", err)
	}
	if !strings.Contains(stderr.String(), "snaked is a game") {
		t.Errorf("no-pty stderr %q", stderr.String())
	}

	c3 := h.dial("mallory")
	sess, _ = c3.NewSession()
	if err := sess.RequestSubsystem("sftp"); err == nil {
		t.Error("subsystem accepted")
	}
	for _, req := range []string{"auth-agent-req@openssh.com", "x11-req"} {
		if ok, err := sess.SendRequest(req, true, nil); ok || err != nil {
			t.Errorf("%s: ok %v err %v, want refused", req, ok, err)
		}
	}
	if ln, err := c3.Listen("tcp", "127.0.0.1:0"); err == nil {
		ln.Close()
		t.Error("remote port forwarding accepted")
	}
	if conn, err := c3.Dial("tcp", h.addr); err == nil {
		conn.Close()
		t.Error("direct-tcpip (local forwarding) accepted")
	}
	if _, _, err := c3.OpenChannel("auth-agent@openssh.com", nil); err == nil {
		t.Error("agent channel accepted")
	}
	if n := h.srv.players.Load(); n != 0 {
		t.Errorf("players = %d after refused requests", n)
	}
}

func TestPtySizesClamped(t *testing.T) {
	h := start(t, testConfig(t), testWorld(t, 0))
	c := h.dial("tiny")
	sess, _ := c.NewSession()
	if err := sess.RequestPty("xterm;rm -rf", 0, 0, ssh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	tm := shell(t, sess, 1, 1)
	s := h.sessionOf("tiny")
	get := func() (int, int, string) { s.mu.Lock(); defer s.mu.Unlock(); return s.cols, s.rows, s.term }
	if cols, rows, term := get(); cols != 1 || rows != 1 || term != "" {
		t.Errorf("pty 0x0 TERM %q: got %dx%d TERM %q, want 1x1 and TERM dropped", "xterm;rm -rf", cols, rows, term)
	}
	sess.WindowChange(4294967295, 4294967295)
	if !testkit.Eventually(5*time.Second, func() bool { c, r, _ := get(); return c == render.MaxCols && r == render.MaxRows }) {
		c, r, _ := get()
		t.Errorf("4-billion window-change: %dx%d, want %dx%d", c, r, render.MaxCols, render.MaxRows)
	}
	before := tm.bytes()
	if !testkit.Eventually(5*time.Second, func() bool { return tm.bytes() > before }) {
		t.Error("no frames after the clamp")
	}
	sess.WindowChange(0, 0)
	if !testkit.Eventually(5*time.Second, func() bool { c, r, _ := get(); return c == 1 && r == 1 }) {
		t.Error("0x0 window-change not clamped to 1x1")
	}
	if !validTerm("xterm-256color") || validTerm(strings.Repeat("x", 65)) || validTerm("a b") || validTerm("") {
		t.Error("validTerm")
	}
}

func TestHostileUsername(t *testing.T) {
	h := start(t, testConfig(t), testWorld(t, 0))
	var b strings.Builder
	for b.Len() < 3000 {
		b.WriteString("\x1b[31m\x1b]0;pwn\x07\u202e\u2066\x00\r\n\x08\x7f\u200fZ")
	}
	user := b.String()
	c := h.dial(user)
	tm := play(t, c, 80, 24)
	tm.waitScreen("1 playing")
	var name string
	testkit.Eventually(5*time.Second, func() bool {
		v := h.w.Acquire()
		defer v.Release()
		for _, s := range v.Snakes {
			if s.Used && !s.Bot {
				name = s.Name
			}
		}
		return name != ""
	})
	if !regexp.MustCompile(`^[A-Za-z0-9_-]{1,16}$`).MatchString(name) {
		t.Errorf("nickname %q is not sanitised", name)
	}
	logs := h.logs.String()
	for _, r := range logs {
		if r != '\n' && (r > unicode.MaxASCII || unicode.IsControl(r)) {
			t.Fatalf("log holds raw %U", r)
		}
	}
	if !strings.Contains(logs, `\x1b[31m`) || !strings.Contains(logs, `bytes)`) {
		t.Errorf("log does not show the quoted, cut user name:\n%s", logs)
	}
	for _, line := range strings.Split(logs, "\n") {
		if len(line) > 1024 {
			t.Errorf("log line of %d bytes", len(line))
		}
	}
}

func TestKexOffer(t *testing.T) {
	h := start(t, testConfig(t), testWorld(t, 0))
	for _, kex := range []string{ssh.InsecureKeyExchangeDH14SHA1, ssh.KeyExchangeDH14SHA256, ssh.KeyExchangeECDHP256} {
		cc := clientConfig("old")
		cc.KeyExchanges = []string{kex}
		if c, err := ssh.Dial("tcp", h.addr, cc); err == nil {
			c.Close()
			t.Errorf("kex %s accepted", kex)
		}
	}
	cc := clientConfig("new")
	cc.KeyExchanges = []string{ssh.KeyExchangeMLKEM768X25519}
	c, err := ssh.Dial("tcp", h.addr, cc)
	if err != nil {
		t.Fatalf("mlkem768x25519: %v", err)
	}
	c.Close()
}

func TestSlowlorisHandshake(t *testing.T) {
	cfg := testConfig(t)
	cfg.HandshakeTimeout = 500 * time.Millisecond
	h := start(t, cfg, testWorld(t, 0))
	c := h.rawFrom("127.0.0.1")
	t0 := time.Now()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for _, b := range []byte("SSH-2.0-slowloris\r\n") {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := c.Write([]byte{b}); err != nil {
				return
			}
		}
	}()
	if !closedWithin(c, 10*time.Second) {
		t.Fatal("slow handshake never closed")
	}
	if d := time.Since(t0); d < cfg.HandshakeTimeout/2 {
		t.Errorf("closed after %v, before the %v deadline", d, cfg.HandshakeTimeout)
	}
	// A connection that authenticates but opens no session is closed too.
	cl := h.dial("idle")
	done := make(chan error, 1)
	go func() { done <- cl.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Error("connection without a session was never closed")
	}
	// And one that opens a session but never asks for a shell.
	cl = h.dial("noshell")
	if _, err := cl.NewSession(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cl.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Error("session without a shell was never closed")
	}
}

func TestUnauthCap(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxHandshakes = 6
	cfg.MaxHandshakesPerIP = 2
	cfg.HandshakeQueue = 1
	cfg.HandshakeTimeout = 5 * time.Second
	h := start(t, cfg, testWorld(t, 0))
	var held []net.Conn
	refused := 0
	for _, ip := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"} {
		for range 4 {
			c := h.rawFrom(ip)
			held = append(held, c)
		}
		// Two handshakes run, one waits in the queue; the fourth from one
		// address is refused at once.
		if closedWithin(held[len(held)-1], 2*time.Second) {
			refused++
		}
	}
	if refused != 4 {
		t.Errorf("%d of 4 over-the-queue connections refused", refused)
	}
	if n := h.srv.unauth.len(); n > cfg.MaxHandshakes {
		t.Errorf("%d pending handshakes, cap %d", n, cfg.MaxHandshakes)
	}
	// A real player still gets in while the stalled handshakes are pending.
	c, err := h.dialFrom("127.0.0.1", "real")
	if err != nil {
		t.Fatalf("real client locked out: %v", err)
	}
	if n := h.srv.unauth.len(); n < cfg.MaxHandshakes-1 {
		t.Errorf("only %d stalled handshakes pending; the test did not fill the cap", n)
	}
	tm := play(t, c, 80, 24)
	tm.waitScreen("playing")
}

// TestConnectionCaps: past MaxPerIP or MaxSessions a client is told why,
// in the SSH banner before authentication and in the refusal of its
// session channel.
func TestConnectionCaps(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxSessions = 2
	cfg.MaxPerIP = 1
	h := start(t, cfg, testWorld(t, 0))
	a, _, err := h.dialBanner("127.0.0.1", "a1")
	if err != nil {
		t.Fatal(err)
	}
	play(t, a, 80, 24).waitScreen("playing")
	refused := func(src, user, want string) {
		t.Helper()
		c, banner, err := h.dialBanner(src, user)
		if err == nil {
			_, err = c.NewSession()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s from %s: session error %v, want it to say %q", user, src, err, want)
		}
		if !strings.Contains(banner, want) || strings.Count(banner, "\n") != 1 {
			t.Errorf("%s from %s: banner %q, want one line saying %q", user, src, banner, want)
		}
	}
	refused("127.0.0.1", "b1", "too many connections from your address")
	c, banner, err := h.dialBanner("127.0.0.2", "c1")
	if err != nil {
		t.Fatal(err)
	}
	if banner != "" {
		t.Errorf("admitted client got banner %q", banner)
	}
	play(t, c, 80, 24).waitScreen("2 playing")
	refused("127.0.0.3", "d1", "the server is full")
}

func TestChannelOpenFlood(t *testing.T) {
	h := start(t, testConfig(t), testWorld(t, 0))
	c := h.dial("opener")
	play(t, c, 80, 24).waitScreen("playing")
	closed := false
	for range 100 {
		if _, _, err := c.OpenChannel("direct-tcpip", nil); err != nil && !strings.Contains(err.Error(), "snaked serves a game only") {
			closed = true
			break
		}
	}
	if !closed {
		t.Error("100 refused channel opens did not close the connection")
	}
}

// lightPlayer is a player that only joins and drains its output: enough to
// hold a session the way a real client does, cheaply.
func lightPlayer(addr, src, user string) (*ssh.Client, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	raw, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	c, chans, reqs, err := ssh.NewClientConn(raw, addr, clientConfig(user))
	if err != nil {
		raw.Close()
		return nil, err
	}
	cl := ssh.NewClient(c, chans, reqs)
	sess, err := cl.NewSession()
	if err == nil {
		err = sess.RequestPty("xterm", 24, 80, ssh.TerminalModes{})
	}
	var out io.Reader
	if err == nil {
		out, err = sess.StdoutPipe()
	}
	if err == nil {
		err = sess.Shell()
	}
	if err != nil {
		cl.Close()
		return nil, err
	}
	// The first bytes say the session is drawn; then drain until it ends.
	first := make([]byte, 1)
	if _, err := io.ReadFull(out, first); err != nil {
		cl.Close()
		return nil, err
	}
	go io.Copy(io.Discard, out)
	return cl, nil
}

// TestNATBurst: 56 players behind one address join within 0.25 s while
// others play; all of them get in (the per-address handshake cap queues
// them instead of refusing them). cmd/snaked's TestNATBurstUnderLoad runs
// the same burst against the daemon with 900 others playing.
func TestNATBurst(t *testing.T) {
	cfg := testConfig(t)
	def := DefaultConfig()
	cfg.MaxPerIP, cfg.MaxHandshakes, cfg.MaxHandshakesPerIP, cfg.HandshakeQueue = def.MaxPerIP, def.MaxHandshakes, def.MaxHandshakesPerIP, def.HandshakeQueue
	cfg.HandshakeTimeout = 20 * time.Second
	w, err := game.New(game.Config{W: 512, H: 256, MaxSnakes: 100, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	h := start(t, cfg, w)
	var clients []*ssh.Client
	var mu sync.Mutex // guards clients
	t.Cleanup(func() {
		for _, c := range clients {
			c.Close()
		}
	})
	join := func(src, user string) error {
		c, err := lightPlayer(h.addr, src, user)
		if err == nil {
			mu.Lock()
			clients = append(clients, c)
			mu.Unlock()
		}
		return err
	}
	const others = 20
	for i := range others {
		if err := join(fmt.Sprintf("127.0.1.%d", 1+i/5), fmt.Sprintf("p%d", i)); err != nil {
			t.Fatalf("player %d: %v", i, err)
		}
	}
	const burst = 56
	errs := make([]error, burst)
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range burst {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * 250 * time.Millisecond / burst)
			errs[i] = join("127.0.2.1", fmt.Sprintf("nat%d", i))
		})
	}
	wg.Wait()
	in := 0
	for i, err := range errs {
		if err != nil {
			t.Errorf("burst client %d: %v", i, err)
		} else {
			in++
		}
	}
	t.Logf("%d of %d burst clients in within %v", in, burst, time.Since(t0))
	if got := h.srv.players.Load(); got != others+burst {
		t.Errorf("%d players, want %d", got, others+burst)
	}
}

// TestCellBudgetSession: a 500x200 terminal under a 4,000-cell budget is
// drawn on a centred area of at most 4,000 cells; the rest of its screen
// stays blank, and the server accounts what the session holds. A second
// session finds the total used up and gets the floor.
func TestCellBudgetSession(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxCells = 4000
	cfg.MaxCellsTotal = 4000
	h := start(t, cfg, testWorld(t, 4))
	big := play(t, h.dial("big"), render.MaxCols, render.MaxRows)
	big.waitScreen("playing")
	w, ht := render.Fit(render.MaxCols, render.MaxRows, cfg.MaxCells)
	if used := h.srv.cells.used.Load(); used != int64(w*ht) || used > int64(cfg.MaxCells) {
		t.Errorf("server accounts %d cells for the session, want %d (%dx%d)", used, w*ht, w, ht)
	}
	x0, y0 := (render.MaxCols-w)/2, (render.MaxRows-ht)/2
	time.Sleep(500 * time.Millisecond) // a few more frames, camera moves included
	big.mu.Lock()
	inside, outside := 0, 0
	rows := map[int]bool{} // area rows with something drawn
	for y := range render.MaxRows {
		for x := range render.MaxCols {
			c := big.vt.Cell(x, y)
			drawn := c.Ch != ' ' || c.BG != vtmodel.Default
			in := x >= x0 && x < x0+w && y >= y0 && y < y0+ht
			switch {
			case drawn && in:
				inside++
				rows[y-y0] = true
			case drawn:
				outside++
			}
		}
	}
	big.mu.Unlock()
	if outside != 0 || inside == 0 || !rows[0] || !rows[ht-1] {
		t.Errorf("%d cells drawn inside the %dx%d area (top row %v, bottom row %v), %d outside it",
			inside, w, ht, rows[0], rows[ht-1], outside)
	}
	// The total is used up: the next session gets the floor.
	small := play(t, h.dial("small"), 80, 24)
	small.waitScreen("? help")
	if used := h.srv.cells.used.Load(); used > int64(cfg.MaxCellsTotal+cellFloor) {
		t.Errorf("%d cells used; the total is %d plus a floor of %d", used, cfg.MaxCellsTotal, cellFloor)
	}
}
