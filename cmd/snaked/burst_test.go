package main

// The daemon under load and at shutdown, driven like operators see it: the
// real binary, the real swarm binary for the crowd, and x/crypto clients
// for the players the test watches.

import (
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// buildLoadtest builds the swarm binary.
func buildLoadtest(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "loadtest")
	out, err := exec.Command("go", "build", "-o", bin, "../loadtest").CombinedOutput()
	if err != nil {
		t.Fatalf("go build loadtest: %v\n%s", err, out)
	}
	return bin
}

// player is an x/crypto client playing as user from the loopback address
// src: it opens a pty session, waits for the first bytes, then keeps
// reading into out until the session ends (done closes then).
type player struct {
	cl   *ssh.Client
	mu   sync.Mutex // guards out
	out  strings.Builder
	done chan struct{}
	err  error // the session's end, once done is closed
}

func dialPlayer(addr, src, user string, timeout time.Duration) (*player, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: timeout}
	raw, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	raw.SetDeadline(time.Now().Add(timeout))
	// Keyless, as a player without a key: keyboard-interactive with no questions.
	noQuestions := ssh.KeyboardInteractive(func(_, _ string, qs []string, _ []bool) ([]string, error) {
		return make([]string, len(qs)), nil
	})
	cc := &ssh.ClientConfig{User: user, Auth: []ssh.AuthMethod{noQuestions}, HostKeyCallback: ssh.InsecureIgnoreHostKey()}
	c, chans, reqs, err := ssh.NewClientConn(raw, addr, cc)
	if err != nil {
		raw.Close()
		return nil, err
	}
	p := &player{cl: ssh.NewClient(c, chans, reqs), done: make(chan struct{})}
	sess, err := p.cl.NewSession()
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
	first := make([]byte, 1)
	if err == nil {
		_, err = io.ReadFull(out, first)
	}
	if err != nil {
		p.cl.Close()
		return nil, err
	}
	raw.SetDeadline(time.Time{})
	go func() {
		defer close(p.done)
		buf := make([]byte, 4096)
		for {
			n, err := out.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				p.err = sess.Wait()
				return
			}
		}
	}()
	return p, nil
}

func (p *player) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// TestNATBurstUnderLoad: 900 players play (the swarm, from many
// addresses); then 56 players behind one address join within 0.25 s. All
// of them get in: over the per-address handshake cap, connections queue
// for a slot instead of being refused.
func TestNATBurstUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	const others, burst = 900, 56
	d := startDaemon(t, buildSnaked(t), "-world", "1024x512", "-max-sessions", "1000", "-bots", "0", "-afk", "0")
	swarm := exec.Command(buildLoadtest(t), "-addr", d.addr, "-n", fmt.Sprint(others), "-ramp", "10s",
		"-duration", "2m", "-check", "0", "-spectators", "0", "-q")
	var swarmOut strings.Builder
	swarm.Stdout, swarm.Stderr = &swarmOut, &swarmOut
	if err := swarm.Start(); err != nil {
		t.Fatal(err)
	}
	swarmDone := make(chan struct{})
	go func() { swarm.Wait(); close(swarmDone) }()
	t.Cleanup(func() {
		swarm.Process.Signal(syscall.SIGTERM)
		select {
		case <-swarmDone:
		case <-time.After(20 * time.Second):
			swarm.Process.Kill()
			<-swarmDone
		}
	})
	players := func() float64 { return metric(t, d.metrics, `snaked_sessions{kind="player"}`) }
	end := time.Now().Add(60 * time.Second)
	for players() < others && time.Now().Before(end) {
		select {
		case <-swarmDone:
			t.Fatalf("the swarm ended early:\n%s", swarmOut.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
	if n := players(); n < others {
		t.Fatalf("only %v of %d swarm players joined in 60 s", n, others)
	}

	ps := make([]*player, burst)
	errs := make([]error, burst)
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range burst {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * 250 * time.Millisecond / burst)
			ps[i], errs[i] = dialPlayer(d.addr, "127.0.2.1", fmt.Sprintf("nat%d", i), 30*time.Second)
		})
	}
	wg.Wait()
	took := time.Since(t0)
	in := 0
	for i, err := range errs {
		if err != nil {
			t.Errorf("burst player %d: %v", i, err)
			continue
		}
		in++
		defer ps[i].cl.Close()
	}
	t.Logf("%d of %d burst players in within %v, alongside %v others", in, burst, took, players()-float64(in))
	if n := players(); n < others+burst {
		t.Errorf("%v players after the burst, want %d", n, others+burst)
	}
}

// TestShutdownGraceZero: -shutdown-grace 0 says goodbye at once and exits
// with status 0.
func TestShutdownGraceZero(t *testing.T) {
	d := startDaemon(t, buildSnaked(t), "-shutdown-grace", "0")
	p, err := dialPlayer(d.addr, "127.0.0.1", "alice", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer p.cl.Close()
	t0 := time.Now()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-d.exited:
		d.exited <- err // for Cleanup
		if err != nil {
			t.Errorf("exit: %v, want status 0", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("snaked still running 5 s after SIGTERM with grace 0")
	}
	took := time.Since(t0)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the player's session did not end")
	}
	if !strings.Contains(p.text(), "shutting down") || strings.Contains(p.text(), "SHUTTING DOWN IN") {
		t.Errorf("goodbye %q: want the shutdown message and no countdown", p.text()[max(0, len(p.text())-200):])
	}
	if took > 2*time.Second {
		t.Errorf("exit took %v with grace 0", took)
	}
}
