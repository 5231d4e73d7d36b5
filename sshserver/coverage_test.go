package sshserver

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"snaked/game"
	"snaked/internal/testkit"
)

// fakeCoverage covers every camera or none, and counts the frames that
// asked.
type fakeCoverage struct {
	ok    atomic.Bool
	asked atomic.Int64
}

func (f *fakeCoverage) Covers(v *game.View, follow game.ID, at game.Point, cols, rows int) bool {
	f.asked.Add(1)
	return f.ok.Load()
}

// TestCoverage: a session draws the world only from a view that covers
// its camera, and draws as soon as one does (until then, a terminal that
// shows nothing of the game, new or repainted, gets the banner saying the
// world is loading); Cameras reports what each
// session looks at: the player's snake, the spectator's leaderboard, then
// its free camera where its pans take it.
func TestCoverage(t *testing.T) {
	cov := &fakeCoverage{}
	cfg := testConfig(t)
	cfg.Coverage = cov
	h := start(t, cfg, testWorld(t, 2))
	player := play(t, h.dial("ann"), 80, 24)
	if !testkit.Eventually(5*time.Second, func() bool { return cov.asked.Load() > 3 }) {
		t.Fatal("no frame asked whether its view covers its camera")
	}
	time.Sleep(300 * time.Millisecond) // frames that would draw the world
	if s := player.screen(); strings.Contains(s, "playing") || !strings.Contains(s, "loading the world") {
		t.Fatalf("want the banner saying the world is loading, and no world, from views that do not cover the camera:\n%s", s)
	}
	cov.ok.Store(true)
	player.waitScreen("playing")
	// Ctrl-L while the camera's world is on its way: the banner again
	cov.ok.Store(false)
	player.send("\x0c")
	player.waitScreen("loading the world")
	cov.ok.Store(true)
	player.waitScreen("playing")
	watcher := play(t, h.dial("watch"), 100, 30)
	watcher.waitScreen("playing")

	var ann game.ID
	if !testkit.Eventually(5*time.Second, func() bool {
		s := h.sessionOf("ann")
		ann = game.ID(s.id.Load())
		return ann != 0
	}) {
		t.Fatal("ann has no snake")
	}
	cams := h.srv.Cameras(nil)
	want := map[game.Camera]bool{{Follow: ann, Cols: 80, Rows: 24}: true, {Top: true, Cols: 100, Rows: 30}: true}
	if len(cams) != 2 || !want[cams[0]] || !want[cams[1]] {
		t.Fatalf("cameras %+v, want %v", cams, want)
	}
	watcher.send("\x1b[C") // a pan: the free camera
	if !testkit.Eventually(5*time.Second, func() bool {
		for _, c := range h.srv.Cameras(cams[:0]) {
			if c.Cols == 100 && !c.Top && c.Follow == 0 {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("after a pan the spectator's camera is %+v, want a free one", h.srv.Cameras(nil))
	}
}
