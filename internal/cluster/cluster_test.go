package cluster

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"snaked/game"
	"snaked/internal/cluster/wire"
	"snaked/internal/scores"
	"snaked/internal/testkit"
)

// link is an embedded NATS on loopback, a world, its Sim and a gateway
// named "gw", all under the prefix "t".
type link struct {
	t    *testing.T
	url  string
	w    *game.World
	sim  *Sim
	gw   *Gateway
	raw  *nats.Conn // a third client, gateway "raw" of prefix "t", for foreign messages
	tick uint64
}

func newLink(t *testing.T, lease time.Duration, maxSnakes int) *link {
	t.Helper()
	return newLinkWith(t, lease, maxSnakes, nil)
}

// newLinkWith is newLink with the Sim's options simOpts and the
// gateway's gwOpts.
func newLinkWith(t *testing.T, lease time.Duration, maxSnakes int, simOpts []SimOption, gwOpts ...GatewayOption) *link {
	t.Helper()
	gc := game.DefaultConfig()
	gc.W, gc.H, gc.MaxSnakes, gc.Bots, gc.Seed = 128, 64, maxSnakes, 0, 3
	l := newSimLink(t, gc, lease, simOpts...)
	var err error
	if l.gw, err = NewGateway(l.conn("t", "gw"), "t", "gw", localViews{l.w}, lease, gwOpts...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.gw.Close)
	return l
}

