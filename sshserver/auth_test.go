package sshserver

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// BenchmarkHandshake prices one SSH handshake (key exchange and auth, to the
// end) on the server side: the server runs in this process with its own
// config, the client in a child process (this test binary again, see
// TestHandshakeClient) over loopback TCP, one handshake at a time.
// server-cpu-us/op is this process's user+system CPU per handshake
// (getrusage; the child's is not in it). Cases: "none" is the policy before
// issue 11 (anonymous "none" succeeds); keyless is keyboard-interactive with
// zero questions after "none" is refused (keyless-direct: the same without
// the info request); key is an ed25519 public key
// (query, then signature) after "none" is refused.
func BenchmarkHandshake(b *testing.B) {
	srv, err := New(testConfig(b), testWorld(b, 0))
	if err != nil {
		b.Fatal(err)
	}
	none := *srv.ssh
	none.NoClientAuth = true
	none.PublicKeyCallback, none.KeyboardInteractiveCallback = nil, nil
	// What keyless would cost without the info request (one round trip
	// less): success straight away. Not what snaked does (RFC 4256 has the
	// server ask, and PuTTY asks for its Return either way).
	direct := *srv.ssh
	direct.KeyboardInteractiveCallback = func(ssh.ConnMetadata, ssh.KeyboardInteractiveChallenge) (*ssh.Permissions, error) {
		return nil, nil
	}
	for _, c := range []struct {
		name string
		cfg  *ssh.ServerConfig
	}{
		{"none", &none},
		{"keyless", srv.ssh},
		{"keyless-direct", &direct},
		{"key", srv.ssh},
	} {
		b.Run(c.name, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			n := b.N
			child := exec.Command(os.Args[0], "-test.run=^TestHandshakeClient$")
			child.Env = append(os.Environ(), fmt.Sprintf("SNAKED_HANDSHAKE_CLIENT=%s %s %d", ln.Addr(), c.name, n))
			out := &syncBuf{}
			child.Stdout, child.Stderr = out, out
			if err := child.Start(); err != nil {
				b.Fatal(err)
			}
			var cpu time.Duration
			var wall time.Duration
			for i := 0; i < n; i++ {
				raw, err := ln.Accept()
				if err != nil {
					b.Fatal(err)
				}
				t0, c0 := time.Now(), cpuTime()
				sc, _, _, err := ssh.NewServerConn(raw, c.cfg)
				if err != nil {
					b.Fatalf("handshake %d: %v\n%s", i, err, out.String())
				}
				sc.Close()
				raw.Close()
				cpu += cpuTime() - c0
				wall += time.Since(t0)
			}
			if err := child.Wait(); err != nil {
				b.Fatalf("client: %v\n%s", err, out.String())
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(n), "server-cpu-us/op")
			b.ReportMetric(float64(wall.Microseconds())/float64(n), "server-wall-us/op")
		})
	}
}

// TestHandshakeClient is BenchmarkHandshake's client, run in a child
// process: "ADDR MODE N" in SNAKED_HANDSHAKE_CLIENT; skipped otherwise.
func TestHandshakeClient(t *testing.T) {
	spec := os.Getenv("SNAKED_HANDSHAKE_CLIENT")
	if spec == "" {
		t.Skip("BenchmarkHandshake's client")
	}
	var addr, mode string
	var n int
	if _, err := fmt.Sscan(spec, &addr, &mode, &n); err != nil {
		t.Fatal(err)
	}
	cc := clientConfig("bench")
	if mode == "key" {
		cc.Auth = []ssh.AuthMethod{ssh.PublicKeys(newSigner(t))}
	}
	for i := 0; i < n; i++ {
		raw, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c, _, _, err := ssh.NewClientConn(raw, addr, cc)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
}

// cpuTime is this process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
