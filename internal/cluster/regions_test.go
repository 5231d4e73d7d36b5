package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"snaked/game"
	"snaked/internal/cluster/wire"
	"snaked/internal/testkit"
	"snaked/render"
)

// regionsLink is a simulation on an embedded NATS with two gateways'
// followers of its world: one on the whole deltas, one on regions.
type regionsLink struct {
	t    *testing.T
	url  string
	w    *game.World
	pub  *Publisher
	full *Follower
	reg  *RegionFollower
	tick uint64
	log  testkit.SyncBuf // the connections' asynchronous errors
}

func newRegionsLink(t *testing.T, gc game.Config, setup func(*RegionFollower)) *regionsLink {
	t.Helper()
	ns, err := Embed("127.0.0.1:0", Auth{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	l := &regionsLink{t: t, url: ns.ClientURL()}
	if l.w, err = game.New(gc); err != nil {
		t.Fatal(err)
	}
	for range 50 {
		l.step()
	}
	if l.pub, err = NewPublisher(l.conn(""), l.w, "rt", 7); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.pub.Close)
	if l.full, err = NewFollower(l.conn("gwfull"), "rt", "gwfull", 0, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.full.Close)
	if l.reg, err = NewRegionFollower(l.conn("gwreg"), "rt", "gwreg", 0, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.reg.Close)
	if setup != nil {
		setup(l.reg)
	}
	for k := 0; !l.full.Synced() || !l.reg.Synced(); k++ {
		if k == 500 { // next waits 10 ms a tick until then: 5 s
			t.Fatalf("the followers did not sync in %d ticks: full %+v, regions %+v", k, l.full.Stats(), l.reg.Stats())
		}
		l.next()
	}
	return l
}

func (l *regionsLink) conn(name string) *nats.Conn {
	l.t.Helper()
	nc, err := Connect(Options{URL: l.url, Name: name, Prefix: "rt", Gateway: name, Log: slog.New(slog.NewTextHandler(&l.log, nil))})
	if err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(nc.Close)
	return nc
}

func (l *regionsLink) step() {
	l.tick++
	l.w.Step(l.tick)
}

// next steps the world, publishes the tick and waits until both
// followers have it (or 20 s pass: a loaded machine, the other tests
// running beside this one under -race).
func (l *regionsLink) next() {
	l.t.Helper()
	l.step()
	if err := l.pub.Ticked(); err != nil {
		l.t.Fatal(err)
	}
	if !l.full.Synced() || !l.reg.Synced() {
		time.Sleep(10 * time.Millisecond) // a snapshot on its way
		return
	}
	at := func(f interface{ Acquire() *game.View }) bool {
		v := f.Acquire()
		defer v.Release()
		return v.Tick == l.tick
	}
	for end := time.Now().Add(20 * time.Second); !at(l.full) || !at(l.reg); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			tick := func(f interface{ Acquire() *game.View }) uint64 {
				v := f.Acquire()
				defer v.Release()
				return v.Tick
			}
			l.t.Fatalf("tick %d: the followers did not follow: full at tick %d, %+v; regions at tick %d, %+v, %d regions followed; publisher %+v; the connections' errors:\n%s",
				l.tick, tick(l.full), l.full.Stats(), tick(l.reg), l.reg.Stats(), l.reg.Followed(), l.pub.Stats(), l.log.String())
		}
	}
}

// screenCam is one camera path of the screens test.
type screenCam struct {
	kind   string // "player", "leader", "pan"
	place  int    // leader: the place on the leaderboard followed
	follow game.ID
	at     game.Point
	dx, dy int
	rf, rr *render.Renderer // drawing the full feed's views, and the regions'
	jumped uint64           // the tick of the camera's last jump
	drawn  int
	waited int
}

