package sshserver

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"snaked/game"
	"snaked/internal/scores"
	"snaked/internal/testkit"
)

// testStore opens a scores store in a temporary directory that flushes
// every 20 ms, closed at the end of the test.
func testStore(t *testing.T) *scores.Store {
	t.Helper()
	st, err := scores.Open(filepath.Join(t.TempDir(), "scores.db"), scores.Options{FlushEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		st.Close(ctx)
	})
	return st
}

// keyedDial connects as user, authenticating with signer.
func (h *harness) keyedDial(user string, signer ssh.Signer) *ssh.Client {
	h.t.Helper()
	cc := clientConfig(user)
	cc.Auth = []ssh.AuthMethod{ssh.PublicKeys(signer)}
	c, err := ssh.Dial("tcp", h.addr, cc)
	if err != nil {
		h.t.Fatalf("dial as %q with a key: %v", user, err)
	}
	h.t.Cleanup(func() { c.Close() })
	return c
}

// execOn execs cmd on a new session of c and returns its output and status.
func execOn(t *testing.T, c *ssh.Client, cmd string) (string, int) {
	t.Helper()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	out, err := sess.Output(cmd)
	var ee *ssh.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitStatus()
	}
	t.Fatalf("exec %q: %T %v (output %q)", cmd, err, err, out)
	return "", -1
}

