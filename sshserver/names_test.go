package sshserver

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
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

// countingScores is a Scores that counts the name questions it passes on,
// and can be made to fail them.
type countingScores struct {
	Scores
	owners, claims atomic.Int64
	fail           atomic.Pointer[error] // when set, Holding and Claim answer it
}

func (c *countingScores) Holding(ctx context.Context, name, fp string, now time.Time) (scores.Holding, error) {
	c.owners.Add(1)
	if e := c.fail.Load(); e != nil {
		return 0, *e
	}
	return c.Scores.Holding(ctx, name, fp, now)
}

func (c *countingScores) Claim(ctx context.Context, name, fp, from string, now time.Time) (scores.ClaimResult, error) {
	c.claims.Add(1)
	if e := c.fail.Load(); e != nil {
		return scores.ClaimResult{}, *e
	}
	return c.Scores.Claim(ctx, name, fp, from, now)
}

// storeWith opens a scores store with opts (flushing every 20 ms), closed
// at the end of the test.
func storeWith(t *testing.T, opts scores.Options) *scores.Store {
	t.Helper()
	opts.FlushEvery = 20 * time.Millisecond
	st, err := scores.Open(filepath.Join(t.TempDir(), "scores.db"), opts)
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

// owned reports whether fp holds name in st now.
func owned(st *scores.Store, name, fp string) bool {
	got, ok, err := st.Owner(context.Background(), name, time.Now())
	return err == nil && ok && got == fp
}

// TestFourthName: a key holds three names; playing a fourth claims it and
// lets the least recently played go (the banner says so), and that name
// is then anyone's.
func TestFourthName(t *testing.T) {
	st := testStore(t)
	cfg := testConfig(t)
	cfg.Scores = st
	h := start(t, cfg, testWorld(t, 0))
	key := newSigner(t)
	fp := ssh.FingerprintSHA256(key.PublicKey())
	for _, name := range []string{"one", "two", "three"} {
		tm := play(t, h.keyedDial(name, key), 80, 24)
		tm.waitScreen("1 playing")
		if !testkit.Eventually(5*time.Second, func() bool { return owned(st, name, fp) }) {
			t.Fatalf("%s not claimed", name)
		}
		tm.send("q")
		tm.wait()
		time.Sleep(1100 * time.Millisecond) // claims' last use is kept in whole seconds: "one" is the oldest
	}
	tm := play(t, h.keyedDial("four", key), 80, 24)
	tm.waitScreen("four is yours; one is free again")
	if !owned(st, "four", fp) || owned(st, "one", fp) || !owned(st, "two", fp) || !owned(st, "three", fp) {
		t.Fatal("the fourth claim did not release the least recently played name alone")
	}
	tm.send("q")
	tm.wait()
	tm = play(t, h.dial("one"), 80, 24)
	tm.waitScreen("1 playing")
}

// TestClaimsPerAddress: past the hourly bound on new claims from one
// address a key still plays the name it asks for, unclaimed, and the
// banner says why; the names it holds stay its own.
func TestClaimsPerAddress(t *testing.T) {
	st := storeWith(t, scores.Options{ClaimsPerHour: 2})
	cfg := testConfig(t)
	cfg.Scores = st
	h := start(t, cfg, testWorld(t, 0))
	a, b := newSigner(t), newSigner(t)
	for _, name := range []string{"amy", "abe"} {
		tm := play(t, h.keyedDial(name, a), 80, 24)
		tm.waitScreen("1 playing")
		tm.send("q")
		tm.wait()
	}
	tm := play(t, h.keyedDial("bob", b), 80, 24)
	tm.waitScreen("bob is not kept: too many new names from here")
	if owned(st, "bob", ssh.FingerprintSHA256(b.PublicKey())) {
		t.Fatal("bob was claimed past the address's bound")
	}
	tm.send("q")
	tm.wait()
	tm = play(t, h.keyedDial("amy", a), 80, 24) // held: never limited
	tm.waitScreen("1 playing")
	if strings.Contains(tm.screen(), "not kept") {
		t.Fatalf("amy's own name was refused:\n%s", tm.screen())
	}
}

// TestNamesFailClosed: when the owner of a name cannot be learnt (the
// store errs, or is away), the name is not handed out: the join screen
// says so, and a guest name (never claimed) still gets in. A store that
// keeps no scores (scores.ErrOff) claims nothing: every name is free.
func TestNamesFailClosed(t *testing.T) {
	st := testStore(t)
	cs := &countingScores{Scores: st}
	cfg := testConfig(t)
	cfg.Scores = cs
	h := start(t, cfg, testWorld(t, 0))
	owner := newSigner(t)
	tm := play(t, h.keyedDial("vip", owner), 80, 24)
	tm.waitScreen("1 playing")
	tm.send("q")
	tm.wait()

	down := errors.New("the store is away")
	cs.fail.Store(&down)
	tm = play(t, h.dial("zed"), 80, 24)
	tm.waitScreen("cannot check names right now, try again or pick another")
	time.Sleep(paceGap)
	tm.send("\r") // empty: a guest name
	tm.waitScreen("1 playing")
	tm.send("q")
	tm.wait()

	off := scores.ErrOff
	cs.fail.Store(&off)
	tm = play(t, h.dial("zed"), 80, 24)
	tm.waitScreen("1 playing")
	tm.send("q")
	tm.wait()
	cs.fail.Store(nil)
	tm = play(t, h.dial("vip"), 80, 24)
	tm.waitScreen("belongs to a player with a key")
}

// TestOwnersCached: a player back under the name they hold asks the store
// nothing; a keyless player asking for a held name is refused from the
// cache too.
func TestOwnersCached(t *testing.T) {
	st := testStore(t)
	cs := &countingScores{Scores: st}
	cfg := testConfig(t)
	cfg.Scores = cs
	h := start(t, cfg, testWorld(t, 0))
	key := newSigner(t)
	tm := play(t, h.keyedDial("ace", key), 80, 24)
	tm.waitScreen("1 playing")
	tm.send("q")
	tm.wait()
	o, c := cs.owners.Load(), cs.claims.Load()
	if o != 1 || c != 1 {
		t.Fatalf("the first join asked %d owners and %d claims, want 1 and 1", o, c)
	}
	tm = play(t, h.keyedDial("ACE", key), 80, 24)
	tm.waitScreen("1 playing")
	tm.send("q")
	tm.wait()
	tm = play(t, h.dial("ace"), 80, 24)
	tm.waitScreen("belongs to a player with a key")
	if o, c := cs.owners.Load(), cs.claims.Load(); o != 1 || c != 1 {
		t.Fatalf("joins on a cached name asked %d owners and %d claims in all, want 1 and 1", o, c)
	}
}

// TestJoinFlood: several sessions paste Enter on the join screen as fast
// as they can, with names nobody owns; the tries are paced (only a few
// reach the store), and meanwhile a keyless client asking for a claimed
// name is refused every time, and the name's owner gets in.
func TestJoinFlood(t *testing.T) {
	st := testStore(t)
	cs := &countingScores{Scores: st}
	cfg := testConfig(t)
	cfg.Scores = cs
	h := start(t, cfg, testWorld(t, 0))
	owner := newSigner(t)
	tm := play(t, h.keyedDial("vip", owner), 80, 24)
	tm.waitScreen("1 playing")
	tm.send("q")
	tm.wait()
	floodJoins(t, h, cs, "vip", owner)
}

// floodJoins floods h's join screen from four sessions for a second
// while a keyless client asks for held (owned by owner's key) again and
// again, then checks the tries were paced and held was never handed out.
func floodJoins(t *testing.T, h *harness, cs *countingScores, held string, owner ssh.Signer) {
	t.Helper()
	before := cs.owners.Load()
	var floods []*term
	for range 4 {
		f := play(t, h.dial("root"), 80, 24) // a generic login: the join screen
		f.waitScreen("Pick a nickname")
		floods = append(floods, f)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, f := range floods {
		wg.Go(func() {
			for k := 0; ; k++ {
				select {
				case <-stop:
					return
				default:
				}
				// ever new names nobody owns, which the world then refuses
				// (bots' names): each try that is not paced asks the store,
				// and the session stays on the join screen
				f.send("\x15bot" + strconv.Itoa(1000*i+k) + "\r")
				if k%50 == 49 {
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
	start := time.Now()
	for time.Since(start) < time.Second {
		k := play(t, h.dial(held), 80, 24)
		k.waitScreen("belongs to a player with a key")
		k.send("\x03")
		k.wait()
	}
	o := play(t, h.keyedDial(held, owner), 80, 24)
	o.waitScreen("playing")
	if strings.Contains(o.screen(), "Pick a nickname") {
		t.Fatalf("the owner was refused during the flood:\n%s", o.screen())
	}
	close(stop)
	wg.Wait()
	took := time.Since(start)
	// Each flooding session reaches the store at most once per paceGap
	// (and less after refusals), whatever it sends; the keyless client's
	// tries are answered from the cache.
	most := int64(len(floods))*int64(took/paceGap+2) + 4
	if n := cs.owners.Load() - before; n > most {
		t.Fatalf("%d owner questions in %v from %d flooding sessions, want at most %d", n, took, len(floods), most)
	}
}

// TestJoinRefusedByHost: a join the host refuses because another key
// holds the name (a cluster's simulation checks every join again) or the
// name cannot be checked sends the player back to the join screen, told
// why.
func TestJoinRefusedByHost(t *testing.T) {
	w := testWorld(t, 0)
	kh := &keyHost{Host: w.Host(), keys: map[string]string{}}
	cfg := testConfig(t)
	cfg.Scores = testStore(t)
	h := startHost(t, cfg, w, kh)
	for _, c := range []struct {
		err  error
		want string
	}{{scores.ErrClaimed, "belongs to another key"}, {scores.ErrUnchecked, "cannot check names right now"}} {
		kh.refuse.Store(&c.err)
		tm := play(t, h.keyedDial("kay", newSigner(t)), 80, 24)
		tm.waitScreen(c.want)
		tm.send("\x03")
		tm.wait()
	}
}

// seatHost gives seats whose snakes its views never show (their IDs are
// off by a generation), and counts the leaves of each seat.
type seatHost struct {
	game.Host
	mu     sync.Mutex // guards joins and leaves
	joins  int
	leaves map[game.Seat]int
}

func (h *seatHost) Join(name, key string) (game.Seat, error) {
	s, err := h.Host.Join(name, key)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.joins++
	s.ID += 1 << 16
	s.Join = uint64(h.joins)
	return s, err
}

func (h *seatHost) Leave(s game.Seat) {
	h.mu.Lock()
	h.leaves[s]++
	h.mu.Unlock()
}

// TestRejoinLeavesOldSeat: a session whose snake the world does not show
// joins again, and lets its old seat go first, so a snake that was only
// late does not keep the name.
func TestRejoinLeavesOldSeat(t *testing.T) {
	w := testWorld(t, 0)
	sh := &seatHost{Host: w.Host(), leaves: map[game.Seat]int{}}
	h := startHost(t, testConfig(t), w, sh)
	play(t, h.dial("ray"), 80, 24)
	if !testkit.Eventually(10*time.Second, func() bool {
		sh.mu.Lock()
		defer sh.mu.Unlock()
		return sh.joins >= 2
	}) {
		t.Fatal("the session never joined again")
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	first := false
	for s, n := range sh.leaves {
		if s.Join == 1 && n == 1 {
			first = true
		}
	}
	if !first {
		t.Fatalf("the first seat was not left before the second join: leaves %v", sh.leaves)
	}
}

// lateHost gives seats whose snakes its views never show (their IDs are
// off by a generation) and whose world shows them only from ahead ticks
// after the join, as a gateway behind its simulation does; it notes the
// tick of the view the world had at each join.
type lateHost struct {
	game.Host
	ahead uint64
	world uint64       // the world its seats name (the views name none)
	views atomic.Int64 // views acquired
	mu    sync.Mutex   // guards seats, at and real
	seats []game.Seat
	at    []uint64
	real  map[game.Seat]game.Seat // the world's seat behind each given
}

func (h *lateHost) Join(name, key string) (game.Seat, error) {
	s, err := h.Host.Join(name, key)
	if err != nil {
		return s, err
	}
	v := h.Acquire()
	tick := v.Tick
	v.Release()
	given := s
	given.ID += 1 << 16
	given.Tick += h.ahead
	given.World = h.world
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seats = append(h.seats, given)
	h.at = append(h.at, tick)
	h.real[given] = s
	return given, nil
}

func (h *lateHost) Acquire() *game.View {
	h.views.Add(1)
	return h.Host.Acquire()
}

func (h *lateHost) Leave(s game.Seat) {
	h.mu.Lock()
	r, ok := h.real[s]
	h.mu.Unlock()
	if ok {
		h.Host.Leave(r)
	}
}

// TestNoRejoinBeforeTheJoin: views from before the tick a seat's snake
// shows from do not count as the snake lost, however many there are (a
// gateway behind its simulation); once the views pass that tick without
// the snake, the session joins again.
func TestNoRejoinBeforeTheJoin(t *testing.T) {
	w := testWorld(t, 0)
	const ahead = 2 * lostFrames
	lh := &lateHost{Host: w.Host(), ahead: ahead, real: map[game.Seat]game.Seat{}}
	h := startHost(t, testConfig(t), w, lh)
	play(t, h.dial("ray"), 80, 24)
	if !testkit.Eventually(20*time.Second, func() bool {
		lh.mu.Lock()
		defer lh.mu.Unlock()
		return len(lh.seats) >= 2
	}) {
		t.Fatal("the session never joined again")
	}
	lh.mu.Lock()
	defer lh.mu.Unlock()
	first, again := lh.seats[0], lh.at[1]
	if first.Tick < lh.at[0]+ahead {
		t.Fatalf("the first seat shows from tick %d, joined at %d", first.Tick, lh.at[0])
	}
	// the first view that counts is the seat's tick; lostFrames of them
	if again < first.Tick+lostFrames-1 {
		t.Fatalf("joined again at tick %d, before %d views from tick %d (the seat's) had passed", again, lostFrames, first.Tick)
	}
	if !testkit.Eventually(5*time.Second, func() bool { return counter(t, h.srv.m.rejoins) >= 1 }) {
		t.Fatal("snaked_rejoins_total did not count the join again")
	}
}

// TestNoRejoinWithoutAWorld: while the views show no world (a gateway
// before its first snapshot) and the seat names one, the session does not
// take its snake for lost.
func TestNoRejoinWithoutAWorld(t *testing.T) {
	w := testWorld(t, 0)
	lh := &lateHost{Host: w.Host(), world: 7, real: map[game.Seat]game.Seat{}}
	h := startHost(t, testConfig(t), w, lh)
	play(t, h.dial("ray"), 80, 24)
	joined := func() int { lh.mu.Lock(); defer lh.mu.Unlock(); return len(lh.seats) }
	if !testkit.Eventually(10*time.Second, func() bool { return joined() == 1 }) {
		t.Fatal("the session did not join")
	}
	from := lh.views.Load()
	if !testkit.Eventually(20*time.Second, func() bool { return lh.views.Load() >= from+3*lostFrames }) {
		t.Fatalf("only %d frames drawn", lh.views.Load()-from)
	}
	if n := joined(); n != 1 {
		t.Fatalf("%d joins: the session took its snake for lost in views of no world", n)
	}
}
