package sshserver

// The auth policy against real clients, each in a tmux pane the way a player
// runs it: OpenSSH, PuTTY's plink and dropbear's dbclient, each with a key
// and without one. .ci/run installs tmux, openssh-client, putty-tools and
// dropbear-bin when missing.

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"snaked/internal/testkit"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// needTools skips the test when a tool is missing here, and fails it under
// CI, where .ci/run installs them.
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing; .ci/run should have installed it", tool)
			}
			t.Skipf("%s not installed (Debian: tmux, openssh-client, putty-tools, dropbear-bin); skipping", tool)
		}
	}
}

// run runs a command and returns its trimmed output, failing the test on error.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// pane is a command running in an 80x24 pane of a private tmux server.
type pane struct {
	t    *testing.T
	sock string
}

// newPane starts cmd (a shell command line) in a pane; "rc=N" is printed
// when it exits.
func newPane(t *testing.T, name, cmd string) *pane {
	t.Helper()
	p := &pane{t: t, sock: fmt.Sprintf("snaked-auth-%d-%s-%d", os.Getpid(), name, time.Now().UnixNano())}
	run(t, "tmux", "-L", p.sock, "-f", "/dev/null", "new-session", "-d", "-s", "c", "-x", "80", "-y", "24",
		cmd+"; echo rc=$?; sleep 60")
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", p.sock, "kill-server").Run() })
	return p
}

func (p *pane) screen() string {
	return run(p.t, "tmux", "-L", p.sock, "capture-pane", "-p", "-t", "c")
}

func (p *pane) keys(keys ...string) {
	run(p.t, "tmux", append([]string{"-L", p.sock, "send-keys", "-t", "c"}, keys...)...)
}

