package main

// End-to-end: the real binary, the real OpenSSH client, inside tmux, the way
// a newcomer plays. .ci/run installs tmux and openssh-client when missing.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing; .ci/run should have installed it", tool)
			}
			t.Skipf("%s not installed", tool)
		}
	}
}

// daemon is a snaked process started by a test.
type daemon struct {
	cmd         *exec.Cmd
	addr        string
	port        string
	metrics     string
	fingerprint string // the host key's, as printed at start
	page        string // the status page's URL, when -http-addr was given
	exited      chan error
}

func buildSnaked(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "snaked")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// freeLoopbackAddr returns a loopback address whose TCP port is free now,
// for a process the test starts later. The port is drawn below the
// kernels' ephemeral ranges (Linux 32768-60999, macOS from 49152), from
// which every listener on :0 and every outgoing connection of the tests
// running meanwhile take theirs (a client retrying a port nobody listens
// on yet can even connect to itself); tests draw at random, so two rarely
// meet.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	for range 100 {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(20000+rand.IntN(12000))))
		if err == nil {
			a := l.Addr().String()
			l.Close()
			return a
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := l.Addr().String()
	l.Close()
	return a
}

func startDaemon(t *testing.T, bin string, extra ...string) *daemon {
	t.Helper()
	metrics := freeLoopbackAddr(t)
	args := append([]string{"-addr", "127.0.0.1:0", "-state-dir", filepath.Join(t.TempDir(), "state"),
		"-bots", "3", "-world", "256x128", "-metrics-addr", metrics}, extra...)
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errf, err := os.Create(filepath.Join(t.TempDir(), "stderr.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = errf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemon{cmd: cmd, metrics: metrics, exited: make(chan error, 1)}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-d.exited
		if t.Failed() {
			b, _ := os.ReadFile(errf.Name())
			t.Logf("daemon stderr:\n%s", b)
		}
	})
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
		d.exited <- cmd.Wait()
	}()
	re := regexp.MustCompile(`listening on (\S+)`)
	keyRe, pageRe := regexp.MustCompile(`^host key (\S+)`), regexp.MustCompile(`^page: +(\S+)`)
	wantPage := slices.Contains(extra, "-http-addr")
	deadline := time.After(20 * time.Second)
	for d.addr == "" || wantPage && d.page == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("snaked exited before listening")
			}
			if m := re.FindStringSubmatch(l); m != nil {
				d.addr = m[1]
				d.port = d.addr[strings.LastIndexByte(d.addr, ':')+1:]
			}
			if m := keyRe.FindStringSubmatch(l); m != nil {
				d.fingerprint = m[1]
			}
			if m := pageRe.FindStringSubmatch(l); m != nil {
				d.page = m[1]
			}
		case <-deadline:
			t.Fatal("snaked did not print its address")
		}
	}
	return d
}

// tmux drives a private tmux server.
type tmux struct {
	t    *testing.T
	sock string
}

func newTmux(t *testing.T) *tmux {
	x := &tmux{t: t, sock: fmt.Sprintf("snaked-e2e-%d-%d", os.Getpid(), time.Now().UnixNano())}
	x.run("new-session", "-d", "-s", "e2e", "-x", "100", "-y", "30",
		"env", "-i", "PATH="+os.Getenv("PATH"), "HOME="+t.TempDir(), "TERM=xterm-256color",
		"PS1=E2E$ ", "bash", "--norc", "--noprofile")
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", x.sock, "kill-server").Run() })
	return x
}

func (x *tmux) run(args ...string) string {
	x.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", x.sock}, args...)...).CombinedOutput()
	if err != nil {
		x.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (x *tmux) keys(keys ...string) { x.run(append([]string{"send-keys", "-t", "e2e"}, keys...)...) }

func (x *tmux) screen() string { return x.run("capture-pane", "-p", "-t", "e2e") }

// waitFor polls the pane until ok holds, for at most d.
func (x *tmux) waitFor(what string, d time.Duration, ok func(string) bool) string {
	x.t.Helper()
	end := time.Now().Add(d)
	var s string
	for time.Now().Before(end) {
		s = x.screen()
		if ok(s) {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	x.t.Fatalf("timed out waiting for %s; screen:\n%s", what, s)
	return s
}

func sshCommand(port, user string) string {
	return "ssh -F /dev/null -p " + port +
		" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR" +
		" -o PubkeyAuthentication=no -o PasswordAuthentication=no " + // keyless: keyboard-interactive, no questions
		user + "@127.0.0.1; echo rc=$?"
}

func metric(t *testing.T, addr, name string) float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	total := 0.0
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, name+" ") || strings.HasPrefix(l, name+"{") {
			f := strings.Fields(l)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			if err == nil {
				total += v
			}
		}
	}
	return total
}

// getJSON reads url's JSON into v; it reports whether it could.
func getJSON(t *testing.T, url string, v any) bool {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Errorf("GET %s: %v", url, err)
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %s", url, resp.Status)
		return false
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Errorf("GET %s: %v", url, err)
		return false
	}
	return true
}

func hasPlayfield(s string) bool { return strings.ContainsAny(s, "▀▄█") }

func TestOpenSSHPlayInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	need(t, "tmux", "ssh")
	d := startDaemon(t, buildSnaked(t))
	x := newTmux(t)
	x.waitFor("shell prompt", 10*time.Second, func(s string) bool { return strings.Contains(s, "E2E$") })

	x.keys(sshCommand(d.port, "alice"), "Enter")
	x.waitFor("banner, playfield and the player's name", 20*time.Second, func(s string) bool {
		return strings.Contains(strings.ToLower(s), "snaked") && hasPlayfield(s) && strings.Contains(s, "alice")
	})
	if on := strings.TrimSpace(x.run("display", "-p", "-t", "e2e", "#{alternate_on}")); on != "1" {
		t.Errorf("alternate screen not entered during play (alternate_on=%s)", on)
	}

	before := metric(t, d.metrics, `snaked_inputs_total{kind="turn"}`)
	for _, k := range []string{"Up", "Left", "Down", "Right", "w", "a", "s", "d"} {
		x.keys(k)
		time.Sleep(150 * time.Millisecond)
	}
	end := time.Now().Add(5 * time.Second)
	for metric(t, d.metrics, `snaked_inputs_total{kind="turn"}`) <= before && time.Now().Before(end) {
		time.Sleep(100 * time.Millisecond)
	}
	if after := metric(t, d.metrics, `snaked_inputs_total{kind="turn"}`); after <= before {
		t.Errorf("keys did not steer: snaked_inputs_total %v -> %v", before, after)
	}

	x.keys("q")
	s := x.waitFor("ssh to return to the shell", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "rc=0")
	})
	if on := strings.TrimSpace(x.run("display", "-p", "-t", "e2e", "#{alternate_on}")); on != "0" {
		t.Errorf("terminal left in the alternate screen after q")
	}
	if cur := strings.TrimSpace(x.run("display", "-p", "-t", "e2e", "#{cursor_flag}")); cur != "1" {
		t.Errorf("cursor still hidden after q")
	}
	if hasPlayfield(s) {
		t.Errorf("playfield still visible on the main screen after q:\n%s", s)
	}

	// The game alice just played is in the scores database in the state
	// directory (written within a second), and the scores command prints
	// it to the real OpenSSH client, without a terminal.
	var out []byte
	for end := time.Now().Add(10 * time.Second); ; {
		cmd := exec.Command("ssh", "-F", "/dev/null", "-p", d.port, "-o", "StrictHostKeyChecking=no",
			"-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-o", "PubkeyAuthentication=no",
			"-o", "PasswordAuthentication=no", "-T", "someone@127.0.0.1", "scores")
		var err error
		out, err = cmd.Output()
		if err != nil {
			t.Fatalf("ssh host scores: %v (%q)", err, out)
		}
		if strings.Contains(string(out), "alice") || time.Now().After(end) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.Contains(string(out), "alice") {
		t.Errorf("alice's game not in the scores:\n%s", out)
	}
}

func TestOpenSSHShutdownCountdown(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	need(t, "tmux", "ssh")
	const grace = 3 * time.Second
	d := startDaemon(t, buildSnaked(t), "-shutdown-grace", grace.String())
	x := newTmux(t)
	x.waitFor("shell prompt", 10*time.Second, func(s string) bool { return strings.Contains(s, "E2E$") })
	x.keys(sshCommand(d.port, "watch"), "Enter")
	x.waitFor("spectator view", 20*time.Second, hasPlayfield)

	start := time.Now()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	x.waitFor("countdown", 5*time.Second, func(s string) bool { return strings.Contains(s, "SHUTTING DOWN IN") })
	select {
	case err := <-d.exited:
		d.exited <- err // for Cleanup
		if err != nil {
			t.Errorf("snaked exit: %v, want status 0", err)
		}
	case <-time.After(grace + 5*time.Second + 2*time.Second):
		t.Fatalf("snaked still running %v after SIGTERM", time.Since(start))
	}
	if took := time.Since(start); took > grace+5*time.Second {
		t.Errorf("shutdown took %v, bound is grace+5s", took)
	}
	x.waitFor("client back at the shell", 10*time.Second, func(s string) bool { return strings.Contains(s, "rc=") })
	if on := strings.TrimSpace(x.run("display", "-p", "-t", "e2e", "#{alternate_on}")); on != "0" {
		t.Errorf("terminal left in the alternate screen after shutdown")
	}
}

// TestScoresUnwritable: a scores database the daemon cannot create leaves
// it running without scores (trying again in the background): it listens,
// the metrics say scores are off, and the scores command says they are
// not available right now.
func TestScoresUnwritable(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	need(t, "ssh")
	// A path under a regular file: nobody, root included, can create it.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, buildSnaked(t), "-scores", filepath.Join(file, "scores.db"))
	var body []byte
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) { // the metrics listener starts with Serve
		resp, err := http.Get("http://" + d.metrics + "/metrics")
		if err == nil {
			body, _ = io.ReadAll(io.LimitReader(resp.Body, 4<<20))
			resp.Body.Close()
			break
		}
		if time.Now().After(end) {
			t.Fatalf("metrics never answered: %v", err)
		}
	}
	if !strings.Contains(string(body), "\nsnaked_scores_enabled 0\n") {
		t.Errorf("metrics do not say scores are off (snaked_scores_enabled 0)")
	}
	out, err := exec.Command("ssh", "-F", "/dev/null", "-p", d.port, "-o", "StrictHostKeyChecking=no",
		"-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-o", "PubkeyAuthentication=no",
		"-o", "PasswordAuthentication=no", "-T", "someone@127.0.0.1", "scores").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "scores are not available right now") {
		t.Errorf("scores without a database: %v, %q", err, out)
	}
}
