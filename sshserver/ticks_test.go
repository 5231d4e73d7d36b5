package sshserver

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"snaked/game"
	"snaked/internal/scores"
	"snaked/internal/testkit"
)

// startIdle is start without the world's clock: no tick ever comes, as
// on a gateway whose simulation is away.
func startIdle(t *testing.T, cfg Config, w *game.World) *harness {
	t.Helper()
	logs := &testkit.SyncBuf{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv, err := New(cfg, w.Host())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, srv: srv, w: w, addr: ln.Addr().String(), logs: logs, cancel: cancel, served: make(chan error, 1)}
	go func() { h.served <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { h.stop(cfg.ShutdownGrace + 6*time.Second) })
	return h
}

// TestDrawsWithoutTicks: while no tick comes, the server draws its
// sessions by itself: a player's screen, then the shutdown countdown in
// its banner, second by second.
func TestDrawsWithoutTicks(t *testing.T) {
	cfg := testConfig(t)
	cfg.ShutdownGrace = 3 * time.Second
	h := startIdle(t, cfg, testWorld(t, 0))
	tm := play(t, h.dial("still"), 80, 24)
	tm.waitScreen("1 playing")
	h.cancel()
	tm.waitScreen("SHUTTING DOWN IN 3")
	tm.waitScreen("SHUTTING DOWN IN 2")
	if code := tm.wait(); code != 0 {
		t.Errorf("exit status %d at shutdown, want 0", code)
	}
}

// fakeCluster is a Cluster whose other gateways have fixed counts and
// which records what the server tells it.
type fakeCluster struct {
	notice                string
	oplayers, ospectators int
	mu                    sync.Mutex // guards the fields below
	players, spectators   int        // the last SetLocal
	calls                 int        // SetLocal calls
}

func (f *fakeCluster) Notice() string                    { return f.notice }
func (f *fakeCluster) Others() (players, spectators int) { return f.oplayers, f.ospectators }

func (f *fakeCluster) SetLocal(players, spectators int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.players, f.spectators = players, spectators
	f.calls++
}

func (f *fakeCluster) local() (players, spectators, calls int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.players, f.spectators, f.calls
}

// TestCluster: a server tells its cluster its players and spectators as
// they come and go, and its banners count the other gateways' too and
// say the cluster's notice.
func TestCluster(t *testing.T) {
	cl := &fakeCluster{oplayers: 5, ospectators: 7}
	cfg := testConfig(t)
	cfg.Cluster = cl
	h := start(t, cfg, testWorld(t, 0))
	if p, s, n := cl.local(); n != 0 {
		t.Fatalf("told the cluster %d %d (%d times) before any session", p, s, n)
	}
	player := play(t, h.dial("ann"), 80, 24)
	watcher := play(t, h.dial("watch"), 80, 24)
	player.waitScreen("6 playing, 8 watching")
	watcher.waitScreen("6 playing, 8 watching")
	if p, s, _ := cl.local(); p != 1 || s != 1 {
		t.Errorf("the cluster heard %d players and %d spectators, want 1 1", p, s)
	}
	if p, s := h.srv.Counts(); p != 6 || s != 8 {
		t.Errorf("Counts = %d players, %d spectators; want the banner's 6 and 8", p, s)
	}
	watcher.send("q")
	watcher.wait()
	player.waitScreen("6 playing, 7 watching")
	if !testkit.Eventually(5*time.Second, func() bool { p, s, _ := cl.local(); return p == 1 && s == 0 }) {
		p, s, _ := cl.local()
		t.Errorf("after the spectator left the cluster heard %d players and %d spectators, want 1 0", p, s)
	}
}

// heldScores is a Scores whose name questions wait until release is
// closed (or their context ends), as a slow simulation's do.
type heldScores struct {
	Scores
	release chan struct{}
}

func (h *heldScores) Holding(ctx context.Context, name, fp string, now time.Time) (scores.Holding, error) {
	select {
	case <-h.release:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return h.Scores.Holding(ctx, name, fp, now)
}

// TestClusterGreeting: on a gateway a player's terminal says the world is
// being joined while the simulation's answers are on their way, then
// shows the game; leaving restores the terminal.
func TestClusterGreeting(t *testing.T) {
	sc := &heldScores{Scores: testStore(t), release: make(chan struct{})}
	cfg := testConfig(t)
	cfg.Cluster = &fakeCluster{}
	cfg.Scores = sc
	h := start(t, cfg, testWorld(t, 0))
	ann := play(t, h.dial("ann"), 80, 24)
	ann.waitScreen("joining the world")
	if s := ann.screen(); strings.Contains(s, "playing") {
		t.Fatalf("the game drawn before the name's answer:\n%s", s)
	}
	close(sc.release)
	ann.waitScreen("1 playing")
	if s := ann.screen(); strings.Contains(s, "joining the world") {
		t.Fatalf("the greeting left on the game's screen:\n%s", s)
	}
	ann.send("q")
	ann.wait()
	if s := ann.screen(); !strings.Contains(s, "Thanks for playing") {
		t.Fatalf("no goodbye on the restored terminal:\n%s", s)
	}
}

// TestClusterNotice: the cluster's notice takes the banner's place of the
// counts.
func TestClusterNotice(t *testing.T) {
	cfg := testConfig(t)
	cfg.Cluster = &fakeCluster{notice: "link on fire"}
	h := start(t, cfg, testWorld(t, 0))
	play(t, h.dial("ann"), 80, 24).waitScreen("link on fire")
}