// waitFor polls the screen until ok holds, for at most 10 s.
func (p *pane) waitFor(what string, ok func(string) bool) string {
	p.t.Helper()
	end := time.Now().Add(10 * time.Second)
	var s string
	for time.Now().Before(end) {
		if s = p.screen(); ok(s) {
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.t.Fatalf("timed out waiting for %s; screen:\n%s", what, s)
	return s
}

// clientKeys is one ed25519 key in each client's format, and its
// fingerprint as ssh-keygen -l prints it.
type clientKeys struct {
	openssh, ppk, dropbear string // private key files
	fp                     string // SHA256:...
}

// makeKeys generates the key with ssh-keygen and converts it for PuTTY and
// dropbear, so that all three clients present the same key.
func makeKeys(t *testing.T, dir string) clientKeys {
	t.Helper()
	k := clientKeys{
		openssh:  filepath.Join(dir, "id_ed25519"),
		ppk:      filepath.Join(dir, "id_ed25519.ppk"),
		dropbear: filepath.Join(dir, "id_ed25519.dropbear"),
	}
	run(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "test", "-f", k.openssh)
	f := strings.Fields(run(t, "ssh-keygen", "-l", "-E", "sha256", "-f", k.openssh+".pub"))
	if len(f) < 2 || !strings.HasPrefix(f[1], "SHA256:") {
		t.Fatalf("ssh-keygen -l: unexpected output %q", f)
	}
	k.fp = f[1]
	if _, err := exec.LookPath("puttygen"); err == nil {
		run(t, "puttygen", k.openssh, "-O", "private", "-o", k.ppk, "--new-passphrase", os.DevNull)
	}
	if _, err := exec.LookPath("dropbearconvert"); err == nil {
		run(t, "dropbearconvert", "openssh", "dropbear", k.openssh, k.dropbear)
	}
	return k
}

// TestRealClientsAuth: OpenSSH, plink and dbclient, each with a key and
// without one, reach the game with no prompt (plink: the one Return of its
// anti-spoofing message), and the server knows a key by the fingerprint
// ssh-keygen prints for it, and keyless players by none.
func TestRealClientsAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	needTools(t, "tmux", "ssh", "ssh-keygen")
	cfg := testConfig(t)
	hostFP := ssh.FingerprintSHA256(cfg.HostSigners[0].PublicKey())
	h := start(t, cfg, testWorld(t, 0))
	_, port, _ := strings.Cut(h.addr, ":")
	dir := t.TempDir()
	keys := makeKeys(t, dir)
	home := filepath.Join(dir, "home") // no ~/.ssh, ~/.putty or agent: keyless means keyless
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	// A prompt OpenSSH shows (passphrase, password, keyboard-interactive
	// question) goes to this askpass, which leaves a mark and fails.
	asked := filepath.Join(dir, "asked")
	askpass := filepath.Join(dir, "askpass")
	if err := os.WriteFile(askpass, []byte("#!/bin/sh\necho \"$*\" >>"+asked+"\nexit 1\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	env := "env -u SSH_AUTH_SOCK HOME=" + home + " SSH_ASKPASS=" + askpass + " SSH_ASKPASS_REQUIRE=force DISPLAY=none "
	openssh := env + "ssh -F /dev/null -p " + port +
		" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o PasswordAuthentication=no"
	plink := env + "plink -ssh -P " + port + " -t -noagent -hostkey " + hostFP
	dbclient := env + "dbclient -p " + port + " -y -y -t"

	cases := []struct {
		name  string
		tools []string
		cmd   string // the client, to which user@127.0.0.1 is appended
		key   string // the fingerprint the server must see; "" for keyless
		enter bool   // the client asks for one Return before the session
	}{
		{"openssh-key", nil, openssh + " -o IdentitiesOnly=yes -i " + keys.openssh, keys.fp, false},
		{"openssh-keyless", nil, openssh + " -o PubkeyAuthentication=no", "", false},
		{"plink-key", []string{"plink", "puttygen"}, plink + " -i " + keys.ppk, keys.fp, true},
		{"plink-keyless", []string{"plink"}, plink, "", true},
		{"dbclient-key", []string{"dbclient", "dropbearconvert"}, dbclient + " -i " + keys.dropbear, keys.fp, false},
		{"dbclient-keyless", []string{"dbclient"}, dbclient, "", false},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			needTools(t, c.tools...)
			t.Parallel()
			user := "auth" + strconv.Itoa(i)
			p := newPane(t, c.name, c.cmd+" "+user+"@127.0.0.1")
			if c.enter {
				p.waitFor("the anti-spoofing message", func(s string) bool {
					return strings.Contains(s, "Access granted. Press Return to begin session.")
				})
				p.keys("Enter")
			}
			p.waitFor("the playfield", func(s string) bool { return strings.Contains(s, "playing") && strings.Contains(s, user) })
			s := h.sessionOf(user)
			if s == nil {
				t.Fatal("no session for " + user)
			}
			if s.key != c.key {
				t.Errorf("session key %q, want %q", s.key, c.key)
			}
			if !testkit.Eventually(5*time.Second, func() bool { return phase(s.phase.Load()) == phasePlay }) {
				t.Errorf("session in phase %d, want play", s.phase.Load())
			}
			p.keys("q")
			p.waitFor("the client to exit", func(s string) bool { return strings.Contains(s, "rc=0") })
		})
	}
	t.Cleanup(func() {
		if b, err := os.ReadFile(asked); err == nil {
			t.Errorf("OpenSSH prompted: %s", b)
		}
	})
}

func newSigner(t testing.TB) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSessionKey: a session knows the key it authenticated with, from the
// Permissions of that authentication, and logs its fingerprint once at
// connect; a second connection with another key is known by its own key
// (nothing is kept between callbacks: CVE-2024-45337); a keyless one has
// none.
func TestSessionKey(t *testing.T) {
	h := start(t, testConfig(t), testWorld(t, 0))
	a, b := newSigner(t), newSigner(t)
	cc := clientConfig("keyed")
	cc.Auth = []ssh.AuthMethod{ssh.PublicKeys(a)}
	c, err := ssh.Dial("tcp", h.addr, cc)
	if err != nil {
		t.Fatalf("%v\n%s", err, h.logs.String())
	}
	defer c.Close()
	tm := play(t, c, 80, 24)
	tm.waitScreen("playing")
	s := h.sessionOf("keyed")
	if want := ssh.FingerprintSHA256(a.PublicKey()); s == nil || s.key != want {
		t.Fatalf("session key %v, want %q", s, want)
	}
	if n := strings.Count(h.logs.String(), "key="+ssh.FingerprintSHA256(a.PublicKey())); n != 1 {
		t.Errorf("key A logged %d times, want once:\n%s", n, h.logs.String())
	}

	// Key B on a second connection, while the first plays on.
	cc = clientConfig("keyedb")
	cc.Auth = []ssh.AuthMethod{ssh.PublicKeys(b)}
	cb, err := ssh.Dial("tcp", h.addr, cc)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	play(t, cb, 80, 24).waitScreen("keyedb")
	if want := ssh.FingerprintSHA256(b.PublicKey()); h.sessionOf("keyedb").key != want || s.key != ssh.FingerprintSHA256(a.PublicKey()) {
		t.Errorf("keys %q and %q, want A then B", s.key, h.sessionOf("keyedb").key)
	}

	// Keyless: no key, no "key" in the log line.
	tm2 := play(t, h.dial("nokey"), 80, 24)
	tm2.waitScreen("nokey")
	if s := h.sessionOf("nokey"); s == nil || s.key != "" {
		t.Fatalf("keyless session %v has a key", s)
	}
	if keyOf(nil) != "" {
		t.Error("keyOf(nil) is not empty")
	}
}

// TestNoneRefused: "none" fails, listing the two methods that succeed, so
// that clients go on to offer their keys.
func TestNoneRefused(t *testing.T) {
	h := start(t, testConfig(t), testWorld(t, 0))
	cc := clientConfig("none")
	cc.Auth = nil
	_, err := ssh.Dial("tcp", h.addr, cc)
	if err == nil || !strings.Contains(err.Error(), "no supported methods remain") {
		t.Fatalf("dial with none only: %v, want an auth failure", err)
	}
}