// newSimLink is a link of world gc and a Sim with opts, without its
// gateway.
func newSimLink(t *testing.T, gc game.Config, lease time.Duration, opts ...SimOption) *link {
	t.Helper()
	ns, err := Embed("127.0.0.1:0", Auth{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	l := &link{t: t, url: ns.ClientURL()}
	if l.w, err = game.New(gc); err != nil {
		t.Fatal(err)
	}
	if l.sim, err = NewSim(l.conn("t", ""), l.w, "t", lease, opts...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.sim.Close)
	l.raw = l.conn("t", "raw")
	return l
}

// conn connects to l's NATS as gateway name of prefix ("" for a
// simulation), closed with the test.
func (l *link) conn(prefix, name string) *nats.Conn {
	l.t.Helper()
	nc, err := Connect(Options{URL: l.url, Name: name, Prefix: prefix, Gateway: name})
	if err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(nc.Close)
	return nc
}

// localViews is a local world as a gateway's views, always ticking.
type localViews struct{ *game.World }

func (localViews) Live(time.Duration) bool { return true }
func (localViews) Behind() int             { return 0 }

func (l *link) step() {
	l.tick++
	l.w.Step(l.tick)
}

func (l *link) snake(id game.ID) (testkit.Snake, bool) {
	v := l.w.Acquire()
	defer v.Release()
	s, ok := v.Snake(id)
	if !ok {
		return testkit.Snake{}, false
	}
	d, _ := l.w.Heading(id)
	return testkit.Snake{SnakeInfo: *s, Head: v.Heads[id.Slot()], Dir: d}, true
}

// TestJoinAndInputs: a gateway's join gets a snake in the simulation's
// world with the same answers as a local one (a taken name, a full world);
// its turns reach the snake.
func TestJoinAndInputs(t *testing.T) {
	l := newLink(t, time.Second, 2)
	ada, err := l.gw.Join("ada", "")
	if err != nil {
		t.Fatal(err)
	}
	if ada.World != l.sim.Instance() || ada.Join == 0 {
		t.Fatalf("ada's seat %+v does not name the simulation and the join", ada)
	}
	id := ada.ID
	for range 3 {
		l.step()
	}
	s, ok := l.snake(id)
	if !ok || s.Name != "ada" || !s.Alive {
		t.Fatalf("ada not in the world: %+v", s)
	}
	if _, err := l.gw.Join("ADA", ""); !errors.Is(err, game.ErrNameTaken) {
		t.Errorf("second ada: %v, want game.ErrNameTaken", err)
	}
	if _, err := l.gw.Join("bo", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := l.gw.Join("cy", ""); !errors.Is(err, game.ErrFull) {
		t.Errorf("third snake in a world for two: %v, want game.ErrFull", err)
	}
	d := game.Up
	if s.Dir == game.Up || s.Dir == game.Down {
		d = game.Left
	}
	l.gw.Turn(ada, d)
	if !testkit.Eventually(2*time.Second, func() bool { return l.sim.Stats().Inputs >= 1 }) {
		t.Fatal("the turn never reached the simulation")
	}
	l.step()
	if s, _ := l.snake(id); s.Dir != d {
		t.Errorf("heading %v after the turn, want %v", s.Dir, d)
	}
	l.gw.Leave(ada)
	if !testkit.Eventually(2*time.Second, func() bool { l.step(); _, ok := l.snake(id); return !ok }) {
		t.Error("ada did not leave")
	}
}

// TestForeignAndBad: inputs that do not name the whole seat a join gave
// (another gateway's name or instance, another snake, another join,
// another simulation instance), and bytes that are no message, are
// dropped and counted; the snake is not touched.
func TestForeignAndBad(t *testing.T) {
	l := newLink(t, time.Second, 4)
	dee, err := l.gw.Join("dee", "")
	if err != nil {
		t.Fatal(err)
	}
	l.step()
	own := seatInput(inLeave, l.gw.ID(), dee, game.None)
	for _, f := range []struct {
		subj string
		in   input
	}{
		{"t.gw.raw.input", own}, // the same message under another gateway's name
		{"t.gw.gw.input", func() input { in := own; in.gw += 2; return in }()},       // another instance of the gateway
		{"t.gw.gw.input", func() input { in := own; in.id += 1 << 16; return in }()}, // another snake
		{"t.gw.gw.input", func() input { in := own; in.join++; return in }()},        // another join
		{"t.gw.gw.input", func() input { in := own; in.sim += 2; return in }()},      // another world
	} {
		if err := l.raw.Publish(f.subj, appendInput(nil, f.in)); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range []string{"", "\x00", "\x01\x09\x01\x01\x00", "garbage that is long enough to be anything", "\x01\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"} {
		for _, subj := range []string{"t.gw.raw.input", "t.gw.raw.hb", "t.gw.raw.join"} {
			if err := l.raw.Publish(subj, []byte(b)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// a good message under a name that is no subject token
	if err := l.raw.Publish("t.gw.r@w.hb", appendHeartbeat(nil, heartbeat{gw: 1})); err != nil {
		t.Fatal(err)
	}
	if !testkit.Eventually(2*time.Second, func() bool { st := l.sim.Stats(); return st.Foreign == 5 && st.Bad == 16 }) {
		t.Fatalf("stats %+v, want 5 foreign and 16 bad", l.sim.Stats())
	}
	// the gateway hears the heartbeats too, and counts the 6 bad ones
	if !testkit.Eventually(2*time.Second, func() bool { return l.gw.Stats().Bad == 6 }) {
		t.Fatalf("gateway stats %+v, want 6 bad", l.gw.Stats())
	}
	l.step()
	if _, ok := l.snake(dee.ID); !ok {
		t.Error("a foreign leave removed the snake")
	}
}

// TestDefaultLease: with the default lease, the snakes of a gateway that
// goes silent (its heartbeats stop, as when its process dies) leave the
// world within the 3 s.
func TestDefaultLease(t *testing.T) {
	l := newLink(t, 0, 4)
	fay, err := l.gw.Join("fay", "")
	if err != nil {
		t.Fatal(err)
	}
	id := fay.ID
	l.step()
	l.gw.Close()
	dead := time.Now()
	if !testkit.Eventually(5*time.Second, func() bool { l.step(); _, ok := l.snake(id); return !ok }) {
		t.Fatal("fay's snake outlived her gateway")
	}
	if took := time.Since(dead); took > 3*time.Second {
		t.Fatalf("fay's snake left %v after her gateway went silent, want at most 3 s", took)
	}
}

// TestJoinKeyAndLeave: a player's key fingerprint travels with the join
// and the simulation keeps it with the snake; a leave is answered, and
// takes the snake and its key away.
func TestJoinKeyAndLeave(t *testing.T) {
	l := newLink(t, time.Second, 4)
	kims, err := l.gw.Join("kim", "SHA256:kimskey")
	if err != nil {
		t.Fatal(err)
	}
	lous, err := l.gw.Join("lou", "")
	if err != nil {
		t.Fatal(err)
	}
	kim, lou := kims.ID, lous.ID
	if k := l.sim.Key(kim); k != "SHA256:kimskey" {
		t.Errorf("kim's key at the simulation: %q", k)
	}
	if k := l.sim.Key(lou); k != "" {
		t.Errorf("keyless lou has key %q at the simulation", k)
	}
	l.step()
	l.gw.wait.Store(int64(300 * time.Millisecond)) // an unanswered try would come again soon
	l.gw.Leave(kims)
	if !testkit.Eventually(3*time.Second, func() bool { l.step(); _, ok := l.snake(kim); return !ok && l.sim.Key(kim) == "" }) {
		t.Fatal("kim's leave did not take")
	}
	if _, ok := l.snake(lou); !ok {
		t.Fatal("lou left with kim")
	}
	// Once the gateway has its answer it tries the leave no more, and the
	// simulation answers a try only after it has taken it and every try
	// before it: a second try would show here as a foreign input (the
	// snake being gone).
	if !testkit.Eventually(3*time.Second, func() bool { return l.gw.Stats().Acked == 1 }) {
		t.Fatalf("gateway stats %+v: the leave was not acknowledged", l.gw.Stats())
	}
	if st := l.gw.Stats(); st.Lost != 0 {
		t.Errorf("gateway stats %+v", st)
	}
	if st := l.sim.Stats(); st.Foreign != 0 {
		t.Errorf("sim stats %+v: the leave went more than once", st)
	}
}

// TestJoinCancel: a join the gateway stopped waiting for is cancelled by
// its nonce, so the snake it may have made does not stay without its
// player (holding the name); a cancel that comes before its join makes
// the simulation refuse the join.
func TestJoinCancel(t *testing.T) {
	l := newLink(t, time.Second, 4)
	// The answer nearly always comes too late for a wait of 1 ns; when it
	// does not (a select finding the answer and the timer both ready),
	// that join is a plain one: its snake leaves and another name tries.
	l.gw.wait.Store(int64(time.Nanosecond))
	name, answered := "", 0
	for ; ; answered++ {
		name = fmt.Sprint("mo", answered)
		seat, err := l.gw.Join(name, "SHA256:"+name)
		if errors.Is(err, ErrNoSim) {
			break
		}
		if err != nil || answered == 20 {
			t.Fatalf("join %d: %v (want no answer within 1 ns)", answered, err)
		}
		l.gw.Leave(seat)
		if !testkit.Eventually(3*time.Second, func() bool { l.step(); _, ok := testkit.SnakeNamed(l.w, name); return !ok }) {
			t.Fatalf("%s stayed after leaving", name)
		}
	}
	// both the join and its cancel must have come (either order) before
	// the step that would apply them: a join alone has no snake yet either
	if !testkit.Eventually(3*time.Second, func() bool {
		st := l.sim.Stats()
		l.step()
		_, ok := testkit.SnakeNamed(l.w, name)
		return !ok && st.Joins == uint64(answered+1) && st.Inputs >= uint64(answered+1)
	}) {
		t.Fatalf("%s's snake stayed after the gateway gave up on its join (sim stats %+v)", name, l.sim.Stats())
	}
	l.gw.wait.Store(int64(2 * time.Second))
	if _, err := l.gw.Join(name, ""); err != nil {
		t.Fatalf("%s's name is still held: %v", name, err)
	}

	// a cancel before its join
	ask := func(subj string, b []byte) []byte {
		t.Helper()
		m, err := l.raw.Request(subj, b, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return m.Data
	}
	ask("t.gw.raw.input", appendInput(nil, input{kind: inCancel, gw: 77, join: 5}))
	rep, err := decodeJoinRep(ask("t.gw.raw.join", appendJoinReq(nil, joinReq{gw: 77, name: "nan", nonce: 5})))
	if err != nil || rep.status != joinFailed {
		t.Fatalf("a cancelled join answered %+v, %v", rep, err)
	}
	l.step()
	if _, ok := testkit.SnakeNamed(l.w, "nan"); ok {
		t.Fatal("a cancelled join made a snake")
	}
}

// TestLeaveOtherInstance: a leave for a snake that another instance of
// the simulation gave (retried across a restart) is answered and dropped:
// the same ID in this world is another player's.
func TestLeaveOtherInstance(t *testing.T) {
	l := newLink(t, time.Second, 4)
	pat, err := l.gw.Join("pat", "")
	if err != nil {
		t.Fatal(err)
	}
	id := pat.ID
	l.step()
	other := pat
	other.World += 2
	m, err := l.gw.nc.Request("t.gw.gw.input", appendInput(nil, seatInput(inLeave, l.gw.ID(), other, game.None)), 2*time.Second)
	if err != nil || len(m.Data) != 1 || m.Data[0] != leaveDone {
		t.Fatalf("a leave of another instance: %v %v", m, err)
	}
	l.step()
	if _, ok := l.snake(id); !ok {
		t.Fatal("a leave of another instance took this world's snake")
	}
	if st := l.sim.Stats(); st.Foreign != 1 {
		t.Errorf("sim stats %+v, want 1 foreign", st)
	}
	l.gw.Leave(pat) // the gateway's own names this instance
	if !testkit.Eventually(3*time.Second, func() bool { l.step(); _, ok := l.snake(id); return !ok }) {
		t.Fatal("pat's own leave did not take")
	}
}

// TestPrefixes: two worlds share one NATS under two prefixes. Each world
// has only the snakes joined through its own prefix, a follower of one
// prefix builds that world (not the other), and a leave or a turn for one
// never reaches the other.
func TestPrefixes(t *testing.T) {
	l := newLink(t, time.Second, 4) // world "t"
	gc := game.DefaultConfig()
	gc.W, gc.H, gc.MaxSnakes, gc.Bots, gc.Seed = 96, 48, 4, 0, 8
	w2, err := game.New(gc)
	if err != nil {
		t.Fatal(err)
	}
	sim2, err := NewSim(l.sim.nc, w2, "u", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer sim2.Close()
	u := l.conn("u", "gw")
	gw2, err := NewGateway(u, "u", "gw", localViews{w2}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer gw2.Close()
	a, err := l.gw.Join("ada", "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := gw2.Join("bo", "")
	if err != nil {
		t.Fatal(err)
	}
	l.step()
	w2.Step(1)
	if _, ok := testkit.SnakeNamed(l.w, "bo"); ok {
		t.Fatal("world t has u's snake")
	}
	if _, ok := testkit.SnakeNamed(w2, "ada"); ok {
		t.Fatal("world u has t's snake")
	}
	pub2, err := NewPublisher(l.sim.nc, w2, "u", sim2.Instance())
	if err != nil {
		t.Fatal(err)
	}
	defer pub2.Close()
	f, err := NewFollower(u, "u", "gw", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tick2 := uint64(1)
	if !testkit.Eventually(5*time.Second, func() bool {
		tick2++
		w2.Step(tick2)
		if err := pub2.Ticked(); err != nil {
			t.Fatal(err)
		}
		return f.Synced()
	}) {
		t.Fatal("the follower of u never synced")
	}
	if v := f.Acquire(); v.W != 96 || v.H != 48 {
		v.Release()
		t.Fatalf("the follower of u built a %dx%d world", v.W, v.H)
	} else {
		v.Release()
	}
	l.gw.Leave(a)
	if !testkit.Eventually(3*time.Second, func() bool { l.step(); _, ok := l.snake(a.ID); return !ok }) {
		t.Fatal("ada's leave did not take")
	}
	w2.Step(tick2 + 1)
	if _, ok := testkit.SnakeNamed(w2, "bo"); !ok {
		t.Fatalf("bo (%v) left with ada", b)
	}
	if st := sim2.Stats(); st.Foreign != 0 || st.Bad != 0 {
		t.Errorf("u's sim saw t's messages: %+v", st)
	}
}

// TestLeaveRetried: a leave is a request the gateway sends again until it
// is answered (here the third time), and counts as lost when nobody
// answers within the gateway's leaveFor.
func TestLeaveRetried(t *testing.T) {
	l := newLink(t, time.Second, 4)
	g, err := NewGateway(l.conn("nosim", "gw"), "nosim", "gw", localViews{l.w}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var asked atomic.Int32
	sub, err := l.raw.Subscribe("nosim.gw.gw.input", func(m *nats.Msg) {
		in, err := decodeInput(m.Data)
		if err != nil || in.kind != inLeave || asked.Add(1) < 3 {
			return
		}
		_ = m.Respond([]byte{leaveDone})
	})
	if err != nil {
		t.Fatal(err)
	}
	g.Leave(game.Seat{ID: 7, World: 1, Join: 1})
	// Acked counts the leave once its answer is in: the leaver is done
	// with it and sends it no more.
	if !testkit.Eventually(10*time.Second, func() bool { return g.Stats().Acked == 1 }) {
		t.Fatalf("%d leave requests, gateway stats %+v: want the third answered", asked.Load(), g.Stats())
	}
	if n := asked.Load(); n != 3 {
		t.Fatalf("%d leave requests, want 3 (the third answered)", n)
	}
	if st := g.Stats(); st.Lost != 0 {
		t.Errorf("gateway stats %+v: an answered leave counted lost", st)
	}
	_ = sub.Unsubscribe()
	quick, err := NewGateway(l.conn("nosim", "gw"), "nosim", "gw", localViews{l.w}, time.Second,
		func(g *Gateway) { g.leaveFor = 300 * time.Millisecond })
	if err != nil {
		t.Fatal(err)
	}
	defer quick.Close()
	quick.Leave(game.Seat{ID: 8, World: 1, Join: 2})
	if !testkit.Eventually(5*time.Second, func() bool { return quick.Stats().Lost == 1 }) {
		t.Fatalf("gateway stats %+v, want one leave lost", quick.Stats())
	}
	if st := quick.Stats(); st.Acked != 0 {
		t.Errorf("gateway stats %+v: an unanswered leave counted acknowledged", st)
	}
}

// TestBadSnapshot: a snapshot answer that never decodes is counted, and
// the follower asks again.
func TestBadSnapshot(t *testing.T) {
	l := newLink(t, time.Second, 4)
	var asked atomic.Int32
	sub, err := l.raw.Subscribe("junk.gw.gw.snapshot", func(m *nats.Msg) {
		asked.Add(1)
		_ = m.Respond(append(appendStream(nil, 5), "\x02\x02 not a chunk"...))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	f, err := newFollower(l.conn("junk", "gw"), "junk", "gw", 0, nil, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !testkit.Eventually(5*time.Second, func() bool { return f.Stats().Bad >= 2 && asked.Load() >= 2 }) {
		t.Fatalf("follower stats %+v after %d answers of junk", f.Stats(), asked.Load())
	}
	if f.Synced() {
		t.Fatal("synced from junk")
	}
}

// TestGatewayLease: a gateway that stops its heartbeats loses its
// players' snakes after the lease.
func TestGatewayLease(t *testing.T) {
	const lease = 300 * time.Millisecond
	l := newLink(t, lease, 4)
	eve, err := l.gw.Join("eve", "")
	if err != nil {
		t.Fatal(err)
	}
	id := eve.ID
	l.step()
	time.Sleep(2 * lease) // heartbeats keep it
	l.step()
	if _, ok := l.snake(id); !ok {
		t.Fatal("eve left while her gateway was alive")
	}
	l.gw.Close()
	// Gone within the 3 s (the lease here is a tenth of that).
	if !testkit.Eventually(3*time.Second, func() bool { l.step(); _, ok := l.snake(id); return !ok }) {
		t.Fatal("eve's snake outlived her gateway")
	}
	if l.sim.Stats().Expired != 1 {
		t.Errorf("stats %+v", l.sim.Stats())
	}
}

// TestLateHeartbeats: a gateway whose heartbeats are held up past the
// lease (its goroutine waits, as on a gateway short of CPU) counts and
// logs the late one, and the simulation has removed its player's snake
// meanwhile, and logged that.
func TestLateHeartbeats(t *testing.T) {
	const lease = 300 * time.Millisecond
	simLog, gwLog := &testkit.SyncBuf{}, &testkit.SyncBuf{}
	l := newLinkWith(t, lease, 4, []SimOption{WithSimLog(slog.New(slog.NewTextHandler(simLog, nil)))},
		WithGatewayLog(slog.New(slog.NewTextHandler(gwLog, nil))))
	eve, err := l.gw.Join("eve", "")
	if err != nil {
		t.Fatal(err)
	}
	l.step()
	time.Sleep(2 * lease)
	if st := l.gw.Stats(); st.Late != 0 || gwLog.String() != "" || simLog.String() != "" {
		t.Fatalf("stats %+v: heartbeats late while the gateway was free; logged:\n%s%s", st, gwLog, simLog)
	}
	l.gw.mu.Lock() // the heartbeats' goroutine waits here after its next beat
	time.Sleep(3 * lease)
	l.gw.mu.Unlock()
	if !testkit.Eventually(2*time.Second, func() bool { return l.gw.Stats().Late == 1 }) {
		t.Fatalf("stats %+v: want the beat after the wait counted late", l.gw.Stats())
	}
	l.step()
	if _, ok := l.snake(eve.ID); ok || l.sim.Stats().Expired != 1 {
		t.Fatalf("eve's snake is still there (%v) or not counted expired (%+v) after her gateway beat late", ok, l.sim.Stats())
	}
	if g := gwLog.String(); strings.Count(g, "heartbeat late") != 1 || !strings.Contains(g, "lease=300ms") {
		t.Errorf("the gateway logged, want one late heartbeat:\n%s", g)
	}
	if s := simLog.String(); strings.Count(s, "level=WARN msg=\"gateway silent past its lease") != 1 || !strings.Contains(s, "gateway=gw") || !strings.Contains(s, "snakes=1") {
		t.Errorf("the simulation logged, want gw silent with 1 snake:\n%s", s)
	}
}

// TestGatewayCounts: each gateway hears the others' counts (SetLocal's)
// from their heartbeats, which its banner adds to its own sessions'; a
// gateway that goes silent drops out after the lease.
func TestGatewayCounts(t *testing.T) {
	const lease = 300 * time.Millisecond
	l := newLink(t, lease, 4)
	other, err := NewGateway(l.raw, "t", "raw", localViews{l.w}, lease)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if p, s := l.gw.Others(); p != 0 || s != 0 {
		t.Fatalf("alone, the others count %d %d, want 0 0", p, s)
	}
	l.gw.SetLocal(2, 3)
	other.SetLocal(5, 7)
	others := func(g *Gateway, p, s int) func() bool {
		return func() bool { gp, gs := g.Others(); return gp == p && gs == s }
	}
	if !testkit.Eventually(2*time.Second, others(l.gw, 5, 7)) || !testkit.Eventually(2*time.Second, others(other, 2, 3)) {
		p, s := l.gw.Others()
		q, r := other.Others()
		t.Fatalf("the others count %d %d and %d %d, want 5 7 and 2 3", p, s, q, r)
	}
	other.Close()
	if !testkit.Eventually(5*lease, others(l.gw, 0, 0)) {
		p, s := l.gw.Others()
		t.Fatalf("after the other gateway left, the others count %d %d, want 0 0", p, s)
	}
}

// TestNoSim: with nobody answering, a join fails with ErrNoSim.
func TestNoSim(t *testing.T) {
	l := newLink(t, time.Second, 4)
	l.sim.Close()
	l.gw.wait.Store(int64(200 * time.Millisecond))
	if _, err := l.gw.Join("fay", ""); !errors.Is(err, ErrNoSim) {
		t.Fatalf("join without a simulation: %v", err)
	}
}

// TestEmbedAndConnect: the embedded server listens on loopback unless
// told otherwise; Connect refuses half a client certificate and no URL.
func TestEmbedAndConnect(t *testing.T) {
	ns, err := Embed(":0", Auth{})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Shutdown()
	if !strings.HasPrefix(ns.ClientURL(), "nats://127.0.0.1:") {
		t.Errorf("embedded NATS at %s, want loopback", ns.ClientURL())
	}
	if _, err := Embed("nope", Auth{}); err == nil {
		t.Error("Embed accepted an address without a port")
	}
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "10.1.2.3:0", "example.com:0"} {
		if open, err := Embed(addr, Auth{}); err == nil {
			open.Shutdown()
			t.Errorf("Embed admits anyone on %s", addr)
		}
	}
	if _, err := Embed(":0", Auth{Password: "pw"}); err == nil {
		t.Error("Embed accepted a password without a user")
	}
	if _, err := Embed(":0", Auth{User: "a", Password: "b", Users: []User{{RoleSim, "sim", "pw"}}}); err == nil {
		t.Error("Embed accepted both a users list and one user")
	}
	// with a user, only clients with its password get in
	sec, err := Embed(":0", Auth{User: "sim", Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	defer sec.Shutdown()
	for _, o := range []Options{{}, {User: "sim", Password: "wrong"}, {User: "other", Password: "s3cret"}} {
		o.URL = sec.ClientURL()
		if nc, err := nats.Connect(o.URL, nats.UserInfo(o.User, o.Password), nats.NoReconnect()); err == nil {
			nc.Close()
			t.Errorf("connected to the secured embedded NATS as %q/%q", o.User, o.Password)
		}
	}
	nc, err := Connect(Options{URL: sec.ClientURL(), User: "sim", Password: "s3cret"})
	if err != nil {
		t.Fatalf("the right user and password: %v", err)
	}
	nc.Close()
	if _, err := Connect(Options{}); err == nil {
		t.Error("Connect without a URL")
	}
	if _, err := Connect(Options{URL: ns.ClientURL(), Cert: "c.pem"}); err == nil {
		t.Error("Connect with a certificate and no key")
	}
}

// FuzzWire: no bytes panic the decoders, and what they accept encodes
// back to the same bytes.
func FuzzWire(f *testing.F) {
	f.Add(appendInput(nil, input{kind: inTurn, gw: 7, id: 1<<16 | 3, dir: game.Up, sim: 5, join: 9}))
	f.Add(appendJoinReq(nil, joinReq{gw: 9, name: "ann", key: "SHA256:x", nonce: 300}))
	f.Add(appendInput(nil, input{kind: inCancel, gw: 9, join: 300}))
	f.Add(appendInput(nil, input{kind: inLeave, gw: 9, id: 1<<16 | 2, sim: 12345, join: 4}))
	f.Add(appendJoinRep(nil, joinRep{status: joinOK, id: 1<<16 | 2, sim: 12345, tick: 7}))
	f.Add(appendJoinRep(nil, joinRep{status: joinTaken, msg: "no"}))
	f.Add(appendHeartbeat(nil, heartbeat{gw: 5, players: 12, spectators: 300}))
	f.Add(appendStream([]byte(nil), 77))
	f.Add([]byte{wireVersion, 5})          // a heartbeat without counts
	f.Add([]byte{wireVersion, 0x80, 0x00}) // a varint that is not minimal
	f.Fuzz(func(t *testing.T, b []byte) {
		if in, err := decodeInput(b); err == nil && string(appendInput(nil, in)) != string(b) {
			t.Errorf("input %+v re-encodes differently", in)
		}
		if j, err := decodeJoinReq(b); err == nil && string(appendJoinReq(nil, j)) != string(b) {
			t.Errorf("join request %+v re-encodes differently", j)
		}
		if j, err := decodeJoinRep(b); err == nil && string(appendJoinRep(nil, j)) != string(b) {
			t.Errorf("join reply %+v re-encodes differently", j)
		}
		if h, err := decodeHeartbeat(b); err == nil && string(appendHeartbeat(nil, h)) != string(b) {
			t.Errorf("heartbeat %+v re-encodes differently", h)
		}
		if sim, msg, err := decodeStream(b); err == nil && string(append(appendStream(nil, sim), msg...)) != string(b) {
			t.Errorf("stream header of %d re-encodes differently", sim)
		}
	})
}

// published returns a world of w x h pixels (capacity, bots, seed)
// streamed on l's simulation connection under prefix, its publisher
// (closed with the test), its tick, and a step that steps it and
// publishes.
func published(t *testing.T, l *link, w, h, capacity, bots int, seed uint64, prefix string, set ...func(*game.Config)) (*game.World, *Publisher, *uint64, func()) {
	t.Helper()
	gc := game.DefaultConfig()
	gc.W, gc.H, gc.MaxSnakes, gc.Bots, gc.Seed = w, h, capacity, bots, seed
	for _, f := range set {
		f(&gc)
	}
	world, err := game.New(gc)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := NewPublisher(l.sim.nc, world, prefix, seed+100)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pub.Close)
	tick := new(uint64)
	return world, pub, tick, func() {
		*tick++
		world.Step(*tick)
		if err := pub.Ticked(); err != nil {
			t.Fatal(err)
		}
	}
}

// ownFollowed publishes l's own world as its simulation's (prefix "t")
// and follows it with follower "fw", both closed with the test; step
// steps the world and publishes the tick.
func ownFollowed(t *testing.T, l *link) (pub *Publisher, f *Follower, step func()) {
	t.Helper()
	pub, err := NewPublisher(l.sim.nc, l.w, "t", l.sim.Instance())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pub.Close)
	if f, err = NewFollower(l.conn("t", "fw"), "t", "fw", 0, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return pub, f, func() {
		l.step()
		if err := pub.Ticked(); err != nil {
			t.Fatal(err)
		}
	}
}

// followed returns gateway "gw" on l following the world streamed under
// prefix (onTick as NewFollower takes it), both closed with the test.
func followed(t *testing.T, l *link, prefix string, onTick func()) (*Follower, *Gateway) {
	t.Helper()
	r := l.conn(prefix, "gw")
	f, err := NewFollower(r, prefix, "gw", 0, onTick)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	g, err := NewGateway(r, prefix, "gw", f, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return f, g
}

// TestSnapshotWaitsForRounds: while the lock a clock holds around each
// round (Publisher.Rounds) is held, the snapshot writer does not write the
// snapshot a follower asked for; once it is free, the follower gets it.
func TestSnapshotWaitsForRounds(t *testing.T) {
	l := newLink(t, time.Second, 32)
	_, pub, _, step := published(t, l, 128, 64, 32, 12, 5, "q")
	step()
	rounds := pub.Rounds()
	rounds.Lock()
	var once sync.Once
	unlock := func() { once.Do(rounds.Unlock) }
	defer unlock() // before the cleanups: Publisher.Close waits for the writer
	f, err := NewFollower(l.conn("q", "gw"), "q", "gw", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !testkit.Eventually(5*time.Second, func() bool { step(); return pub.busy.Load() }) {
		t.Fatal("the follower's request never reached the writer")
	}
	time.Sleep(200 * time.Millisecond)
	if st := pub.Stats(); st.Snapshots != 0 || f.Synced() {
		t.Fatalf("stats %+v, synced %v: a snapshot written while a step held the lock", st, f.Synced())
	}
	unlock()
	if !testkit.Eventually(5*time.Second, func() bool { step(); return f.Synced() }) {
		t.Fatalf("no snapshot once the lock was free: stats %+v", pub.Stats())
	}
}

// TestStreamViewsHeld: while readers hold every view buffer of the world
// (its publishes are skipped, so no view of the tick is there to write a
// snapshot from later) a follower that joins still gets its snapshot, which
// the publisher then writes in Ticked, and follows the world.
func TestStreamViewsHeld(t *testing.T) {
	l := newLink(t, time.Second, 32)
	w, pub, tick, step := published(t, l, 128, 64, 32, 12, 5, "h")
	var held []*game.View
	for range 12 {
		held = append(held, w.Acquire())
		step()
	}
	if w.Skipped() == 0 || wire.SnapshotLater(w) != nil {
		t.Fatal("publishes not skipped with every view held")
	}
	f, err := NewFollower(l.conn("h", "gw"), "h", "gw", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !testkit.Eventually(5*time.Second, func() bool { step(); return f.Synced() }) {
		t.Fatal("the follower never got a snapshot")
	}
	for _, v := range held {
		v.Release()
	}
	for range 5 {
		step()
	}
	if !testkit.Eventually(5*time.Second, func() bool {
		v := f.Acquire()
		defer v.Release()
		return v.Tick == *tick
	}) {
		t.Fatalf("the follower did not follow to tick %d: stats %+v", *tick, f.Stats())
	}
	if n := pub.Stats().Snapshots; n < 1 {
		t.Fatalf("%d snapshots written", n)
	}
}

// TestStream: a follower joining late builds a replica from a snapshot and
// then follows the simulation's deltas; after every tick its view equals
// the world's (pixels, snakes, leaderboard); a follower that misses deltas
// resyncs from a new snapshot. The same holds of a world whose views carry
// pixels only when asked for (game.Config.LazyPixels, as the simulation's
// is built), whose publisher asks for them a tick before each snapshot.
func TestStream(t *testing.T) {
	for _, lazy := range []bool{false, true} {
		t.Run(fmt.Sprintf("lazy=%v", lazy), func(t *testing.T) { testStream(t, lazy) })
	}
}

func testStream(t *testing.T, lazy bool) {
	l := newLink(t, time.Second, 64)
	w, _, tick, step := published(t, l, 256, 128, 64, 24, 9, "s", func(c *game.Config) { c.LazyPixels = lazy })
	for range 20 {
		step()
	}
	ticked := make(chan struct{}, 1024)
	s := l.conn("s", "gw")
	f, err := NewFollower(s, "s", "gw", 0, func() { ticked <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// The snapshot is answered between ticks: keep ticking until synced.
	asked := false // a view of the world had pixels: a lazy world's, when asked for
	if !testkit.Eventually(5*time.Second, func() bool {
		step()
		v := w.Acquire()
		asked = asked || !v.NoPixels
		v.Release()
		return f.Synced()
	}) {
		t.Fatal("the follower never got a snapshot")
	}
	if !asked {
		t.Fatal("the snapshot was written without a view of its tick with pixels")
	}
	same := func() bool {
		wv, fv := w.Acquire(), f.Acquire()
		defer wv.Release()
		defer fv.Release()
		if wv.Tick != fv.Tick || wv.W != fv.W || len(wv.Snakes) != len(fv.Snakes) || len(wv.Top) != len(fv.Top) {
			return false
		}
		pix := wv.Pix
		if wv.NoPixels && !lazy {
			t.Errorf("tick %d: a view without pixels in a world built without LazyPixels", wv.Tick)
		}
		if wv.NoPixels {
			pix = w.Feed().Pixels() // the world is at wv.Tick: only this goroutine steps it
		}
		for i := range pix {
			if pix[i] != fv.Pix[i] {
				return false
			}
		}
		for i := range wv.Snakes {
			a, b := wv.Snakes[i], fv.Snakes[i]
			if a.ID != b.ID || wv.Heads[i] != fv.Heads[i] || a.Length != b.Length || a.Alive != b.Alive || a.Name != b.Name {
				return false
			}
		}
		return true
	}
	bare := 0 // ticks whose view has no pixels
	for range 50 {
		step()
		v := w.Acquire()
		if v.NoPixels {
			bare++
		}
		v.Release()
		if !testkit.Eventually(2*time.Second, same) {
			t.Fatalf("tick %d: the follower's view differs from the world's (stats %+v)", *tick, f.Stats())
		}
	}
	if lazy && bare < 45 {
		t.Errorf("%d of 50 views without pixels in a world that publishes them when asked, and nothing asked", bare)
	}
	// Miss deltas: the follower stops listening for a while.
	if err := f.sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil { // the server has the unsubscribe before the next ticks
		t.Fatal(err)
	}
	for range 5 {
		step()
	}
	if err := l.sim.nc.Flush(); err != nil { // those ticks reached the server while nobody listened
		t.Fatal(err)
	}
	if f.sub, err = s.Subscribe("s.tick", f.onDelta); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if !testkit.Eventually(5*time.Second, func() bool { step(); return f.Stats().Gaps > 0 && f.Stats().Snapshots >= 2 }) {
		t.Fatalf("no resync after a gap: stats %+v", f.Stats())
	}
	step()
	if !testkit.Eventually(2*time.Second, same) {
		t.Fatalf("after the resync the follower's view differs from the world's: stats %+v", f.Stats())
	}
	if f.Stats().Bad != 0 {
		t.Errorf("stats %+v", f.Stats())
	}
}

// TestSimRestart: when the simulation restarts (a new instance, its world
// counting its ticks from 1 again), the follower hears a tick of another
// instance, takes a snapshot of the new world and follows it; while no
// tick comes, the gateway's notice says the world is restarting.
func TestSimRestart(t *testing.T) {
	l := newLink(t, time.Second, 64)
	world := func(seed uint64) *game.World {
		gc := game.DefaultConfig()
		gc.W, gc.H, gc.MaxSnakes, gc.Bots, gc.Seed = 128, 64, 16, 6, seed
		w, err := game.New(gc)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	run := func(w *game.World, pub *Publisher, from, n uint64) uint64 {
		for i := uint64(1); i <= n; i++ {
			w.Step(from + i)
			if err := pub.Ticked(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Millisecond)
		}
		return from + n
	}
	a := world(1)
	pa, err := NewPublisher(l.sim.nc, a, "r", 11)
	if err != nil {
		t.Fatal(err)
	}
	f, g := followed(t, l, "r", nil)
	tick := uint64(0)
	if !testkit.Eventually(5*time.Second, func() bool { tick = run(a, pa, tick, 1); return f.Synced() }) {
		t.Fatal("no first snapshot")
	}
	tick = run(a, pa, tick, 100)
	if g.Notice() != "" {
		t.Fatalf("notice %q while the world ticks", g.Notice())
	}
	pa.Close()
	if !testkit.Eventually(3*time.Second, func() bool { return g.Notice() == "world restarting" }) {
		t.Fatalf("notice %q after the simulation stopped", g.Notice())
	}
	b := world(2)
	pb, err := NewPublisher(l.sim.nc, b, "r", 12)
	if err != nil {
		t.Fatal(err)
	}
	defer pb.Close()
	btick := uint64(0)
	if !testkit.Eventually(10*time.Second, func() bool {
		btick = run(b, pb, btick, 1)
		v := f.Acquire()
		defer v.Release()
		return f.Instance() == 12 && (v.Tick == btick || v.Tick+1 == btick)
	}) {
		t.Fatalf("the follower never took the new world: stats %+v", f.Stats())
	}
	if st := f.Stats(); st.Foreign == 0 || st.Bad != 0 {
		t.Errorf("stats %+v: want the new world's ticks seen as another instance's, none bad", st)
	}
	if !testkit.Eventually(2*time.Second, func() bool { return g.Notice() == "" }) {
		t.Errorf("notice %q once the new world ticks", g.Notice())
	}
}

// TestGatewayCatchingUp: a follower short of CPU (its goroutine slowed at
// each view it publishes) falls behind by the ticks queued; its Behind
// counts them, as its Queued does the deltas (those of the batch it is
// applying too), and the gateway's banner says it is catching up (not
// restarting: ticks still come) until it is within behindTo ticks again.
// It catches up publishing views of one delta in maxQuiet and of the
// last quietFrom of each run queued, not of each.
func TestGatewayCatchingUp(t *testing.T) {
	l := newLink(t, time.Second, 64)
	_, _, tick, publish := published(t, l, 128, 64, 16, 6, 3, "c")
	step := func() {
		publish()
		time.Sleep(2 * time.Millisecond)
	}
	var slow atomic.Bool
	var views atomic.Int64 // views published (onTick)
	f, g := followed(t, l, "c", func() {
		views.Add(1)
		if slow.Load() {
			time.Sleep(400 * time.Millisecond) // each view published: a follower short of CPU
		}
	})
	if !testkit.Eventually(5*time.Second, func() bool { step(); return f.Synced() }) {
		t.Fatal("no first snapshot")
	}
	caught := func() bool {
		v := f.Acquire()
		defer v.Release()
		return v.Tick == *tick
	}
	if !testkit.Eventually(2*time.Second, caught) || f.Behind() != 0 || g.Notice() != "" {
		t.Fatalf("in step: behind %d, notice %q", f.Behind(), g.Notice())
	}
	slow.Store(true)
	v0, a0 := views.Load(), f.Stats().Applied
	most, said := 0, false
	for range 100 { // about 0.3 s here
		step()
		most = max(most, f.Behind())
		said = said || g.Notice() == "catching up"
	}
	q, b := int(f.Stats().Queued), f.Behind()
	v := f.Acquire()
	lag := int(*tick - v.Tick)
	v.Release()
	if q < b-5 || q > b+5 { // read a moment apart
		t.Errorf("%d deltas queued (the batch being applied too), %d ticks behind", q, b)
	}
	if lag < behindFrom+10 {
		t.Fatalf("the follower was only %d ticks behind: the test did not test", lag)
	}
	// lag counts from the view, which a quiet run leaves up to maxQuiet
	// ticks behind the replica that Behind counts from, and deltas still
	// on their way to the follower when Behind was read
	if !said || most < lag-maxQuiet-5 || most > 100 {
		t.Fatalf("%d ticks behind: Behind said at most %d, catching up said: %v", lag, most, said)
	}
	slow.Store(false)
	if !testkit.Eventually(5*time.Second, caught) {
		t.Fatalf("the follower did not catch up: %+v", f.Stats())
	}
	if b, n := f.Behind(), g.Notice(); b != 0 || n != "" {
		t.Fatalf("caught up: behind %d, notice %q", b, n)
	}
	// behind, it published views of one delta in maxQuiet and of the
	// last quietFrom of each run queued
	if n, a := views.Load()-v0, int64(f.Stats().Applied-a0); a < 100 || n > a/4 {
		t.Errorf("%d views published for %d deltas applied catching up", n, a)
	}
}

// lateViews are views that tick, behind by what the test sets.
type lateViews struct {
	localViews
	behind int
}

func (v *lateViews) Behind() int { return v.behind }

// TestNoticeBehind: the banner says "catching up" from behindFrom ticks
// behind and until the views are within behindTo again, not on and off
// as the lag wavers in between; "world restarting" comes first.
func TestNoticeBehind(t *testing.T) {
	v := &lateViews{}
	g := &Gateway{views: v}
	for _, c := range []struct {
		behind int
		want   string
	}{
		{0, ""}, {behindFrom - 1, ""}, {behindTo + 1, ""}, {behindFrom, "catching up"}, {behindFrom - 1, "catching up"},
		{behindTo + 1, "catching up"}, {400, "catching up"}, {behindTo, ""}, {behindFrom - 1, ""}, {behindFrom + 3, "catching up"}, {0, ""},
	} {
		v.behind = c.behind
		if got := g.Notice(); got != c.want {
			t.Fatalf("%d ticks behind: notice %q, want %q", c.behind, got, c.want)
		}
	}
	g.views = stoppedViews{}
	if got := g.Notice(); got != "world restarting" {
		t.Fatalf("no tick: notice %q", got)
	}
}

// stoppedViews are views whose world has not ticked for long, far behind.
type stoppedViews struct{ localViews }

func (stoppedViews) Live(time.Duration) bool { return false }
func (stoppedViews) Behind() int             { return 1000 }

// TestRemoteScores: a gateway's RemoteScores records games into the
// simulation's store and asks it who owns a name, claims names, reads a
// record and the leaderboards, as a local store would answer; claims take
// the simulation's clock, not the gateway's.
func TestRemoteScores(t *testing.T) {
	l := newLink(t, time.Second, 4)
	st, err := scores.Open(filepath.Join(t.TempDir(), "s.db"), scores.Options{FlushEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	srv, err := ServeScores(l.sim.nc, "t", st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	rs := NewRemoteScores(l.gw.nc, "t", "gw", l.gw.ID())
	defer rs.Close()
	ctx := context.Background()
	now := time.Now()
	if !rs.Record(scores.Result{ID: scores.KeyID("SHA256:k"), Name: "gus", Length: 17, Kills: 2, Died: true, Duration: time.Minute, End: now}) {
		t.Fatal("record dropped")
	}
	if !testkit.Eventually(5*time.Second, func() bool {
		top, err := rs.Top(ctx, 10)
		return err == nil && len(top) == 1 && top[0].Name == "gus" && top[0].Best == 17
	}) {
		t.Fatalf("the game never reached the simulation's store: %+v", st.Stats())
	}
	if got := rs.Stats(); got.Written != 1 || got.Recorded != 1 || got.Dropped != 0 {
		t.Errorf("gateway's stats %+v, want the game recorded and acknowledged", got)
	}
	if today, err := rs.TopToday(ctx, 10, now); err != nil || len(today) != 1 {
		t.Errorf("today: %v %v", today, err)
	}
	if r, ok, err := rs.Player(ctx, scores.KeyID("SHA256:k")); err != nil || !ok || r.Kills != 2 || r.Rank != 1 {
		t.Errorf("player: %+v %v %v", r, ok, err)
	}
	// the gateway's clock says a century has passed: the simulation's
	// does not, so the claim made now still holds
	later := now.Add(100 * 365 * 24 * time.Hour)
	if c, err := rs.Claim(ctx, "gus", "SHA256:k", "10.0.0.1", later); err != nil || c.Outcome != scores.Claimed {
		t.Fatalf("claim: %+v %v", c, err)
	}
	if c, err := rs.Claim(ctx, "gus", "SHA256:other", "10.0.0.2", later); err != nil || c.Outcome != scores.Taken {
		t.Errorf("a second key's claim of gus: %+v %v", c, err)
	}
	if c, err := rs.Claim(ctx, "guest1234", "SHA256:k", "10.0.0.1", now); err != nil || c.Outcome != scores.Generated {
		t.Errorf("a guest name's claim: %+v %v", c, err)
	}
	if h, err := rs.Holding(ctx, "GUS", "SHA256:k", later); err != nil || h != scores.Yours {
		t.Errorf("holding for its key: %v %v", h, err)
	}
	if h, err := rs.Holding(ctx, "gus", "SHA256:other", later); err != nil || h != scores.Others {
		t.Errorf("holding for another key: %v %v", h, err)
	}
	if h, err := rs.Holding(ctx, "gus", "", later); err != nil || h != scores.Others {
		t.Errorf("holding for a keyless player: %v %v", h, err)
	}
	if fp, ok, err := st.Owner(ctx, "gus", now.Add(time.Hour)); err != nil || !ok || fp != "SHA256:k" {
		t.Errorf("owner at the store: %q %v %v (the claim took the gateway's clock?)", fp, ok, err)
	}
	if err := l.gw.nc.Publish("t.gw.gw.scores.record", []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	if !testkit.Eventually(2*time.Second, func() bool { return srv.Bad() == 1 }) {
		t.Errorf("bad record not counted: %d", srv.Bad())
	}
	srv.Close()
	rs.wait = 200 * time.Millisecond
	if _, err := rs.Top(ctx, 10); !errors.Is(err, ErrNoSim) {
		t.Errorf("without a server: %v", err)
	}
	if _, err := rs.Holding(ctx, "gus", "", now); !errors.Is(err, ErrNoSim) {
		t.Errorf("owner without a server: %v (a name that cannot be checked must fail)", err)
	}
}

// TestScoresOff: a simulation without scores tells its gateways so: name
// questions answer scores.ErrOff (nothing is claimed), games are
// acknowledged and dropped.
func TestScoresOff(t *testing.T) {
	l := newLink(t, time.Second, 4)
	srv, err := ServeScores(l.sim.nc, "t", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	rs := NewRemoteScores(l.gw.nc, "t", "gw", l.gw.ID())
	defer rs.Close()
	ctx := context.Background()
	if _, err := rs.Holding(ctx, "gus", "", time.Now()); !errors.Is(err, scores.ErrOff) {
		t.Errorf("owner: %v, want scores.ErrOff", err)
	}
	if _, err := rs.Claim(ctx, "gus", "SHA256:k", "", time.Now()); !errors.Is(err, scores.ErrOff) {
		t.Errorf("claim: %v, want scores.ErrOff", err)
	}
	rs.Record(scores.Result{ID: scores.NameID("gus"), Name: "gus", Length: 3, End: time.Now()})
	if !testkit.Eventually(3*time.Second, func() bool { return rs.Stats().Written == 1 }) {
		t.Errorf("stats %+v: the game was not acknowledged", rs.Stats())
	}
}

// TestRecordsWhileAway: games a gateway records while its simulation is
// away wait on its queue and are recorded, each once, when it comes back;
// a batch sent twice (its acknowledgement lost) is recorded once; a full
// queue drops and counts.
func TestRecordsWhileAway(t *testing.T) {
	l := newLink(t, time.Second, 4)
	rs := NewRemoteScores(l.gw.nc, "t", "gw", l.gw.ID())
	defer rs.Close()
	rs.wait = 200 * time.Millisecond
	now := time.Now()
	for i := range 5 {
		if !rs.Record(scores.Result{ID: scores.NameID(fmt.Sprint("p", i)), Name: fmt.Sprint("p", i), Length: 10 + i, End: now}) {
			t.Fatal("record dropped")
		}
	}
	if !testkit.Eventually(3*time.Second, func() bool { return rs.Stats().Errors >= 2 }) {
		t.Fatalf("no tries while the simulation is away: %+v", rs.Stats())
	}
	if got := rs.Stats(); got.Written != 0 || got.Dropped != 0 {
		t.Fatalf("stats %+v while away: want nothing acknowledged and nothing dropped", got)
	}
	st, err := scores.Open(filepath.Join(t.TempDir(), "s.db"), scores.Options{FlushEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	srv, err := ServeScores(l.sim.nc, "t", st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if !testkit.Eventually(10*time.Second, func() bool { return rs.Stats().Written == 5 }) {
		t.Fatalf("stats %+v: the games waiting were not recorded when the simulation came back", rs.Stats())
	}
	if !testkit.Eventually(5*time.Second, func() bool { return st.Stats().Written == 5 }) {
		t.Fatalf("store stats %+v, want the 5 games written", st.Stats())
	}
	// the same batch again (as after a lost acknowledgement), and an older one
	again, _ := json.Marshal(recordBatch{GW: l.gw.ID(), Seq: 1, Results: []scores.Result{{ID: scores.NameID("p0"), Name: "p0", Length: 99, End: now}}})
	if _, err := l.gw.nc.Request("t.gw.gw.scores.record", again, 2*time.Second); err != nil {
		t.Fatalf("a batch sent again was not acknowledged: %v", err)
	}
	if n := srv.records.Load(); n != 5 {
		t.Errorf("%d games recorded after a batch came twice, want 5", n)
	}
	// another gateway of the same name (a restart) numbers its batches anew
	fresh, _ := json.Marshal(recordBatch{GW: l.gw.ID() + 2, Seq: 1, Results: []scores.Result{{ID: scores.NameID("p9"), Name: "p9", Length: 3, End: now}}})
	if _, err := l.gw.nc.Request("t.gw.gw.scores.record", fresh, 2*time.Second); err != nil || srv.records.Load() != 6 {
		t.Errorf("a restarted gateway's first batch: %v, %d recorded, want 6", err, srv.records.Load())
	}
	srv.Close()
	full := 0
	for range 2 * recordQueueSize {
		if !rs.Record(scores.Result{ID: scores.NameID("q"), Name: "q", Length: 1, End: now}) {
			full++
		}
	}
	if full < 10 || rs.Stats().Dropped < 10 {
		t.Errorf("a full queue dropped %d (stats %+v), want at least 10", full, rs.Stats())
	}
}

// TestSlowFollower: a follower whose applier stalls (onTick blocked)
// while the simulation goes on drops the deltas past the maxPending it
// queues, then resyncs from a snapshot and follows again; the connection
// is never held up (a delta is only queued on its goroutine).
func TestSlowFollower(t *testing.T) {
	l := newLink(t, time.Second, 16)
	gc := game.DefaultConfig()
	gc.W, gc.H, gc.MaxSnakes, gc.Bots, gc.Seed = 256, 128, 16, 12, 4
	w, err := game.New(gc)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := NewPublisher(l.sim.nc, w, "slow", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	tick := uint64(0)
	var slowest time.Duration
	step := func() {
		tick++
		w.Step(tick)
		t0 := time.Now()
		if err := pub.Ticked(); err != nil {
			t.Fatal(err)
		}
		slowest = max(slowest, time.Since(t0))
	}
	stall := make(chan struct{})
	var stalled atomic.Bool
	f, err := NewFollower(l.conn("slow", "gw"), "slow", "gw", 0, func() {
		if stalled.Load() {
			<-stall
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !testkit.Eventually(5*time.Second, func() bool { step(); return f.Synced() }) {
		t.Fatal("no snapshot")
	}
	for range 5 {
		step()
	}
	stalled.Store(true)
	for range maxPending + 60 { // past the queue's bound while the follower is stuck
		step()
		time.Sleep(time.Millisecond)
	}
	stalled.Store(false)
	close(stall)
	if !testkit.Eventually(10*time.Second, func() bool {
		step()
		v := f.Acquire()
		defer v.Release()
		return f.Stats().Snapshots >= 2 && v.Tick+2 >= tick
	}) {
		t.Fatalf("the slow follower never caught up: stats %+v", f.Stats())
	}
	// Ticked publishes into the connection's buffer and never waits for a
	// subscriber; the log shows the slowest call (not asserted: a timing).
	t.Logf("slowest Ticked %v (stats %+v)", slowest, f.Stats())
}

// TestRestartSeats: the simulation restarts with a world of another size
// whose IDs repeat the last one's (the same ID base): a player who
// rejoins gets the ID a lost player held. The lost player's stale seat
// (a turn, a leave) never reaches the new snake, and a follower never
// applies the new world's ticks to the old world's replica, even when the
// new world's first delta follows the old replica's tick.
func TestRestartSeats(t *testing.T) {
	l := newLink(t, time.Second, 4)
	pubA, f, stepA := ownFollowed(t, l)
	lost, err := l.gw.Join("lost", "")
	if err != nil {
		t.Fatal(err)
	}
	if !testkit.Eventually(5*time.Second, func() bool { stepA(); return f.Synced() }) {
		t.Fatal("the follower never synced")
	}
	for range 3 {
		stepA()
	}
	if !testkit.Eventually(2*time.Second, func() bool { v := f.Acquire(); defer v.Release(); return v.Tick == l.tick }) {
		t.Fatalf("the follower is not at tick %d", l.tick)
	}
	pubA.Close()
	l.sim.Close()

	gc := game.DefaultConfig()
	gc.W, gc.H, gc.MaxSnakes, gc.Bots, gc.Seed = 96, 48, 4, 0, 9
	b, err := game.New(gc)
	if err != nil {
		t.Fatal(err)
	}
	simB, err := NewSim(l.conn("t", ""), b, "t", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer simB.Close()
	// B's first delta follows the old replica's tick
	for tick := uint64(1); tick <= l.tick; tick++ {
		b.Step(tick)
	}
	pubB, err := NewPublisher(simB.nc, b, "t", simB.Instance())
	if err != nil {
		t.Fatal(err)
	}
	defer pubB.Close()
	tick := l.tick
	stepB := func() {
		tick++
		b.Step(tick)
		if err := pubB.Ticked(); err != nil {
			t.Fatal(err)
		}
	}
	rejoined, err := l.gw.Join("new", "")
	if err != nil {
		t.Fatal(err)
	}
	if rejoined.ID != lost.ID || rejoined.World == lost.World {
		t.Fatalf("seats %+v and %+v: want the same ID in two worlds", lost, rejoined)
	}
	stepB()
	stepB()
	snake := func() testkit.Snake {
		v := b.Acquire()
		defer v.Release()
		s, ok := v.Snake(rejoined.ID)
		if !ok || s.Name != "new" {
			t.Fatalf("the rejoined snake is gone: %+v", s)
		}
		d, _ := b.Heading(rejoined.ID)
		return testkit.Snake{SnakeInfo: *s, Head: v.Heads[rejoined.ID.Slot()], Dir: d}
	}
	d := game.Up
	if s := snake(); s.Dir == game.Up || s.Dir == game.Down {
		d = game.Left
	}
	l.gw.Turn(lost, d)
	l.gw.Leave(lost)
	if !testkit.Eventually(3*time.Second, func() bool { return simB.Stats().Foreign >= 2 }) {
		t.Fatalf("the stale seat's turn and leave were not refused: %+v", simB.Stats())
	}
	stepB()
	if s := snake(); s.Dir == d {
		t.Fatalf("a lost player's turn steered the new snake")
	}
	l.gw.Turn(rejoined, d)
	if !testkit.Eventually(3*time.Second, func() bool { return simB.Stats().Inputs >= 1 }) {
		t.Fatal("the rejoined player's own turn never came")
	}
	stepB()
	if s := snake(); s.Dir != d {
		t.Fatalf("the rejoined player's own turn did not take: heading %v, want %v", s.Dir, d)
	}
	if !testkit.Eventually(5*time.Second, func() bool {
		stepB()
		v := f.Acquire()
		defer v.Release()
		return f.Instance() == simB.Instance() && v.W == 96 && v.Tick+1 >= tick
	}) {
		t.Fatalf("the follower did not take the new world: stats %+v", f.Stats())
	}
	if st := f.Stats(); st.Foreign == 0 || st.Bad != 0 {
		t.Errorf("follower stats %+v: want the new world's ticks seen as another instance's and none applied as bad", st)
	}
}

// fakeSnapshots answers the snapshot requests of gateway "gw" under
// prefix with the chunks chunks() gives, each behind a stream header of
// instance 7.
func fakeSnapshots(t *testing.T, l *link, prefix string, chunks func() [][]byte) {
	t.Helper()
	sub, err := l.sim.nc.Subscribe(prefix+".gw.gw.snapshot", func(m *nats.Msg) {
		for _, c := range chunks() {
			_ = l.sim.nc.Publish(m.Reply, append(appendStream(nil, 7), c...))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
}

// chunk is a snapshot chunk: its header (tick 1, index i of n), then body.
func chunk(i, n int, body []byte) []byte {
	b := []byte{wire.Version, 2, 1}
	b = binary.AppendUvarint(b, uint64(i))
	b = binary.AppendUvarint(b, uint64(n))
	return append(b, body...)
}

// TestSeatFromTick: a gateway's seat names the tick its snake shows
// from, and a follower's views name the world they show: a view of that
// world from before the tick lacks the snake (as a gateway behind its
// simulation shows), the first one from it on has it.
func TestSeatFromTick(t *testing.T) {
	l := newLink(t, time.Second, 8)
	_, f, step := ownFollowed(t, l)
	if !testkit.Eventually(5*time.Second, func() bool { step(); return f.Synced() }) {
		t.Fatal("the follower never synced")
	}
	at := func(tick uint64) bool { v := f.Acquire(); defer v.Release(); return v.Tick == tick }
	if !testkit.Eventually(2*time.Second, func() bool { return at(l.tick) }) {
		t.Fatalf("the follower is not at tick %d", l.tick)
	}
	seat, err := l.gw.Join("p", "")
	if err != nil {
		t.Fatal(err)
	}
	if seat.World != l.sim.Instance() || seat.Tick != l.tick+1 {
		t.Fatalf("seat %+v at tick %d of world %d: want it to show from the next tick", seat, l.tick, l.sim.Instance())
	}
	v := f.Acquire()
	if _, ok := v.Snake(seat.ID); v.World != seat.World || v.Tick >= seat.Tick || ok {
		t.Fatalf("the view of tick %d of world %d, before the seat's tick %d: shows the snake %v", v.Tick, v.World, seat.Tick, ok)
	}
	v.Release()
	step()
	if !testkit.Eventually(2*time.Second, func() bool { return at(l.tick) }) {
		t.Fatalf("the follower is not at tick %d", l.tick)
	}
	v = f.Acquire()
	defer v.Release()
	if _, ok := v.Snake(seat.ID); v.World != seat.World || v.Tick < seat.Tick || !ok {
		t.Fatalf("the view of tick %d of world %d, from the seat's tick %d: shows the snake %v", v.Tick, v.World, seat.Tick, ok)
	}
}

// TestSnapshotBounds: a follower refuses a snapshot of a world larger than
// it takes before allocating for it (a 30-byte snapshot naming 16384x4096
// pixels), one of more chunks or bytes than its bounds, and chunks of two
// snapshots; it builds one from many small chunks in any order.
func TestSnapshotBounds(t *testing.T) {
	huge := []byte{wire.Version, 3}
	huge = binary.AppendUvarint(huge, 16384)
	huge = binary.AppendUvarint(huge, 4096)
	huge = append(huge, 1, 0, 1)
	huge = binary.AppendUvarint(huge, 16384*4096)
	huge = append(huge, 0, 0)
	small := chunk(0, 1, huge)
	if len(small) > 30 {
		t.Fatalf("the huge world's snapshot is %d bytes", len(small))
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := wire.NewReplicaWithin([][]byte{small}, 1<<20)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, wire.ErrTooLarge) {
		t.Fatalf("a 16384x4096 snapshot for a follower of 1 Mpixel: %v", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Fatalf("refusing it allocated %d bytes", n)
	}

	l := newLink(t, time.Second, 4)
	refused := func(prefix, what string, chunks func() [][]byte) {
		t.Helper()
		fakeSnapshots(t, l, prefix, chunks)
		f, err := NewFollower(l.conn(prefix, "gw"), prefix, "gw", 1<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if !testkit.Eventually(10*time.Second, func() bool { return f.Stats().Bad >= 1 }) {
			t.Fatalf("%s: stats %+v, want it refused", what, f.Stats())
		}
		if f.Synced() {
			t.Fatalf("%s: synced", what)
		}
	}
	refused("b1", "a huge world", func() [][]byte { return [][]byte{small} })
	refused("b2", "too many chunks", func() [][]byte { return [][]byte{chunk(0, maxChunks+1, []byte{1})} })
	big := make([]byte, 900<<10)
	refused("b3", "too many bytes", func() [][]byte {
		n := SnapshotBytes(1<<20)/len(big) + 2
		cs := make([][]byte, n)
		for i := range cs {
			cs[i] = chunk(i, n, big)
		}
		return cs
	})

	// a real snapshot in 64-byte chunks, last first
	gc := game.DefaultConfig()
	gc.W, gc.H, gc.MaxSnakes, gc.Bots, gc.Seed = 128, 64, 16, 8, 4
	w, err := game.New(gc)
	if err != nil {
		t.Fatal(err)
	}
	w.Step(1)
	cs, err := wire.Snapshot(w, wire.MinChunk)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) < 10 {
		t.Fatalf("%d chunks", len(cs))
	}
	slices.Reverse(cs)
	fakeSnapshots(t, l, "ok", func() [][]byte { return cs })
	f, err := NewFollower(l.conn("ok", "gw"), "ok", "gw", 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !testkit.Eventually(5*time.Second, f.Synced) {
		t.Fatalf("no replica from %d small chunks: stats %+v", len(cs), f.Stats())
	}
	if f.Instance() != 7 {
		t.Errorf("instance %d, want the stream header's 7", f.Instance())
	}
}

// TestPermissions: an embedded NATS with role users lets a simulation and
// two gateways play, and keeps each gateway to its own part: a gateway
// user is refused when it publishes a tick, publishes under another
// gateway's name, answers another's request or listens to others'
// replies and snapshot requests.
func TestPermissions(t *testing.T) {
	ns, logs, conn := roleNATS(t)
	if nc, err := nats.Connect(ns.ClientURL(), nats.UserInfo("gw1", "simpw"), nats.NoReconnect()); err == nil {
		nc.Close()
		t.Fatal("gw1 got in with the sim's password")
	}
	snc, g1, g2 := conn("sim", "simpw", ""), conn("gw1", "pw1", "gw1"), conn("gw2", "pw2", "gw2")
	gc := game.DefaultConfig()
	gc.W, gc.H, gc.MaxSnakes, gc.Bots, gc.Seed = 128, 64, 8, 2, 5
	w, err := game.New(gc)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := NewSim(snc, w, "p", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	pub, err := NewPublisher(snc, w, "p", sim.Instance())
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	f, err := NewFollower(g1, "p", "gw1", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gw, err := NewGateway(g1, "p", "gw1", f, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	tick := uint64(0)
	if !testkit.Eventually(5*time.Second, func() bool {
		tick++
		w.Step(tick)
		if err := pub.Ticked(); err != nil {
			t.Fatal(err)
		}
		return f.Synced()
	}) {
		t.Fatalf("gw1 never got a snapshot: %+v\n%s", f.Stats(), logs)
	}
	if _, err := gw.Join("ann", ""); err != nil {
		t.Fatalf("gw1's join: %v\n%s", err, logs)
	}

	// gw2 listens to ticks and heartbeats; gw1 forges, then sends its own
	// heartbeat, which gw2 hears after anything gw1 sent before it
	heard := make(chan *nats.Msg, 64)
	for _, subj := range []string{"p.tick", "p.gw.*.hb"} {
		if _, err := g2.ChanSubscribe(subj, heard); err != nil {
			t.Fatal(err)
		}
	}
	if err := g2.Flush(); err != nil {
		t.Fatal(err)
	}
	forged := []byte("forged")
	for _, subj := range []string{"p.tick", "p.gw.gw2.hb", "_INBOX.p.gw2.x"} {
		if err := g1.Publish(subj, forged); err != nil {
			t.Fatal(err)
		}
	}
	for _, subj := range []string{"_INBOX.>", "p.gw.*.snapshot", "p.gw.gw2.join"} {
		if _, err := g1.Subscribe(subj, func(*nats.Msg) {}); err != nil {
			t.Fatal(err)
		}
	}
	sentinel := appendHeartbeat(nil, heartbeat{gw: 99})
	if err := g1.Publish("p.gw.gw1.hb", sentinel); err != nil {
		t.Fatal(err)
	}
	for done := false; !done; {
		select {
		case m := <-heard:
			if string(m.Data) == string(forged) {
				t.Fatalf("gw2 heard gw1's forged %s", m.Subject)
			}
			done = string(m.Data) == string(sentinel)
		case <-time.After(5 * time.Second):
			t.Fatalf("gw2 never heard gw1's heartbeat\n%s", logs)
		}
	}
	for _, subj := range []string{`Publish to "p.tick"`, `Publish to "p.gw.gw2.hb"`, `Publish to "_INBOX.p.gw2.x"`,
		`Subscription to "_INBOX.>"`, `Subscription to "p.gw.*.snapshot"`, `Subscription to "p.gw.gw2.join"`} {
		if !testkit.Eventually(3*time.Second, func() bool {
			return strings.Contains(strings.ReplaceAll(logs.String(), `\"`, `"`), "Permissions Violation for "+subj)
		}) {
			t.Errorf("no permissions violation for gw1's %s:\n%s", subj, logs)
		}
	}
}

// TestRepliesToOwnInbox: a request whose reply subject is not in its
// sender's own inbox is not answered, so a gateway cannot aim a snapshot
// (or any answer) at another.
func TestRepliesToOwnInbox(t *testing.T) {
	l := newLink(t, time.Second, 4)
	pub, err := NewPublisher(l.sim.nc, l.w, "t", l.sim.Instance())
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	got := make(chan *nats.Msg, 16)
	if _, err := l.gw.nc.ChanSubscribe("_INBOX.t.gw.victim", got); err != nil {
		t.Fatal(err)
	}
	for _, subj := range []string{"t.gw.raw.snapshot", "t.gw.raw.join"} {
		if err := l.raw.PublishRequest(subj, "_INBOX.t.gw.victim", appendJoinReq(nil, joinReq{gw: 1, name: "x", nonce: 1})); err != nil {
			t.Fatal(err)
		}
	}
	if !testkit.Eventually(3*time.Second, func() bool { l.step(); _ = pub.Ticked(); return pub.Stats().Dropped == 1 && l.sim.Stats().Bad == 1 }) {
		t.Fatalf("publisher %+v, sim %+v: want the snapshot request and the join dropped", pub.Stats(), l.sim.Stats())
	}
	select {
	case m := <-got:
		t.Fatalf("the victim's inbox got %q", m.Data)
	default:
	}
}

// TestRecordsOwnPlayers: a gateway records the games of identities that
// play through it (or left it within the hour) and nobody else's: not
// another gateway's players, not made-up ones.
func TestRecordsOwnPlayers(t *testing.T) {
	l := newLink(t, time.Second, 4)
	st, err := scores.Open(filepath.Join(t.TempDir(), "s.db"), scores.Options{FlushEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	srv, err := ServeScores(l.sim.nc, "t", st, l.sim)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	kim, err := l.gw.Join("kim", "SHA256:kim")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.gw.Join("Lou", ""); err != nil {
		t.Fatal(err)
	}
	g2, err := NewGateway(l.raw, "t", "raw", localViews{l.w}, time.Second) // another gateway, with a player of its own
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	if _, err := g2.Join("max", "SHA256:max"); err != nil {
		t.Fatal(err)
	}
	rs := NewRemoteScores(l.gw.nc, "t", "gw", l.gw.ID())
	defer rs.Close()
	now := time.Now()
	result := func(id scores.ID, name string) scores.Result {
		return scores.Result{ID: id, Name: name, Length: 9, End: now}
	}
	l.gw.Leave(kim) // left: its games still count for the hour
	if !testkit.Eventually(3*time.Second, func() bool { l.step(); _, ok := l.snake(kim.ID); return !ok }) {
		t.Fatal("kim did not leave")
	}
	for _, r := range []scores.Result{
		result(scores.KeyID("SHA256:kim"), "kim"), result(scores.NameID("lou"), "lou"), // its own
		result(scores.KeyID("SHA256:max"), "max"), result(scores.KeyID("SHA256:nobody"), "zed"), result(scores.NameID("zed"), "zed"),
	} {
		rs.Record(r)
	}
	if !testkit.Eventually(5*time.Second, func() bool { return rs.Stats().Written == 5 }) {
		t.Fatalf("stats %+v", rs.Stats())
	}
	if got, refused := srv.records.Load(), srv.refused.Load(); got != 2 || refused != 3 {
		t.Fatalf("%d recorded and %d refused, want 2 and 3", got, refused)
	}
	if st := rs.Stats(); st.Invalid != 3 {
		t.Fatalf("the gateway counts %d of its games refused, want 3 (stats %+v)", st.Invalid, st)
	}
}

// roleLink is an embedded NATS with role users (a simulation, gateways
// "gw1" and "gw2") under prefix "p", a world with its Sim checking names
// against a store, and the scores service.
type roleLink struct {
	w        *game.World
	st       *scores.Store
	sim      *Sim
	ss       *ScoreServer
	gw1, gw2 *nats.Conn
}

func newRoleLink(t *testing.T) *roleLink {
	t.Helper()
	_, _, conn := roleNATS(t)
	var err error
	r := &roleLink{gw1: conn("gw1", "pw1", "gw1"), gw2: conn("gw2", "pw2", "gw2")}
	snc := conn("sim", "simpw", "")
	gc := game.DefaultConfig()
	gc.W, gc.H, gc.MaxSnakes, gc.Bots, gc.Seed = 128, 64, 16, 0, 5
	if r.w, err = game.New(gc); err != nil {
		t.Fatal(err)
	}
	if r.st, err = scores.Open(filepath.Join(t.TempDir(), "s.db"), scores.Options{FlushEvery: 20 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.st.Close(context.Background()) })
	holder := func(ctx context.Context, name, key string) (scores.Holding, error) {
		return r.st.Holding(ctx, name, key, time.Now())
	}
	if r.sim, err = NewSim(snc, r.w, "p", time.Second, WithNames(holder)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.sim.Close)
	if r.ss, err = ServeScores(snc, "p", r.st, r.sim); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.ss.Close)
	return r
}

// ask sends a scores question as gateway nc (named gw) and returns the answer.
func ask(t *testing.T, nc *nats.Conn, gw string, q scoreAsk) scoreAnswer {
	t.Helper()
	b, _ := json.Marshal(q)
	m, err := nc.Request("p.gw."+gw+".scores.names", b, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var a scoreAnswer
	if err := json.Unmarshal(m.Data, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestRogueGateway: a peer with one gateway's credentials, acting on its
// own (not through a Gateway), cannot learn a player's key fingerprint,
// play or claim a name another key holds, claim a name it does not play,
// nor record a game for another gateway's player or one longer than the
// world ever had, ended when it likes.
func TestRogueGateway(t *testing.T) {
	r := newRoleLink(t)
	g1, err := NewGateway(r.gw1, "p", "gw1", localViews{r.w}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g1.Close()
	const victim = "SHA256:victim"
	alice, err := g1.Join("alice", victim)
	if err != nil {
		t.Fatal(err)
	}
	if a := ask(t, r.gw1, "gw1", scoreAsk{Op: "claim", Name: "alice", FP: victim, From: "10.0.0.1"}); a.Err != "" || a.Outcome != scores.Claimed {
		t.Fatalf("the victim's own claim: %+v", a)
	}
	g1.Leave(alice)
	if !testkit.Eventually(3*time.Second, func() bool { return !r.sim.MayClaim("gw1", victim, "alice") }) {
		t.Fatal("alice did not leave")
	}
	r.w.Step(1)

	// what the rogue hears of alice: held by another, not by whom
	if a := ask(t, r.gw2, "gw2", scoreAsk{Op: "holding", Name: "alice"}); a.Holding != scores.Others || a.Err != "" {
		t.Fatalf("holding of alice as the rogue hears it: %+v", a)
	}
	b, _ := json.Marshal(scoreAsk{Op: "top", N: 10})
	r.st.Record(scores.Result{ID: scores.KeyID(victim), Name: "alice", Length: 7, End: time.Now()})
	if !testkit.Eventually(3*time.Second, func() bool { return r.st.Stats().Written == 1 }) {
		t.Fatal("the victim's game was not written")
	}
	m, err := r.gw2.Request("p.gw.gw2.scores.ask", b, 2*time.Second)
	if err != nil || strings.Contains(string(m.Data), "victim") || !strings.Contains(string(m.Data), "alice") {
		t.Fatalf("the leaderboard as the rogue reads it: %s %v", m.Data, err)
	}
	// joining alice, as itself or as the victim's key (which it does not
	// know, but may guess): refused; a free name is its own
	for _, key := range []string{"", "SHA256:rogue"} {
		m, err := r.gw2.Request("p.gw.gw2.join", appendJoinReq(nil, joinReq{gw: 7, name: "alice", key: key, nonce: 1 + uint64(len(key))}), 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if rep, err := decodeJoinRep(m.Data); err != nil || rep.status != joinClaimed {
			t.Fatalf("the rogue's join of alice with key %q: %+v %v", key, rep, err)
		}
	}
	// claims: alice for the rogue's key (not playing it), without an
	// address, or for a name it plays but the victim's key
	for _, q := range []scoreAsk{
		{Op: "claim", Name: "alice", FP: "SHA256:rogue", From: "10.0.0.9"},
		{Op: "claim", Name: "alice", FP: victim, From: "10.0.0.9"},
		{Op: "claim", Name: "zed", FP: "SHA256:rogue", From: ""},
	} {
		if a := ask(t, r.gw2, "gw2", q); a.Err == "" {
			t.Fatalf("the rogue's claim %+v: %+v", q, a)
		}
	}
	if fp, ok, _ := r.st.Owner(context.Background(), "alice", time.Now()); !ok || fp != victim {
		t.Fatalf("alice's owner is now %q (%v)", fp, ok)
	}
	// games: one for the victim (not its player), one for its own with a
	// made-up length and end
	m, err = r.gw2.Request("p.gw.gw2.join", appendJoinReq(nil, joinReq{gw: 7, name: "zed", nonce: 9}), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := decodeJoinRep(m.Data); err != nil || rep.status != joinOK {
		t.Fatalf("the rogue's join of a free name: %+v %v", rep, err)
	}
	r.w.Step(2)
	longest := r.sim.Longest()
	b, _ = json.Marshal(recordBatch{GW: 7, Seq: 1, Results: []scores.Result{
		{ID: scores.KeyID(victim), Name: "alice", Length: 1 << 30, End: time.Now()},
		{ID: scores.NameID("zed"), Name: "zed", Length: 1 << 30, Kills: 1 << 30, End: time.Now().Add(1000 * time.Hour), Duration: 1000 * time.Hour},
	}})
	m, err = r.gw2.Request("p.gw.gw2.scores.record", b, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var ack recordAck
	if err := json.Unmarshal(m.Data, &ack); err != nil || ack.Recorded != 1 || ack.Refused != 1 {
		t.Fatalf("ack %s %v, want 1 recorded and 1 refused", m.Data, err)
	}
	if !testkit.Eventually(3*time.Second, func() bool { return r.st.Stats().Written == 2 }) {
		t.Fatal("zed's game was not written")
	}
	rec, ok, err := r.st.Player(context.Background(), scores.NameID("zed"))
	if err != nil || !ok || rec.Best != longest || rec.Kills != maxKills || rec.Last.After(time.Now()) || rec.Played > maxGame {
		t.Fatalf("zed's record %+v (%v %v): want its length at most %d, its end now", rec, ok, err, longest)
	}
	if v, _, _ := r.st.Player(context.Background(), scores.KeyID(victim)); v.Best != 7 {
		t.Fatalf("the victim's best is %d", v.Best)
	}
}

// TestGatewayQuotas: one gateway name cannot fill what the simulation
// remembers for all: instances past maxInstances are not heard (their
// joins refused), while another gateway still joins; a flood of scores
// questions from one name is cut to its rate while another's are answered.
func TestGatewayQuotas(t *testing.T) {
	r := newRoleLink(t)
	for i := range maxGateways {
		if err := r.gw2.Publish("p.gw.gw2.hb", appendHeartbeat(nil, heartbeat{gw: uint64(1000 + i)})); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.gw2.Flush(); err != nil {
		t.Fatal(err)
	}
	if !testkit.Eventually(3*time.Second, func() bool {
		r.sim.mu.Lock()
		defer r.sim.mu.Unlock()
		return r.sim.quota["gw2"] != nil && r.sim.quota["gw2"].instances == maxInstances
	}) {
		t.Fatal("gw2's instances are not held to maxInstances")
	}
	r.sim.mu.Lock()
	n := len(r.sim.seen)
	r.sim.mu.Unlock()
	if n != maxInstances {
		t.Fatalf("%d gateway instances heard, want %d", n, maxInstances)
	}
	g1, err := NewGateway(r.gw1, "p", "gw1", localViews{r.w}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer g1.Close()
	if _, err := g1.Join("bob", ""); err != nil {
		t.Fatalf("another gateway's join: %v", err)
	}
	m, err := r.gw2.Request("p.gw.gw2.join", appendJoinReq(nil, joinReq{gw: 5555, name: "eve", nonce: 1}), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if rep, _ := decodeJoinRep(m.Data); rep.status != joinFailed {
		t.Fatalf("a fifth instance of gw2 joined: %+v", rep)
	}

	// a flood of questions from gw2, then one from gw1
	q, _ := json.Marshal(scoreAsk{Op: "holding", Name: "x"})
	inbox := r.gw2.NewRespInbox()
	answers, err := r.gw2.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		if err := r.gw2.PublishRequest("p.gw.gw2.scores.names", inbox, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.gw2.Flush(); err != nil {
		t.Fatal(err)
	}
	if a := ask(t, r.gw1, "gw1", scoreAsk{Op: "holding", Name: "x"}); a.Holding != scores.Free {
		t.Fatalf("gw1's question during gw2's flood: %+v", a)
	}
	got := 0
	for {
		if _, err := answers.NextMsg(300 * time.Millisecond); err != nil {
			break
		}
		got++
	}
	if got > namesBurst+namesRate || r.ss.limited.Load() == 0 {
		t.Fatalf("gw2 got %d answers to 1000 questions (limited %d), want at most its burst and a second's rate", got, r.ss.limited.Load())
	}
}

// TestJoinCancelRace: a cancel that comes while its join is being made
// (here while its name is checked, which takes a moment; the two on their
// own goroutines, as NATS delivers them) never leaves a snake nobody
// plays.
func TestJoinCancelRace(t *testing.T) {
	l := newLink(t, time.Minute, 64)
	checking := make(chan struct{}, 1)
	slow := func(context.Context, string, string) (scores.Holding, error) {
		checking <- struct{}{}
		time.Sleep(time.Millisecond)
		return scores.Free, nil
	}
	sim, err := NewSim(l.sim.nc, l.w, "race", time.Minute, WithNames(slow))
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	for i := range 50 {
		ref := joinRef{gwRef{"gw", 5}, uint64(i + 1)}
		jm := &nats.Msg{Subject: "race.gw.gw.join", Reply: "_INBOX.race.gw.x", Data: appendJoinReq(nil, joinReq{gw: 5, name: fmt.Sprint("r", i), nonce: ref.nonce})}
		var wg sync.WaitGroup
		wg.Go(func() { sim.onJoin(jm) })
		<-checking // the join is being made: cancel it now
		sim.cancelJoin(&nats.Msg{}, ref)
		wg.Wait()
		sim.mu.Lock()
		for id, o := range sim.owner {
			if o.gw == ref.gw && o.join == ref.nonce {
				sim.mu.Unlock()
				t.Fatalf("join %d: snake %d stayed after its cancel", i, id)
			}
		}
		sim.mu.Unlock()
		l.step()
	}
	v := l.w.Acquire()
	defer v.Release()
	for _, s := range v.Snakes {
		if s.Used {
			t.Fatalf("snake %q left in the world", s.Name)
		}
	}
}

// TestSnapshotsPerGateway: one gateway name asking for snapshots as fast
// as it can gets at most one a second, to its latest inbox.
func TestSnapshotsPerGateway(t *testing.T) {
	l := newLink(t, time.Second, 8)
	pub, err := NewPublisher(l.sim.nc, l.w, "t", l.sim.Instance())
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	inbox := l.raw.NewRespInbox()
	got, err := l.raw.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for range 60 {
		for range 10 {
			if err := l.raw.PublishRequest("t.gw.raw.snapshot", inbox, nil); err != nil {
				t.Fatal(err)
			}
		}
		_ = l.raw.Flush()
		l.step()
		if err := pub.Ticked(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(start)
	// Every chunk sent is in the inbox once the writer is done (Close
	// waits for it), the server has the publisher's messages (its
	// connection's flush) and has passed them to the reader (the reader's
	// flush: its answer comes after them on the same connection).
	pub.Close()
	if err := l.sim.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := l.raw.Flush(); err != nil {
		t.Fatal(err)
	}
	n, _, _ := got.Pending()
	if most := int(took/snapEvery) + 1; n < 1 || n > most {
		t.Fatalf("%d snapshot chunks for 600 requests in %v, want 1..%d (one a second)", n, took, most)
	}
}

// roleNATS starts an embedded NATS for prefix p with the role users sim
// (simpw), gw1 (pw1) and gw2 (pw2), stopped when the test ends, and
// returns it, the connections' log and a function that connects as a user
// (for a gateway, under its name).
func roleNATS(t *testing.T) (*server.Server, *testkit.SyncBuf, func(user, pw, gateway string) *nats.Conn) {
	t.Helper()
	users := []User{{RoleSim, "sim", "simpw"}, {RoleGateway, "gw1", "pw1"}, {RoleGateway, "gw2", "pw2"}}
	ns, err := Embed("127.0.0.1:0", Auth{Users: users, Prefix: "p"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	logs := &testkit.SyncBuf{}
	conn := func(user, pw, gateway string) *nats.Conn {
		t.Helper()
		nc, err := Connect(Options{URL: ns.ClientURL(), User: user, Password: pw, Prefix: "p", Gateway: gateway,
			Log: slog.New(slog.NewTextHandler(logs, nil)).With("conn", user)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	return ns, logs, conn
}

// TestSpawnNearGateway: with WithGroups, each gateway's players start
// their lives near a live player of the same gateway (on that player's
// screen: within a person's spawn ring, 36x19 pixels, and a start length),
// while two gateways' players come in turn into one world of bots (without
// WithGroups at most one of either's 7 does).
func TestSpawnNearGateway(t *testing.T) {
	gc := game.DefaultConfig()
	gc.W, gc.H, gc.MaxSnakes, gc.Bots, gc.Seed = 1024, 512, 64, 40, 5
	l := newSimLink(t, gc, time.Second, WithGroups())
	gws := map[string]*Gateway{}
	for _, name := range []string{"gwa", "gwb"} {
		g, err := NewGateway(l.conn("t", name), "t", name, localViews{l.w}, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(g.Close)
		gws[name] = g
	}
	const per = 8
	ids := map[string][]game.ID{}
	seats := map[string][]game.Seat{}
	near := map[string]int{}
	for k := 0; k < per; k++ {
		for _, name := range []string{"gwa", "gwb"} {
			seat, err := gws[name].Join(fmt.Sprintf("%s%d", name, k), "")
			if err != nil {
				t.Fatalf("gateway %s's player %d: %v", name, k, err)
			}
			l.step()
			me, ok := l.snake(seat.ID)
			if !ok || !me.Alive {
				t.Fatalf("gateway %s's player %d did not spawn", name, k)
			}
			for _, o := range ids[name] {
				if s, ok := l.snake(o); ok && s.Alive && wrapOff(me.Head.X-s.Head.X, gc.W) <= 36+gc.StartLen && wrapOff(me.Head.Y-s.Head.Y, gc.H) <= 19+gc.StartLen {
					near[name]++
					break
				}
			}
			ids[name] = append(ids[name], seat.ID)
			seats[name] = append(seats[name], seat)
		}
	}
	for _, name := range []string{"gwa", "gwb"} {
		if near[name] < per-2 {
			t.Errorf("%d of gateway %s's %d players after its first spawned by one of its others, want nearly all", near[name], name, per-1)
		}
	}
	// gateway gwa's players leave: its group is free, and the next name
	// seen gets it
	l.sim.mu.Lock()
	ga := l.sim.groups.of["gwa"]
	l.sim.mu.Unlock()
	for _, seat := range seats["gwa"] {
		gws["gwa"].Leave(seat)
	}
	if !testkit.Eventually(5*time.Second, func() bool {
		l.sim.mu.Lock()
		defer l.sim.mu.Unlock()
		_, held := l.sim.groups.of["gwa"]
		return !held
	}) {
		t.Fatal("gwa's group not given back after its players left")
	}
	gc2, err := NewGateway(l.conn("t", "gwc"), "t", "gwc", localViews{l.w}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gc2.Close)
	if _, err := gc2.Join("c0", ""); err != nil {
		t.Fatal(err)
	}
	l.sim.mu.Lock()
	gcGroup, gbGroup := l.sim.groups.of["gwc"], l.sim.groups.of["gwb"]
	l.sim.mu.Unlock()
	if gcGroup != ga || gbGroup == ga {
		t.Fatalf("after gwa's players left: gwc has group %d, gwb %d; want gwa's %d for gwc alone", gcGroup, gbGroup, ga)
	}
}

// TestGroupSet: a gateway name keeps its group while it has snakes, a
// group given back is given again, and past game.MaxGroups names a join
// takes no group.
func TestGroupSet(t *testing.T) {
	var none *groupSet
	if none.take("a") != 0 {
		t.Fatal("a nil set gave a group")
	}
	none.give("a")
	g := &groupSet{of: map[string]int{}, use: map[int]int{}}
	a, b := g.take("a"), g.take("b")
	if a != 1 || b != 2 || g.take("a") != 1 {
		t.Fatalf("groups a %d, b %d; want 1 and 2, and a's again", a, b)
	}
	g.give("a")
	if g.of["a"] != 1 {
		t.Fatal("a lost its group with a snake left")
	}
	g.give("a")
	g.give("a") // one give too many: ignored
	if _, ok := g.of["a"]; ok || g.take("c") != 1 {
		t.Fatalf("a's group not given back to the next name: %v", g.of)
	}
	for k := 0; len(g.of) < game.MaxGroups; k++ {
		g.take(fmt.Sprintf("n%d", k))
	}
	if n := g.take("late"); n != 0 {
		t.Fatalf("past MaxGroups names a join took group %d", n)
	}
	if g.take("b") != 2 {
		t.Fatal("b lost its group when the set filled")
	}
}

// wrapOff is the distance between two coordinates d apart on a circle of
// n.
func wrapOff(d, n int) int {
	d = ((d % n) + n) % n
	return min(d, n-d)
}
