package loadtest_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"snaked/game"
	"snaked/internal/status"
	"snaked/internal/testkit"
	"snaked/loadtest"
	"snaked/sshserver"
)

// TestSmokeDaemon runs 50 scripted sessions for 5 s against a real daemon
// on 127.0.0.1:0: a check (no failures, no drops, clean screens, sane
// frame gaps, half the sessions known by their key), not a benchmark.
func TestSmokeDaemon(t *testing.T) {
	w, err := game.New(game.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	signer, _ := ssh.NewSignerFromKey(key)
	cfg := sshserver.DefaultConfig()
	cfg.HostSigners = []ssh.Signer{signer}
	cfg.ShutdownGrace = time.Second
	logs := &testkit.SyncBuf{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	srv, err := sshserver.New(cfg, w.Host())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	clockCtx, stopClock := context.WithCancel(context.Background())
	clockDone := make(chan struct{})
	go func() {
		defer close(clockDone)
		game.Clock{OnRound: srv.Ticked}.Run(clockCtx, w)
	}()
	defer func() { stopClock(); <-clockDone }()

	// The status page, its stream cap one under the viewers: one polls.
	page, err := status.New(status.Config{World: w.Host(), Crowd: srv, HostKey: signer.PublicKey(), Join: "ssh -p 2222 localhost", MaxStreams: 3})
	if err != nil {
		t.Fatal(err)
	}
	pln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	paged := make(chan error, 1)
	go func() { paged <- page.Serve(ctx, pln) }()

	o := loadtest.DefaultOptions()
	o.Addr = ln.Addr().String()
	o.N = 50
	o.Ramp = time.Second
	o.Duration = 5 * time.Second
	o.CheckShare = 0.1 // 5 checked players: screens checked, turns timed
	o.PerAddr = cfg.MaxPerIP
	o.KeyShare = 0.5
	o.Viewers, o.ViewersURL = 4, "http://"+pln.Addr().String()+"/"
	rep, err := loadtest.Run(context.Background(), o)
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if err := <-paged; err != nil {
		t.Errorf("the page's Serve: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if rep.Established != o.N || rep.Failed != 0 || rep.Unexpected != 0 {
		t.Fatalf("established %d/%d, failures %v, unexpected %v %q",
			rep.Established, o.N, rep.FailReasons, rep.EndReasons, rep.EndSamples)
	}
	if rep.ScreenChecks == 0 || rep.ScreenFailures != 0 {
		t.Errorf("screen checks %d, failures %q", rep.ScreenChecks, rep.ScreenProblems)
	}
	if rep.Gap.Count < 1000 || rep.Gap.P50 < 50 || rep.Gap.P50 > 250 {
		t.Errorf("frame gaps %+v: want ~100 ms at 10 Hz", rep.Gap)
	}
	if v := rep.Viewers; v == nil || v.MaxStreams != 3 || v.Refused == 0 || v.Events == 0 || v.Polls == 0 || v.Minimaps == 0 || v.Errors != 0 {
		t.Errorf("viewers %+v: want 3 streams, the fourth refused and polling, events and minimaps, no errors", v)
	}
	if rep.Turns == 0 {
		t.Error("no turns sent")
	}
	// Five checked players, turning every 0.3-3 s for 5 s: their turns show
	// on their screens within a tick or two (10 Hz), seldom not at all.
	t.Logf("key to frame: %+v, %d not seen", rep.KeyToFrame, rep.KeyProbesLost)
	if k := rep.KeyToFrame; k.Count < 5 || k.P50 <= 0 || k.P50 > 250 || rep.KeyProbesLost > int64(k.Count) {
		t.Errorf("key to frame %+v, %d turns not seen: want most turns seen, p50 within 250 ms", k, rep.KeyProbesLost)
	}
	if n := strings.Count(logs.String(), "msg=connect") - strings.Count(logs.String(), "key=SHA256:"); rep.Keyed != 25 || n != 25 {
		t.Errorf("%d sessions with a key, %d connected without: want 25 and 25", rep.Keyed, n)
	}
}