// TestScoresCommand: "scores" without a terminal prints the all-time top
// as text, "scores --json" as JSON, both with status 0; a bad argument is
// status 2; the user "scores" without a command prints the text; a server
// without a store says scores are off (status 1).
func TestScoresCommand(t *testing.T) {
	st := testStore(t)
	now := time.Now()
	for i, r := range []scores.Result{
		{ID: scores.KeyID("SHA256:aaa"), Name: "alice", Length: 40, Died: true, Duration: time.Minute, End: now},
		{ID: scores.NameID("bob"), Name: "bob", Length: 55, Died: true, Duration: time.Minute, End: now},
		{ID: scores.KeyID("SHA256:ccc"), Name: "carol", Length: 12, End: now},
	} {
		if !st.Record(r) {
			t.Fatalf("result %d dropped", i)
		}
	}
	if !testkit.Eventually(5*time.Second, func() bool { return st.Stats().Written >= 3 }) {
		t.Fatalf("results never written: %+v", st.Stats())
	}
	cfg := testConfig(t)
	cfg.Scores = st
	h := start(t, cfg, testWorld(t, 0))
	// One session per connection: each command dials again.
	out, code := execOn(t, h.dial("someone"), "scores")
	if code != 0 {
		t.Fatalf("scores: status %d, output %q", code, out)
	}
	b, a, cl := strings.Index(out, "bob"), strings.Index(out, "alice"), strings.Index(out, "carol")
	if b < 0 || a < b || cl < a || !strings.Contains(out, "keyless") || strings.Contains(out, "SHA256") {
		t.Fatalf("scores text out of order, or showing fingerprints:\n%s", out)
	}
	out, code = execOn(t, h.dial("someone"), "scores --json")
	var doc struct {
		Top []struct {
			Rank     int    `json:"rank"`
			Name     string `json:"name"`
			Best     int    `json:"best"`
			Identity string `json:"identity"`
		} `json:"top"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
		t.Fatalf("scores --json: status %d, %v: %q", code, err, out)
	}
	if len(doc.Top) != 3 || doc.Top[0].Name != "bob" || doc.Top[0].Best != 55 || doc.Top[0].Rank != 1 || doc.Top[0].Identity != "keyless" {
		t.Fatalf("scores --json: %+v", doc.Top)
	}
	if out, code := execOn(t, h.dial("someone"), "scores --bogus"); code != 2 || !strings.Contains(out, "usage") {
		t.Errorf("bad argument: status %d, %q", code, out)
	}
	if _, code := execOn(t, h.dial("someone"), "rm -rf /"); code != 1 {
		t.Errorf("another command: status %d, want 1", code)
	}
	// The user "scores" with no command and no terminal.
	sess, err := h.dial("scores").NewSession()
	if err != nil {
		t.Fatal(err)
	}
	so := &testkit.SyncBuf{}
	sess.Stdout = so
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	if err := sess.Wait(); err != nil || !strings.Contains(so.String(), "alice") {
		t.Errorf("ssh scores@host: %v, %q", err, so.String())
	}

	h2 := start(t, testConfig(t), testWorld(t, 0))
	if out, code := execOn(t, h2.dial("x"), "scores"); code != 1 || !strings.Contains(out, "off") {
		t.Errorf("no store: status %d, %q", code, out)
	}
}

// TestNameClaims: the first key to play a name claims it; a keyless
// player or another key asking for it get the join screen saying so; the
// owner plays it again.
func TestNameClaims(t *testing.T) {
	st := testStore(t)
	cfg := testConfig(t)
	cfg.Scores = st
	h := start(t, cfg, testWorld(t, 0))
	owner := newSigner(t)
	tm := play(t, h.keyedDial("kate", owner), 80, 24)
	tm.waitScreen("1 playing")
	fp := ssh.FingerprintSHA256(owner.PublicKey())
	if !testkit.Eventually(5*time.Second, func() bool {
		got, ok, err := st.Owner(context.Background(), "kate", time.Now())
		return err == nil && ok && got == fp
	}) {
		t.Fatal("kate's key did not claim the name")
	}
	tm.send("q")
	tm.wait()

	tm = play(t, h.dial("kate"), 80, 24)
	tm.waitScreen("belongs to a player with a key")
	tm.send("\x03")
	tm.wait()
	tm = play(t, h.keyedDial("kate", newSigner(t)), 80, 24)
	tm.waitScreen("belongs to another key")
	tm.send("kate2\r")
	tm.waitScreen("1 playing")
	tm.send("q")
	tm.wait()
	tm = play(t, h.keyedDial("kate", owner), 80, 24)
	tm.waitScreen("1 playing")
}

// TestGamesRecorded: a game that ends when the player quits is recorded
// (not as a death) under the session's identity; a keyless player's under
// its name.
func TestGamesRecorded(t *testing.T) {
	st := testStore(t)
	cfg := testConfig(t)
	cfg.Scores = st
	h := start(t, cfg, testWorld(t, 0))
	k := newSigner(t)
	tm := play(t, h.keyedDial("lena", k), 80, 24)
	tm.waitScreen("1 playing")
	if !testkit.Eventually(5*time.Second, func() bool { s, ok := testkit.SnakeNamed(h.w, "lena"); return ok && s.Alive }) {
		t.Fatal("lena never lived")
	}
	time.Sleep(300 * time.Millisecond)
	tm.send("q")
	tm.wait()
	tm = play(t, h.dial("moss"), 80, 24)
	tm.waitScreen("1 playing")
	time.Sleep(300 * time.Millisecond)
	tm.send("q")
	tm.wait()
	for _, c := range []struct {
		id   scores.ID
		name string
	}{{scores.KeyID(ssh.FingerprintSHA256(k.PublicKey())), "lena"}, {scores.NameID("moss"), "moss"}} {
		var rec scores.Record
		if !testkit.Eventually(5*time.Second, func() bool {
			r, ok, err := st.Player(context.Background(), c.id)
			rec = r
			return err == nil && ok && r.Games == 1
		}) {
			t.Fatalf("%s: no game recorded (%+v, stats %+v)", c.name, rec, st.Stats())
		}
		if rec.Name != c.name || rec.Deaths != 0 || rec.Best < 1 {
			t.Errorf("%s: record %+v", c.name, rec)
		}
	}
	// Back again: the HUD gets lena's all-time best and rank.
	tm = play(t, h.keyedDial("lena", k), 80, 24)
	tm.waitScreen("1 playing")
	// The first lena session leaves the live list a moment after its
	// client disconnected; the record is loaded before the first frame.
	if !testkit.Eventually(2*time.Second, func() bool { return h.sessionCount("lena") == 1 }) {
		t.Fatalf("%d lena sessions live", h.sessionCount("lena"))
	}
	s := h.sessionOf("lena")
	if s.allBest.Load() < 1 || s.allRank.Load() != 1 {
		t.Errorf("all-time record not loaded at the join: best %d rank %d", s.allBest.Load(), s.allRank.Load())
	}
}

// TestTrackLives: the writer's view of the player's snake becomes finished
// games: a life's longest length, its own kills and its length of time,
// one result per death, none for a death seen twice.
func TestTrackLives(t *testing.T) {
	st := testStore(t)
	s := &session{srv: &Server{cfg: Config{Scores: st}}, nick: "nia"}
	seq := []game.SnakeInfo{
		{Alive: true, SpawnTick: 10, Length: 5, Kills: 2},
		{Alive: true, SpawnTick: 10, Length: 9, Kills: 3},
		{Alive: true, SpawnTick: 10, Length: 8, Kills: 4},
		{Alive: false, SpawnTick: 10, DeathTick: 40, Length: 8, Kills: 4},
		{Alive: false, SpawnTick: 10, DeathTick: 40, Length: 8, Kills: 4}, // the same death again
		{Alive: true, SpawnTick: 55, Length: 5, Kills: 4},
		{Alive: false, SpawnTick: 55, DeathTick: 60, Length: 5, Kills: 4},
	}
	for i := range seq {
		s.track(&seq[i])
	}
	if !testkit.Eventually(5*time.Second, func() bool { return st.Stats().Written >= 2 }) {
		t.Fatalf("stats %+v", st.Stats())
	}
	if n := st.Stats().Recorded; n != 2 { // Record counts as it queues: nothing more is on its way
		t.Fatalf("%d results recorded, want 2", n)
	}
	r, ok, err := st.Player(context.Background(), scores.NameID("nia"))
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if r.Games != 2 || r.Deaths != 2 || r.Best != 9 || r.Kills != 2 || r.Played < 3*time.Second || r.Played > 4*time.Second {
		t.Errorf("record %+v: want 2 games, 2 deaths, best 9, 2 kills, 3 and 0.5 s played (kept in whole seconds)", r)
	}
}

// TestScoresBrowser: "ssh scores@host" with a terminal opens the scores
// browser: the all-time table, today's, and the viewer's own record (a
// keyless viewer is told there is none), tabs switched with Tab; q leaves
// with status 0.
func TestScoresBrowser(t *testing.T) {
	st := testStore(t)
	k := newSigner(t)
	fp := ssh.FingerprintSHA256(k.PublicKey())
	now := time.Now()
	st.Record(scores.Result{ID: scores.KeyID(fp), Name: "olga", Length: 33, Kills: 4, Died: true, Duration: time.Minute, End: now})
	st.Record(scores.Result{ID: scores.NameID("pete"), Name: "pete", Length: 21, Died: true, Duration: time.Minute, End: now.Add(-48 * time.Hour)})
	if !testkit.Eventually(5*time.Second, func() bool { return st.Stats().Written >= 2 }) {
		t.Fatal("results never written")
	}
	cfg := testConfig(t)
	cfg.Scores = st
	h := start(t, cfg, testWorld(t, 0))

	tm := play(t, h.dial("scores"), 100, 30)
	tm.waitScreen("[All-time]")
	tm.waitScreen("olga")
	tm.waitScreen("pete")
	tm.send("\t")
	tm.waitScreen("[Today]")
	if !testkit.Eventually(2*time.Second, func() bool { s := tm.screen(); return strings.Contains(s, "olga") && !strings.Contains(s, "pete") }) {
		t.Fatalf("today's table should hold olga only:\n%s", tm.screen())
	}
	tm.send("\t")
	tm.waitScreen("without a key")
	tm.send("q")
	if code := tm.wait(); code != 0 {
		t.Errorf("q: status %d", code)
	}

	tm = play(t, h.keyedDial("scores", k), 100, 30)
	tm.waitScreen("[All-time]")
	tm.send("\x1b[D") // left: the last tab, yours
	tm.waitScreen("best length  33")
	tm.send("\x03")
	tm.wait()
}

// keyHost is a world behind a Host that takes the player's key with the
// join, as a gateway does, and can be away, as a gateway's simulation
// restarting is.
type keyHost struct {
	game.Host
	away   atomic.Bool
	refuse atomic.Pointer[error] // when set, joins are refused with it (a simulation's answer)
	mu     sync.Mutex            // guards keys
	keys   map[string]string     // name -> the key that joined it
}

func (k *keyHost) Join(name, key string) (game.Seat, error) {
	if k.away.Load() {
		return game.Seat{}, game.ErrUnavailable
	}
	if e := k.refuse.Load(); e != nil {
		return game.Seat{}, *e
	}
	k.mu.Lock()
	k.keys[name] = key
	k.mu.Unlock()
	return k.Host.Join(name, key)
}

func (k *keyHost) key(name string) (string, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key, ok := k.keys[name]
	return key, ok
}

// TestJoinKeyHost: on a Host that takes keys with joins (a gateway), a
// session joins with its key's fingerprint, a keyless one with none; a
// world that cannot be reached sends the player to the join screen, told
// it is restarting, and the next try gets in.
func TestJoinKeyHost(t *testing.T) {
	w := testWorld(t, 0)
	kh := &keyHost{Host: w.Host(), keys: map[string]string{}}
	h := startHost(t, testConfig(t), w, kh)
	signer := newSigner(t)
	kh.away.Store(true)
	tm := play(t, h.keyedDial("kit", signer), 80, 24)
	tm.waitScreen("the world is restarting")
	kh.away.Store(false)
	tm.send("kit\r")
	tm.waitScreen("1 playing")
	if key, ok := kh.key("kit"); !ok || key != ssh.FingerprintSHA256(signer.PublicKey()) {
		t.Fatalf("kit joined with key %q (%v), want %q", key, ok, ssh.FingerprintSHA256(signer.PublicKey()))
	}
	lee := play(t, h.dial("lee"), 80, 24)
	lee.waitScreen("2 playing")
	if key, ok := kh.key("lee"); !ok || key != "" {
		t.Fatalf("keyless lee joined with key %q (%v)", key, ok)
	}
	tm.send("q")
	tm.wait()
	lee.send("q")
	lee.wait()
}

// TestRecordRefresh: a respawn asks the scores for the player's record
// only when the last game beat the best they gave (until the game is
// committed) or recordEvery has passed; a join always asks; never twice
// within a second.
func TestRecordRefresh(t *testing.T) {
	st := testStore(t)
	s := &session{srv: &Server{cfg: Config{Scores: st}}, nick: "ivo"}
	asked := func(respawn bool) bool {
		t.Helper()
		before := s.recAt.Load()
		s.loadRecord(respawn)
		return s.recAt.Load() != before
	}
	ago := func(d time.Duration) { s.recAt.Store(time.Now().Add(-d).UnixNano()) }

	if !asked(false) {
		t.Fatal("a join did not ask")
	}
	ago(2 * time.Second)
	if asked(true) {
		t.Fatal("a respawn asked with no game finished")
	}
	// A game of 9 ends: the next respawn asks until the record has it.
	s.track(&game.SnakeInfo{Alive: true, SpawnTick: 10, Length: 9})
	s.track(&game.SnakeInfo{Alive: false, SpawnTick: 10, DeathTick: 30, Length: 9})
	if !testkit.Eventually(5*time.Second, func() bool { return st.Stats().Written >= 1 }) {
		t.Fatalf("stats %+v", st.Stats())
	}
	ago(500 * time.Millisecond)
	if asked(true) {
		t.Fatal("asked again within a second")
	}
	ago(2 * time.Second)
	if !asked(true) || s.allBest.Load() != 9 || s.allRank.Load() != 1 {
		t.Fatalf("a respawn after a new best: best %d rank %d", s.allBest.Load(), s.allRank.Load())
	}
	// A shorter game: no question until recordEvery has passed.
	s.track(&game.SnakeInfo{Alive: true, SpawnTick: 40, Length: 4})
	s.track(&game.SnakeInfo{Alive: false, SpawnTick: 40, DeathTick: 50, Length: 4})
	ago(2 * time.Second)
	if asked(true) {
		t.Fatal("a respawn asked after a game that beat nothing")
	}
	ago(recordEvery + time.Second)
	if !asked(true) {
		t.Fatal("a respawn did not ask after recordEvery")
	}
	// A game the store has not committed yet: asked at each respawn.
	s.gameBest.Store(50)
	for range 2 {
		ago(2 * time.Second)
		if !asked(true) {
			t.Fatal("a respawn did not ask while the best game was not in the record")
		}
	}
}