// hud returns the cam's HUD on view v, as a session makes it.
func (c *screenCam) hud(v *game.View) *render.HUD {
	h := &render.HUD{Spectator: c.kind != "player", ShutdownIn: -1}
	switch c.kind {
	case "player":
		h.You, h.Follow = c.follow, c.follow
	case "leader":
		if n := len(v.Top); n > 0 {
			sl := v.Top[c.place%n].Slot
			if sl < len(v.Snakes) && v.Snakes[sl].Used {
				h.Follow = v.Snakes[sl].ID
			}
		}
	default:
		h.Cam = c.at
	}
	return h
}

// sameScreens runs cams over ticks of l's world, drawing each tick's
// screen of each cam from both followers' views of that tick, the
// regions' only when Covers says its regions are there (as a session
// does); it counts in each cam the frames drawn and waited for, and
// returns the first frame that differed or that waited for its regions
// more than 8 ticks after its camera's last jump (an errWaited).
func sameScreens(l *regionsLink, cams []*screenCam, ticks int, rng *rand.Rand) error {
	const cols, rows = 48, 14
	var mu sync.Mutex // guards the cams' cameras, which the follower reads
	l.reg.SetCameras(func(dst []game.Camera) []game.Camera {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range cams {
			switch c.kind {
			case "player":
				dst = append(dst, game.Camera{Follow: c.follow, Cols: cols, Rows: rows})
			case "leader":
				dst = append(dst, game.Camera{Top: true, Cols: cols, Rows: rows})
			default:
				dst = append(dst, game.Camera{At: c.at, Cols: cols, Rows: rows})
			}
		}
		return dst
	})
	for _, c := range cams {
		c.rf, c.rr = render.New(render.ANSI16, cols, rows), render.New(render.ANSI16, cols, rows)
		c.jumped = l.tick + 1 // the follower hears of the cameras from now
	}
	W, H := l.w.Feed().Size()
	for k := 0; k < ticks; k++ {
		l.next()
		fv, rv := l.full.Acquire(), l.reg.Acquire()
		if fv.Tick != rv.Tick {
			return fmt.Errorf("tick %d: views of ticks %d and %d", l.tick, fv.Tick, rv.Tick)
		}
		var err error
		mu.Lock()
		for _, c := range cams {
			switch c.kind {
			case "player": // a player follows one snake; when it is gone, another
				if s, ok := fv.Snake(c.follow); !ok || !s.Alive && fv.Tick > s.DeathTick+20 {
					for _, s := range fv.Snakes[rng.IntN(len(fv.Snakes)):] {
						if s.Used && s.Alive {
							c.follow, c.jumped = s.ID, fv.Tick
							break
						}
					}
				} else if ok && s.SpawnTick == fv.Tick {
					c.jumped = fv.Tick // a respawn
				}
			case "leader": // cycles through the leaderboard
				if rng.IntN(40) == 0 {
					c.place, c.jumped = rng.IntN(game.TopN), fv.Tick
				}
			default: // pans, across the world's edges
				c.at = game.Point{X: ((c.at.X+c.dx)%W + W) % W, Y: ((c.at.Y+c.dy)%H + H) % H}
			}
			h := c.hud(fv)
			if c.kind == "leader" && h.Follow != c.follow {
				c.follow, c.jumped = h.Follow, fv.Tick
			}
			if !l.reg.Covers(rv, h.Follow, h.Cam, cols, rows) {
				c.waited++
				if fv.Tick > c.jumped+8 && err == nil {
					err = fmt.Errorf("tick %d: the %s camera at %v (following %v) %w %d ticks after its last jump",
						fv.Tick, c.kind, c.at, h.Follow, errWaited, fv.Tick-c.jumped)
				}
				c.rr.Invalidate() // as after a wait: both draw whole next time
				c.rf.Invalidate()
				continue
			}
			a, b := c.rf.Frame(fv, h), c.rr.Frame(rv, h)
			c.drawn++
			if !bytes.Equal(a, b) && err == nil {
				err = fmt.Errorf("tick %d: the %s camera (following %v at %v): the screens differ:\nfull    %q\nregions %q", fv.Tick, c.kind, h.Follow, c.at, a, b)
			}
		}
		mu.Unlock()
		fv.Release()
		rv.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// errWaited is sameScreens' error for a camera that waited too long for
// its regions.
var errWaited = errors.New("waited for its regions")

func screensWorld() game.Config {
	gc := game.DefaultConfig()
	gc.W, gc.H, gc.MaxSnakes, gc.Bots, gc.BotTarget, gc.Seed, gc.StartLen = 2048, 1024, 400, 320, 320, 11, 8
	return gc
}

func screenCams(rng *rand.Rand, l *regionsLink) []*screenCam {
	W, H := l.w.Feed().Size()
	v := l.w.Acquire()
	defer v.Release()
	var cams []*screenCam
	for _, s := range v.Snakes {
		if s.Used && s.Alive && len(cams) < 3 {
			cams = append(cams, &screenCam{kind: "player", follow: s.ID})
		}
	}
	cams = append(cams, &screenCam{kind: "leader"}, &screenCam{kind: "leader", place: 3},
		&screenCam{kind: "pan", at: game.Point{X: W - 20, Y: H - 6}, dx: 1, dy: 1},     // across both edges
		&screenCam{kind: "pan", at: game.Point{X: 10, Y: H / 2}, dx: -1, dy: 0},        // across the left edge
		&screenCam{kind: "pan", at: game.Point{X: W / 3, Y: 5}, dx: 0, dy: -1},         // across the top
		&screenCam{kind: "pan", at: game.Point{X: rng.IntN(W), Y: rng.IntN(H)}, dx: 1}) // still enough to draw the same
	return cams
}

// TestRegionsSameScreens: players, spectators cycling the leaderboard and
// panning spectators crossing the world's edges see the same screens
// (render.Renderer's bytes, HUD, radar and kill feed included) from a
// gateway on regions as from one on the whole deltas, every tick its
// regions cover the camera, which is every tick but a few after a camera
// jumps (a respawn, another snake followed); and again after a gap that
// makes both take a whole snapshot.
func TestRegionsSameScreens(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	l := newRegionsLink(t, screensWorld(), nil)
	cams := screenCams(rng, l)
	if err := sameScreens(l, cams, 300, rng); err != nil {
		t.Fatal(err)
	}
	for _, c := range cams {
		t.Logf("%s: %d frames drawn, %d waited for regions", c.kind, c.drawn, c.waited)
		if c.drawn < 200 {
			t.Errorf("the %s camera drew %d frames of 300", c.kind, c.drawn)
		}
	}
	fs, rs := l.full.Stats(), l.reg.Stats()
	t.Logf("bytes in: full %d, regions %d (%d regions followed, %d region snapshots)", fs.Bytes, rs.Bytes, l.reg.Followed(), rs.Regions)

	// a gap: the simulation misses more steps than its feed keeps, both
	// followers take a whole snapshot again, and the screens go on equal
	for range 20 {
		l.step()
	}
	if err := l.pub.Ticked(); err == nil {
		t.Fatal("no gap after 20 steps")
	}
	if !testkit.Eventually(10*time.Second, func() bool { // ticks go on while the snapshots come
		l.step()
		if err := l.pub.Ticked(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
		return l.full.Stats().Snapshots > fs.Snapshots && l.reg.Stats().Snapshots > rs.Snapshots
	}) {
		t.Fatalf("after the gap: no new snapshot: full %+v, regions %+v", l.full.Stats(), l.reg.Stats())
	}
	l.next()
	if err := sameScreens(l, cams, 100, rng); err != nil {
		t.Fatalf("after the gap: %v", err)
	}
}

// TestRegionsNoMargin: with no margin a camera that moves outruns its
// regions, and the screens test sees it (it waits for regions long after
// any jump): the test can fail.
func TestRegionsNoMargin(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	l := newRegionsLink(t, screensWorld(), func(f *RegionFollower) { f.enter, f.leave = 0, 0 })
	cams := screenCams(rng, l)
	err := sameScreens(l, cams, 100, rng)
	if !errors.Is(err, errWaited) {
		t.Fatalf("with no margin: %v, want a camera that waited for its regions", err)
	}
	t.Log(err)
}

// TestRegionsBytes: a gateway whose cameras cover a small part of the
// world receives much less of the stream than one on the whole deltas.
func TestRegionsBytes(t *testing.T) {
	gc := screensWorld()
	gc.W, gc.H = 2048, 1024
	l := newRegionsLink(t, gc, nil)
	l.reg.SetCameras(func(dst []game.Camera) []game.Camera {
		return append(dst, game.Camera{At: game.Point{X: 700, Y: 300}, Cols: 80, Rows: 24})
	})
	for range 20 { // the regions come
		l.next()
	}
	f0, r0 := l.full.Stats().Bytes, l.reg.Stats().Bytes
	for range 100 {
		l.next()
	}
	full, reg := l.full.Stats().Bytes-f0, l.reg.Stats().Bytes-r0
	t.Logf("100 ticks: full %d bytes, regions %d (%.1f%%), %d regions followed", full, reg, 100*float64(reg)/float64(full), l.reg.Followed())
	if reg*5 > full {
		t.Fatalf("regions: %d bytes in 100 ticks, the whole deltas %d: more than a fifth", reg, full)
	}
	if n := l.reg.Followed(); n == 0 || n > 9 {
		t.Fatalf("%d regions followed for one 80x24 camera", n)
	}
}

// TestRegionPermissions: under role users, a gateway follows regions (it
// reads the global part and the regions, and asks for and gets region
// snapshots in its own inbox) but cannot publish either, nor aim a region
// snapshot at another gateway's inbox.
func TestRegionPermissions(t *testing.T) {
	_, logs, conn := roleNATS(t)
	snc, g1, g2 := conn("sim", "simpw", ""), conn("gw1", "pw1", "gw1"), conn("gw2", "pw2", "gw2")
	gc := screensWorld()
	w, err := game.New(gc)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := NewPublisher(snc, w, "p", 5)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	f, err := NewRegionFollower(g1, "p", "gw1", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.SetCameras(func(dst []game.Camera) []game.Camera {
		return append(dst, game.Camera{At: game.Point{X: 500, Y: 300}, Cols: 80, Rows: 24})
	})
	tick := uint64(0)
	if !testkit.Eventually(10*time.Second, func() bool {
		tick++
		w.Step(tick)
		if err := pub.Ticked(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
		return f.Synced() && f.Followed() > 0 && f.Stats().Regions > 0
	}) {
		t.Fatalf("gw1 never followed a region: %+v\n%s", f.Stats(), logs)
	}

	heard := make(chan *nats.Msg, 4096)
	for _, subj := range []string{"p.g", "p.r.>", "p.gw.*.hb"} {
		if _, err := g2.ChanSubscribe(subj, heard); err != nil {
			t.Fatal(err)
		}
	}
	if err := g2.Flush(); err != nil {
		t.Fatal(err)
	}
	forged := []byte("forged")
	for _, subj := range []string{"p.g", "p.r.0.0"} {
		if err := g1.Publish(subj, forged); err != nil {
			t.Fatal(err)
		}
	}
	// a region snapshot asked for another gateway's inbox is not sent
	if err := g1.PublishRequest("p.gw.gw1.region", "_INBOX.p.gw2.x", []byte{0}); err != nil {
		t.Fatal(err)
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
	for _, subj := range []string{`Publish to "p.g"`, `Publish to "p.r.0.0"`} {
		if !testkit.Eventually(3*time.Second, func() bool {
			return strings.Contains(strings.ReplaceAll(logs.String(), `\"`, `"`), "Permissions Violation for "+subj)
		}) {
			t.Errorf("no permissions violation for gw1's %s:\n%s", subj, logs)
		}
	}
	if !testkit.Eventually(3*time.Second, func() bool {
		tick++
		w.Step(tick)
		_ = pub.Ticked()
		return pub.Stats().RegionDropped == 1
	}) {
		t.Errorf("the region snapshot request for another's inbox was not dropped: %+v", pub.Stats())
	}
}

// TestCoversAllocs: a session's question whether a view covers its camera
// (every frame) allocates nothing.
func TestCoversAllocs(t *testing.T) {
	l := newRegionsLink(t, screensWorld(), nil)
	l.reg.SetCameras(func(dst []game.Camera) []game.Camera {
		return append(dst, game.Camera{At: game.Point{X: 5, Y: 5}, Cols: 80, Rows: 24})
	})
	for range 10 {
		l.next()
	}
	v := l.reg.Acquire()
	defer v.Release()
	var id game.ID
	for _, s := range v.Snakes {
		if s.Used {
			id = s.ID
			break
		}
	}
	ok := false
	allocs := testing.AllocsPerRun(100, func() {
		ok = l.reg.Covers(v, 0, game.Point{X: 5, Y: 5}, 80, 24)
		l.reg.Covers(v, id, game.Point{}, 80, 24)
	})
	if !ok {
		t.Error("the camera the follower follows is not covered")
	}
	if allocs != 0 {
		t.Errorf("Covers: %v allocations", allocs)
	}
}

// splitFeed is a world's regional messages (a 256x128 world of bots, in
// sixteen regions) fed by hand to a regions follower's goroutine state,
// which follows every region from a snapshot of the world.
type splitFeed struct {
	t     *testing.T
	w     *game.World
	e     *wire.Encoder
	split *wire.Split
	f     *RegionFollower
	st    *follow
	first bool
}

func newSplitFeed(t *testing.T, bots int) *splitFeed {
	t.Helper()
	w, err := game.New(game.Config{W: 256, H: 128, MaxSnakes: 200, Bots: bots, Seed: 5, Unindexed: true})
	if err != nil {
		t.Fatal(err)
	}
	for tk := uint64(1); tk <= 20; tk++ {
		w.Step(tk)
	}
	e := wire.NewEncoder(w)
	split, err := wire.NewSplit(e, 64, 32)
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := wire.Snapshot(w, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := wire.NewReplica(chunks)
	if err != nil {
		t.Fatal(err)
	}
	f := &RegionFollower{}
	return &splitFeed{t: t, w: w, e: e, split: split, f: f, st: &follow{f: f, r: &replica{Replica: rep}}, first: true}
}

// step has the world take a step and the follower its messages, all but
// region skip's; before the first, the follower learns the grid and
// follows every region (its pixels are the snapshot's).
func (h *splitFeed) step(skip int) {
	h.t.Helper()
	st := h.st
	h.w.Step(h.w.Feed().Tick() + 1)
	if _, err := h.e.AppendDeltaSplit(nil, h.split); err != nil {
		h.t.Fatal(err)
	}
	if h.first {
		h.first = false
		if err := st.grid(h.split.Global()); err != nil {
			h.t.Fatal(err)
		}
		for i := range st.regions {
			st.r.Follow(i)
			h.f.followed.Add(1)
		}
	}
	st.global(bytes.Clone(h.split.Global()))
	for _, r := range h.split.Changed() {
		if int(r) != skip {
			st.region(bytes.Clone(h.split.Region(int(r))))
		}
	}
}

// holdBack steps the world until a tick in which a region changes whose
// message the follower does not get: the tick waits for it. It returns
// the region.
func (h *splitFeed) holdBack() int {
	h.t.Helper()
	h.step(-1)
	if h.st.g.Count() < 4 || h.st.r.Tick() != h.w.Feed().Tick() {
		h.t.Fatalf("after the first tick: %d regions, the replica at tick %d, the world at %d", h.st.g.Count(), h.st.r.Tick(), h.w.Feed().Tick())
	}
	// the region to hold back: the middle one of the first tick's
	// changed regions
	skip := -1
	for range 50 {
		h.step(-1)
		if c := h.split.Changed(); len(c) > 0 {
			skip = int(c[len(c)/2])
			break
		}
	}
	if skip < 0 {
		h.t.Fatal("no region changed in 50 ticks")
	}
	// step until a tick in which it changes, holding its message back
	for range 200 {
		before := h.st.r.Tick()
		h.step(skip)
		if h.st.r.Tick() == before { // waiting for skip's message
			return skip
		}
	}
	h.t.Fatalf("region %d changed in none of 200 ticks", skip)
	return -1
}

// same fails unless every region the follower follows but skip shows the
// world's pixels, at the world's tick.
func (h *splitFeed) same(skip int) {
	h.t.Helper()
	st := h.st
	if st.r.Tick() != h.w.Feed().Tick() {
		h.t.Fatalf("the replica is at tick %d, the world at %d", st.r.Tick(), h.w.Feed().Tick())
	}
	wv, rv := h.w.Acquire(), st.r.Acquire()
	defer wv.Release()
	defer rv.Release()
	for i := range st.regions {
		if i == skip {
			continue
		}
		x0, y0, rw, rh := st.g.Rect(i)
		for y := y0; y < y0+rh; y++ {
			for x := x0; x < x0+rw; x++ {
				if a, b := wv.Pix[y*wv.W+x], rv.Pix[y*rv.W+x]; a != b {
					h.t.Fatalf("tick %d, region %d, pixel (%d, %d): %v in the world, %v in the replica", wv.Tick, i, x, y, a, b)
				}
			}
		}
	}
}

// TestRegionsIncompleteTick holds back one followed region's message for
// one tick: when the next tick's global message comes, the tick before
// is applied without it, the region counts as a gap and is no longer
// followed (its snapshot is to be asked for again), and every region
// still followed shows the world's pixels.
func TestRegionsIncompleteTick(t *testing.T) {
	h := newSplitFeed(t, 150)
	skip := h.holdBack()
	st, f := h.st, h.f
	if f.gaps.Load() != 0 {
		t.Fatalf("%d gaps before the next tick came", f.gaps.Load())
	}
	h.step(-1) // its global message ends the incomplete tick
	if f.gaps.Load() != 1 {
		t.Fatalf("%d gaps, want 1", f.gaps.Load())
	}
	if st.r.Following(skip) {
		t.Fatalf("region %d, whose message never came, is still followed", skip)
	}
	if got, want := f.followed.Load(), int64(len(st.regions)-1); got != want {
		t.Fatalf("%d regions counted followed, want %d", got, want)
	}
	if time.Since(st.regions[skip].asked) < regionRetry {
		t.Fatalf("region %d's snapshot is not to be asked for again at once", skip)
	}
	h.same(skip)
}

// TestRegionsDropMidTick: a region dropped (no camera comes near it any
// more, its subscription gone, so its message may never come) while the
// tick being put together waits for another region's message:
//   - dropped, the region the tick waits for no longer holds it up:
//     interest applies the tick at once, without a gap (the follower
//     stood a tick behind until the next global message, and a test that
//     waits for each tick before it publishes the next waited for ever);
//   - a region whose message came is dropped with it: the tick still
//     waits for the other, then applies without the dropped one's
//     message (with it, the replica would see a gap and ask for a whole
//     snapshot);
//   - a region that did not change: the tick still waits.
//
// Every region still followed shows the world's pixels after.
func TestRegionsDropMidTick(t *testing.T) {
	// dropping has interest drop region i, which no camera wants, wanted
	// long ago (the follower's leaveFor is 0), the only one subscribed
	dropping := func(h *splitFeed, i int) {
		h.t.Helper()
		h.f.SetCameras(func(dst []game.Camera) []game.Camera { return dst })
		h.st.regions[i].sub = &nats.Subscription{}
		h.st.interest()
		if h.st.r.Following(i) || h.st.regions[i].sub != nil {
			h.t.Fatalf("region %d is still followed (%v) or subscribed (%v)", i, h.st.r.Following(i), h.st.regions[i].sub != nil)
		}
		if got, want := h.f.followed.Load(), int64(len(h.st.regions)-1); got != want {
			h.t.Fatalf("%d regions counted followed, want %d", got, want)
		}
	}
	// done checks the tick applied, without a gap or a resync, and the
	// regions followed the world's, dropped the region dropped
	done := func(h *splitFeed, before uint64, dropped int) {
		h.t.Helper()
		if h.st.r.Tick() != before+1 || h.st.cur != nil {
			h.t.Fatalf("the replica is at tick %d (%d before), the tick put together %v", h.st.r.Tick(), before, h.st.cur != nil)
		}
		if g := h.f.gaps.Load(); g != 0 || h.st.syncing {
			h.t.Fatalf("%d gaps, resyncing %v: want none", g, h.st.syncing)
		}
		h.same(dropped)
		h.step(-1) // the next tick goes on without the region
		h.same(dropped)
	}
	// dropBeside drops region i while the tick waits for skip's message:
	// the tick still waits, then applies once that message comes
	dropBeside := func(h *splitFeed, skip, i int) {
		h.t.Helper()
		before := h.st.r.Tick()
		dropping(h, i)
		if h.st.r.Tick() != before || h.st.cur == nil {
			h.t.Fatalf("the tick was applied (the replica at %d, %d before) without region %d's message", h.st.r.Tick(), before, skip)
		}
		h.st.region(bytes.Clone(h.split.Region(skip)))
		done(h, before, i)
	}
	t.Run("waited for", func(t *testing.T) {
		h := newSplitFeed(t, 150)
		skip := h.holdBack()
		before := h.st.r.Tick()
		dropping(h, skip)
		done(h, before, skip)
	})
	t.Run("came", func(t *testing.T) {
		h := newSplitFeed(t, 150)
		skip := h.holdBack()
		other := slices.IndexFunc(h.split.Changed(), func(r int32) bool { return int(r) != skip })
		if other < 0 {
			t.Fatalf("region %d alone changed in the tick held back", skip)
		}
		dropBeside(h, skip, int(h.split.Changed()[other]))
	})
	t.Run("unchanged", func(t *testing.T) {
		h := newSplitFeed(t, 8) // few bots: some regions see no change
		skip := h.holdBack()
		still := -1
		for i := range h.st.regions {
			if !slices.Contains(h.split.Changed(), int32(i)) {
				still = i
				break
			}
		}
		if still < 0 {
			t.Fatalf("every region changed in the tick held back")
		}
		dropBeside(h, skip, still)
	})
}

// TestRegionsBehindAskOnce: a regions follower far behind the stream (its
// goroutine held while the simulation publishes 120 ticks, then its
// camera moved to other regions) asks once for each region its camera
// comes to need, however long the answer waits in its channel behind the
// ticks before it: every region snapshot written for it is taken in. Its Behind says about how many ticks behind it was, and 0
// once it caught up.
func TestRegionsBehindAskOnce(t *testing.T) {
	gc := screensWorld()
	gc.W, gc.H = 2048, 1024
	var hold atomic.Pointer[chan struct{}] // while set, Cameras waits for it to close
	var at atomic.Int64                    // the camera's x
	at.Store(300)
	l := newRegionsLink(t, gc, func(f *RegionFollower) {
		f.SetCameras(func(dst []game.Camera) []game.Camera {
			if h := hold.Load(); h != nil {
				<-*h // the follower's goroutine, after a view published
			}
			return append(dst, game.Camera{At: game.Point{X: int(at.Load()), Y: 300}, Cols: 80, Rows: 24})
		})
	})
	for range 20 { // the first regions come
		l.next()
	}
	p0, r0 := l.pub.Stats().RegionSnapshots, l.reg.Stats().Regions
	gate := make(chan struct{})
	hold.Store(&gate)
	publish := func(n int) {
		for range n {
			l.step()
			if err := l.pub.Ticked(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	publish(120) // about 0.3 s, the follower held
	behind := l.reg.Stats().Queued
	est := l.reg.Behind()
	v := l.reg.Acquire()
	lag := int(l.tick - v.Tick)
	v.Release()
	// other regions, asked for 120 ticks behind: the answers come after
	// the messages of every one of those ticks
	at.Store(1300)
	hold.Store(nil)
	close(gate)
	publish(30)
	done := func() bool {
		v := l.reg.Acquire()
		defer v.Release()
		return v.Tick == l.tick && l.reg.Stats().Queued == 0
	}
	if !testkit.Eventually(20*time.Second, done) {
		t.Fatalf("the follower did not catch up: %+v", l.reg.Stats())
	}
	for range 3 { // a region whose snapshot came last is followed from the next tick
		l.next()
	}
	asked, took := l.pub.Stats().RegionSnapshots-p0, l.reg.Stats().Regions-r0
	t.Logf("%d messages queued when the camera moved (%d ticks, Behind said %d); %d region snapshots written, %d taken in, %d regions followed",
		behind, lag, est, asked, took, l.reg.Followed())
	if behind < 100 {
		t.Fatalf("the follower was only %d messages behind: the test did not test", behind)
	}
	if est < behindFrom || est > 2*lag+5 {
		t.Errorf("Behind said %d ticks, %d behind", est, lag)
	}
	if b := l.reg.Behind(); b != 0 {
		t.Errorf("Behind says %d once caught up", b)
	}
	if took == 0 {
		t.Fatal("no region snapshot taken in after the camera moved")
	}
	if asked != took {
		t.Fatalf("%d region snapshots written for %d taken in: the follower asked again for snapshots on their way", asked, took)
	}
	if st := l.reg.Stats(); st.Gaps != 0 || st.Snapshots != 1 {
		t.Fatalf("follower stats %+v: want no gap and no whole snapshot but the first", st)
	}
}

// TestRegionsHeadless: a headless regions follower's views carry no render
// index, and show what the whole feed's do within its camera.
func TestRegionsHeadless(t *testing.T) {
	cam := game.Camera{At: game.Point{X: 700, Y: 300}, Cols: 80, Rows: 24}
	l := newRegionsLink(t, screensWorld(), func(f *RegionFollower) {
		f.Headless()
		f.SetCameras(func(dst []game.Camera) []game.Camera { return append(dst, cam) })
	})
	for range 20 { // the regions come
		l.next()
	}
	for range 20 {
		l.next()
		fv, rv := l.full.Acquire(), l.reg.Acquire()
		if !l.reg.Covers(rv, cam.Follow, cam.At, cam.Cols, cam.Rows) {
			t.Fatalf("tick %d: the camera's regions are not followed", rv.Tick)
		}
		if n := len(rv.Dirty) + len(rv.Fresh) + len(rv.FreshX) + len(rv.FreshAt) + len(rv.FreshBlk) + len(rv.FreshPix); n != 0 {
			t.Fatalf("tick %d: a headless follower's view carries a render index", rv.Tick)
		}
		if len(fv.Dirty) == 0 {
			t.Fatalf("tick %d: the whole feed's view carries no render index", fv.Tick)
		}
		for y := cam.At.Y - cam.Rows; y < cam.At.Y+cam.Rows; y++ { // a cell is two pixels high
			for x := cam.At.X - cam.Cols/2; x < cam.At.X+cam.Cols/2; x++ {
				if a, b := fv.Pix[y*fv.W+x], rv.Pix[y*rv.W+x]; a != b {
					t.Fatalf("tick %d, pixel (%d, %d): %v on the whole feed, %v on regions", fv.Tick, x, y, a, b)
				}
			}
		}
		fv.Release()
		rv.Release()
	}
}
