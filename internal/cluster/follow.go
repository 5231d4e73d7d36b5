package cluster

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"snaked/game"
	"snaked/internal/cluster/wire"
)

// Cameras appends the cameras of a gateway's sessions to dst and returns
// it. A RegionFollower calls it after each tick, on its own goroutine.
type Cameras func(dst []game.Camera) []game.Camera

// Region following: a region within regionEnter pixels of where a camera
// may show is followed; one further than regionLeave from every camera
// for regionLeaveAfter is dropped. A head moves a pixel a tick (three in
// a dash, every DashCooldown), so regionEnter outruns a camera for 20
// ticks: the time a region snapshot takes (about two ticks) with room
// for a slow link. A region snapshot is asked for again when it is
// overdue: asked at least regionRetry ago, and not among the messages that
// had come by then (see follow.overdue). A follower behind the stream thus
// asks once, not every regionRetry until it catches up: the answer waits
// in the channel behind the ticks that came before it.
const (
	regionEnter      = 24
	regionLeave      = 64
	regionLeaveAfter = 2 * time.Second
	regionRetry      = time.Second
)

// Bounds of what a RegionFollower holds: messages in its channel, and
// kept while a whole snapshot is on its way. A tick of a 100,000-snake
// world is a global message and up to a few hundred regions' (about
// 600 KB in all when every region is followed), so the channel holds
// about 60 such ticks, and more when fewer regions are followed (the
// whole-feed Follower queues 256 deltas, maxPending): a gateway starved
// of CPU for seconds catches up instead of losing regions to NATS's slow
// consumer drops.
const (
	regionInbound = 32768
	regionPending = 8192
)

// RegionFollower is a gateway's side of the stream in regions: it keeps a
// wire.Replica of the world whose pixels are the world's in the regions
// its cameras need (Cameras) and stale elsewhere, and everything else
// (snakes and their heads, leaderboard, counts, kills) the world's. It
// starts, and restarts after a gap in the global part, from a whole
// snapshot; a region it starts to need comes as a region snapshot. Its
// Views are what the gateway's sessions read. One goroutine of its own
// reads the stream, in order, from one channel; Close stops it.
type RegionFollower struct {
	nc        *nats.Conn
	subj      subjects
	maxPixels int
	onTick    func()
	rep       atomic.Pointer[replica]
	empty     *game.View
	cameras   atomic.Pointer[Cameras]
	in        chan *nats.Msg // every stream message, in order
	inbox     string         // where region snapshots come
	subs      []*nats.Subscription
	stop      chan struct{}
	done      chan struct{}
	ctx       context.Context // ends at Close: a whole snapshot's wait
	cancel    context.CancelFunc
	enter     int           // regionEnter (tests change it before SetCameras)
	leave     int           // regionLeave
	leaveFor  time.Duration // regionLeaveAfter
	headless  atomic.Bool   // its replicas' views carry no render index (Headless)

	cov atomic.Pointer[coverage] // which ticks of the views each region's pixels are the world's in

	applied, gaps, bad, snaps, regions, foreign, bytes atomic.Uint64
	followed                                           atomic.Int64 // regions followed now
	last                                               atomic.Int64 // when a tick was last applied (unix ns)
	perTick                                            atomic.Int64 // messages taken a tick, in 16ths, averaged over the last ticks (Behind)
}

// NewRegionFollower follows the world streamed under prefix on nc in
// regions, for gateway name, taking worlds of at most maxPixels pixels
// (0: game.MaxPixels); onTick (may be nil) runs after every view
// published, on the follower's goroutine: of every tick applied, but
// those a follower behind the stream applies without one (see
// quietFrom). Until SetCameras it follows no region.
func NewRegionFollower(nc *nats.Conn, prefix, name string, maxPixels int, onTick func()) (*RegionFollower, error) {
	if maxPixels <= 0 || maxPixels > game.MaxPixels {
		maxPixels = game.MaxPixels
	}
	f := &RegionFollower{nc: nc, subj: subjectsOf(prefix, name), maxPixels: maxPixels, onTick: onTick, empty: game.EmptyView(),
		in: make(chan *nats.Msg, regionInbound), stop: make(chan struct{}), done: make(chan struct{}),
		enter: regionEnter, leave: regionLeave, leaveFor: regionLeaveAfter}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	f.inbox = nc.NewRespInbox()
	for _, s := range []string{f.subj.global, f.inbox} {
		sub, err := nc.ChanSubscribe(s, f.in)
		if err != nil {
			f.unsubscribe()
			return nil, err
		}
		f.subs = append(f.subs, sub)
	}
	go f.loop()
	return f, nil
}

// Headless has the follower's views carry no render index (wire's
// Replica.Unindex) from the next tick it applies: for a follower whose
// views no session draws, such as a load test's.
func (f *RegionFollower) Headless() { f.headless.Store(true) }

// Mode is FollowRegions.
func (f *RegionFollower) Mode() FollowMode { return FollowRegions }

// SetCameras tells the follower where its gateway's sessions look.
func (f *RegionFollower) SetCameras(c Cameras) { f.cameras.Store(&c) }

// Stats returns the counters.
func (f *RegionFollower) Stats() FollowerStats {
	return FollowerStats{Applied: f.applied.Load(), Gaps: f.gaps.Load(), Bad: f.bad.Load(), Snapshots: f.snaps.Load(),
		Foreign: f.foreign.Load(), Bytes: f.bytes.Load(), Regions: f.regions.Load(), Queued: uint64(len(f.in))}
}

// Followed is the number of regions followed now.
func (f *RegionFollower) Followed() int { return int(f.followed.Load()) }

// Live reports whether a tick was applied within d.
func (f *RegionFollower) Live(d time.Duration) bool {
	return time.Since(time.Unix(0, f.last.Load())) <= d
}

// Behind is about how many ticks the replica is behind the newest
// message received: the messages in its channel over the messages a tick
// has brought lately. A follower short of CPU falls behind by them.
func (f *RegionFollower) Behind() int {
	return len(f.in) * 16 / int(max(f.perTick.Load(), 16))
}

// Synced reports whether the follower has a replica.
func (f *RegionFollower) Synced() bool { return f.rep.Load() != nil }

// Acquire returns the replica's newest view, or an empty one before the
// first snapshot. Release it.
func (f *RegionFollower) Acquire() *game.View {
	if r := f.rep.Load(); r != nil {
		return r.Acquire()
	}
	return f.empty
}

// Close stops following and waits for the follower's goroutine.
func (f *RegionFollower) Close() {
	select {
	case <-f.stop:
	default:
		close(f.stop)
		f.cancel()
	}
	<-f.done
}

func (f *RegionFollower) unsubscribe() {
	for _, s := range f.subs {
		_ = s.Unsubscribe()
	}
	f.subs = nil
}

// coverage says, for each region of a grid, the ticks of the views whose
// pixels there are the world's: from[i] to to[i], both included.
type coverage struct {
	g        wire.Regions
	from, to []atomic.Uint64
}

func newCoverage(g wire.Regions) *coverage {
	c := &coverage{g: g, from: make([]atomic.Uint64, g.Count()), to: make([]atomic.Uint64, g.Count())}
	for i := range c.from {
		c.from[i].Store(math.MaxUint64)
	}
	return c
}

// valid makes region i's pixels the world's in the views from tick on.
// It stores from before to, and Covers loads to before from, so a reader
// that sees the new to sees the new from too: never a stale region's old
// from with its new to.
func (c *coverage) valid(i int, tick uint64) {
	c.from[i].Store(tick)
	c.to[i].Store(math.MaxUint64)
}

// stale makes region i's pixels stale in the views after tick.
func (c *coverage) stale(i int, tick uint64) { c.to[i].Store(tick) }

// camArea returns where a camera of cols x rows cells may show, as a
// centre and half-extents: around the head of the snake it follows, a
// whole screen each way (the renderer's camera trails its snake), or
// around its own centre at, half a screen and a little; false when the
// snake followed is gone.
func camArea(v *game.View, follow game.ID, at game.Point, cols, rows int) (c game.Point, hw, hh int, ok bool) {
	pw, ph := max(cols, 1), 2*max(rows, 1)
	if follow == 0 {
		return at, pw/2 + 1, ph/2 + 2, true
	}
	if _, ok := v.Snake(follow); !ok {
		return at, 0, 0, false
	}
	return v.Heads[follow.Slot()], pw, ph, true
}

// Covers reports whether view v (one of the follower's) holds the world's
// pixels wherever a camera may show, of a terminal of cols x rows cells
// that follows snake follow (its head within a screen of the camera's
// edges), or else a free camera centred at at. A session draws a frame
// only then: a camera that jumps (a respawn, another snake followed)
// waits for its regions' snapshots. Safe for concurrent use.
func (f *RegionFollower) Covers(v *game.View, follow game.ID, at game.Point, cols, rows int) bool {
	if v.W == 0 {
		return true // no world yet: nothing drawn either way
	}
	c := f.cov.Load()
	if c == nil || c.g.W != v.W || c.g.H != v.H {
		return false
	}
	at, hw, hh, ok := camArea(v, follow, at, cols, rows)
	if !ok {
		return true // the camera stays where it was
	}
	eachRegion(c.g, at.X-hw, at.Y-hh, at.X+hw, at.Y+hh, func(i int) {
		to := c.to[i].Load() // before from: see valid
		ok = ok && v.Tick <= to && c.from[i].Load() <= v.Tick
	})
	return ok
}

// eachRegion calls do with each region of g that holds a pixel of
// x0..x1, y0..y1 (wrapping).
func eachRegion(g wire.Regions, x0, y0, x1, y1 int, do func(i int)) {
	x1, y1 = min(x1, x0+g.W-1), min(y1, y0+g.H-1)
	for y := y0; y <= y1; {
		wy := (y%g.H + g.H) % g.H
		for x := x0; x <= x1; {
			wx := (x%g.W + g.W) % g.W
			do(g.At(wx, wy))
			x += min((wx/g.RW+1)*g.RW, g.W) - wx
		}
		y += min((wy/g.RH+1)*g.RH, g.H) - wy
	}
}

// regionState is how the follower stands with one region.
type regionState struct {
	sub    *nats.Subscription // nil: not subscribed
	asked  time.Time          // when its snapshot was last asked for; zero once followed
	due    uint64             // with known: the messages taken by which its snapshot is overdue
	known  bool               // due is set
	wanted time.Time          // when a camera was last within regionLeave of it
}

// tickParts is a tick being put together: its global message and the
// messages of the followed regions it names.
type tickParts struct {
	global  []byte
	tick    uint64
	changed wire.RegionSet
	want    int
	parts   [][]byte
}

// follow is the follower's goroutine's state.
type follow struct {
	f       *RegionFollower
	r       *replica
	g       wire.Regions // the grid, from the global messages; zero before the first
	regions []regionState
	cur     *tickParts
	next    tickParts // cur's storage
	syncing bool      // a whole snapshot is on its way: messages wait in pending
	pending []*nats.Msg
	fetched chan fetched
	cams    []game.Camera
	want    []bool // scratch: regions within regionEnter of a camera
	keep    []bool // scratch: within regionLeave
	got     []bool // scratch: the regions an incomplete tick has (see finish)
	req     []byte
	taken   uint64 // messages taken from the channel
	tickAt  uint64 // taken when the last tick was applied
	quiet   int    // ticks applied without a view since the last one published
	bare    bool   // r's views carry no render index (Headless)
}

// fetched is a whole snapshot's outcome.
type fetched struct {
	r   *wire.Replica
	sim uint64
	err error
}

func (f *RegionFollower) loop() {
	defer close(f.done)
	st := &follow{f: f, fetched: make(chan fetched, 1)}
	defer func() {
		f.unsubscribe()
		for i := range st.regions {
			if s := st.regions[i].sub; s != nil {
				_ = s.Unsubscribe()
			}
		}
		if st.syncing {
			<-st.fetched
		}
	}()
	st.resync()
	retry := time.NewTicker(regionRetry)
	defer retry.Stop()
	for {
		select {
		case <-f.stop:
			return
		case m := <-f.in:
			st.taken++
			st.take(m)
			st.flush()
		case x := <-st.fetched:
			st.built(x)
			st.flush()
		case <-retry.C:
			if st.r == nil && !st.syncing {
				st.resync()
			}
			st.interest()
		}
	}
}

// resync asks for a whole snapshot; messages wait in pending until it
// comes.
func (st *follow) resync() {
	if st.syncing {
		return
	}
	st.syncing = true
	st.pending = st.pending[:0]
	f := st.f
	go func() { // owned by the loop: it waits for the answer before it ends
		r, sim, err := collectSnapshot(f.ctx, f.nc, f.subj.snapshot, f.maxPixels, snapshotWait, &f.bad, &f.bytes)
		st.fetched <- fetched{r, sim, err}
	}()
}

// built takes a whole snapshot in: the regions subscribed now (before the
// snapshot was asked for, as subscriptions wait while it is on its way)
// are followed from its pixels; then the messages that waited.
func (st *follow) built(x fetched) {
	st.syncing = false
	if x.err != nil {
		return // the retry ticker asks again
	}
	f := st.f
	f.snaps.Add(1)
	st.r, st.cur, st.bare, st.quiet = newReplica(x.r, x.sim), nil, false, 0
	st.tickAt = st.taken
	f.rep.Store(st.r)
	if st.g.Count() > 0 {
		st.regionsOn()
	}
	f.last.Store(time.Now().UnixNano())
	if f.onTick != nil {
		f.onTick()
	}
	pending := st.pending
	st.pending = nil
	for _, m := range pending {
		st.take(m)
	}
	st.pending = pending[:0]
}

// regionsOn makes the replica a follower of st.g's regions, following
// those subscribed.
func (st *follow) regionsOn() {
	if err := st.r.FollowRegions(st.g.RW, st.g.RH); err != nil {
		st.f.bad.Add(1)
		return
	}
	n := 0
	c := newCoverage(st.g)
	for i := range st.regions {
		if st.regions[i].sub != nil {
			st.r.Follow(i)
			st.regions[i].forget()
			c.valid(i, st.r.Tick())
			n++
		}
	}
	st.f.cov.Store(c)
	st.f.followed.Store(int64(n))
}

// take handles one stream message.
func (st *follow) take(m *nats.Msg) {
	f := st.f
	f.bytes.Add(uint64(len(m.Data)))
	if st.syncing {
		if len(st.pending) < regionPending {
			st.pending = append(st.pending, m)
		}
		return
	}
	sim, msg, err := decodeStream(m.Data)
	if err != nil {
		f.bad.Add(1)
		return
	}
	if st.r == nil {
		return
	}
	if sim != st.r.sim {
		f.foreign.Add(1)
		st.resync()
		return
	}
	switch {
	case m.Subject == f.subj.global:
		st.global(msg)
	case m.Subject == f.inbox:
		st.regionSnapshot(msg)
	case strings.HasPrefix(m.Subject, f.subj.regions):
		st.region(msg)
	}
}

// global starts a tick: the one before, if a region's message never came,
// goes without it (the region is asked for again).
func (st *follow) global(msg []byte) {
	f := st.f
	_, tick, changed, err := wire.GlobalInfo(msg)
	if err != nil {
		f.bad.Add(1)
		st.resync()
		return
	}
	if err := st.grid(msg); err != nil {
		f.bad.Add(1)
		return
	}
	st.finish()
	t := &st.next
	t.global, t.tick, t.changed, t.want, t.parts = msg, tick, changed, 0, t.parts[:0]
	for i := range st.regions {
		if st.r.Following(i) && changed.Has(i) {
			t.want++
		}
	}
	st.cur = t
	if t.want == 0 {
		st.apply()
	}
}

// grid learns the region grid from a global message (again when the
// world, after a restart, is another).
func (st *follow) grid(msg []byte) error {
	rw, rh, err := wire.GlobalRegions(msg)
	if err != nil {
		return err
	}
	w, h := st.r.Size()
	if st.g.RW == rw && st.g.RH == rh && st.g.W == w && st.g.H == h && st.r.Regions() == st.g {
		return nil
	}
	g, err := wire.NewRegions(w, h, rw, rh)
	if err != nil {
		return err
	}
	for i := range st.regions { // another grid: start again
		if s := st.regions[i].sub; s != nil {
			_ = s.Unsubscribe()
		}
	}
	st.g, st.regions = g, make([]regionState, g.Count())
	st.want, st.keep, st.got = make([]bool, g.Count()), make([]bool, g.Count()), make([]bool, g.Count())
	st.regionsOn()
	return nil
}

// region takes a region's message for the tick being put together.
func (st *follow) region(msg []byte) {
	t := st.cur
	reg, tick, err := wire.RegionInfo(msg)
	switch {
	case err != nil:
		st.f.bad.Add(1)
	case t == nil || tick != t.tick || !st.r.Following(reg) || !t.changed.Has(reg):
		// a region not followed yet, or a tick gone by
	default:
		t.parts = append(t.parts, msg)
		if len(t.parts) == t.want {
			st.apply()
		}
	}
}

// finish applies the tick being put together, if any, without the
// regions whose messages did not come: those are dropped and asked for
// again.
func (st *follow) finish() {
	t := st.cur
	if t == nil {
		return
	}
	if len(t.parts) < t.want {
		got := st.got
		clear(got)
		for _, m := range t.parts {
			if r, _, err := wire.RegionInfo(m); err == nil && r >= 0 && r < len(got) {
				got[r] = true
			}
		}
		for i := range st.regions {
			if st.r.Following(i) && t.changed.Has(i) && !got[i] {
				st.f.gaps.Add(1)
				st.f.cov.Load().stale(i, st.r.Tick())
				st.r.Unfollow(i)
				st.regions[i].askAgain()
				st.f.followed.Add(-1)
			}
		}
	}
	st.apply()
}

// apply applies the tick put together.
func (st *follow) apply() {
	t, f := st.cur, st.f
	st.cur = nil
	// Behind the stream by quietFrom ticks or more, the follower applies
	// the tick without a view (its sessions draw the newest), and
	// publishes once it has taken every message come (see flush), or
	// after maxQuiet.
	quiet := f.Behind() >= quietFrom && st.quiet < maxQuiet-1
	var err error
	if quiet {
		err = st.r.ApplyRegionsQuiet(t.global, t.parts)
	} else {
		err = st.r.ApplyRegions(t.global, t.parts)
	}
	switch {
	case err == nil:
		if !st.bare && f.headless.Load() {
			st.r.Unindex()
			st.bare = true
		}
		n := int64(st.taken - st.tickAt) // this tick's messages and any answers between
		st.tickAt = st.taken
		p := f.perTick.Load()
		f.perTick.Store(p + (16*n-p)/8)
		f.applied.Add(1)
		f.last.Store(time.Now().UnixNano())
		if quiet {
			st.quiet++
		} else {
			st.published()
		}
	case errors.Is(err, wire.ErrGap):
		if base, _, _, e := wire.GlobalInfo(t.global); e == nil && base < st.r.Tick() {
			return // from before the snapshot: the replica has it
		}
		f.gaps.Add(1)
		st.resync()
	default:
		f.bad.Add(1)
		st.resync()
	}
}

// published tells onTick of a view published and follows the cameras
// it shows.
func (st *follow) published() {
	st.quiet = 0
	if st.f.onTick != nil {
		st.f.onTick()
	}
	st.interest()
}

// flush publishes the view of the last tick applied quietly, once the
// channel is empty.
func (st *follow) flush() {
	if len(st.f.in) == 0 && st.r != nil && st.r.Publish() {
		st.published()
	}
}

// regionSnapshot takes a region's snapshot in, if it is of the replica's
// tick (else the region is asked for again).
func (st *follow) regionSnapshot(msg []byte) {
	reg, _, err := wire.RegionSnapshotInfo(msg)
	if err != nil || reg >= len(st.regions) {
		st.f.bad.Add(1)
		return
	}
	rs := &st.regions[reg]
	if rs.sub == nil || st.r.Following(reg) {
		return // no longer wanted, or already had
	}
	st.finish() // the tick it is of has come whole
	if rs.sub == nil {
		return // the tick's apply looked at the cameras again and dropped it
	}
	if _, err := st.r.ApplyRegionSnapshot(msg); err != nil {
		if !errors.Is(err, wire.ErrGap) {
			st.f.bad.Add(1)
		}
		rs.askAgain()
		return
	}
	st.f.regions.Add(1)
	st.f.followed.Add(1)
	st.f.cov.Load().valid(reg, st.r.Tick()+1) // its pixels go out with the next tick's view
	rs.forget()
}

// interest follows the regions the cameras need and drops those no
// camera came near for regionLeaveAfter.
func (st *follow) interest() {
	f := st.f
	c := f.cameras.Load()
	if c == nil || st.r == nil || st.syncing || st.g.Count() == 0 {
		return
	}
	st.cams = (*c)(st.cams[:0])
	clear(st.want)
	clear(st.keep)
	v := st.r.Acquire()
	for _, cam := range st.cams {
		if !cam.Top {
			if at, hw, hh, ok := camArea(v, cam.Follow, cam.At, cam.Cols, cam.Rows); ok {
				st.mark(at, hw, hh)
			}
			continue
		}
		for _, e := range v.Top { // the leaderboard's next snake is a key away
			if e.Slot < len(v.Snakes) {
				if at, hw, hh, ok := camArea(v, v.Snakes[e.Slot].ID, cam.At, cam.Cols, cam.Rows); ok {
					st.mark(at, hw, hh)
				}
			}
		}
	}
	v.Release()
	now := time.Now()
	for i := range st.regions {
		rs := &st.regions[i]
		if st.keep[i] {
			rs.wanted = now
		}
		switch {
		case st.want[i] && rs.sub == nil:
			sub, err := f.nc.ChanSubscribe(f.subj.regionSubject(i%st.g.NX, i/st.g.NX), f.in)
			if err != nil {
				continue
			}
			rs.sub = sub
			st.ask(i, now)
		case rs.sub != nil && now.Sub(rs.wanted) > f.leaveFor:
			_ = rs.sub.Unsubscribe()
			rs.sub = nil
			rs.forget()
			if st.r.Following(i) {
				st.drop(i)
			}
		case rs.sub != nil && !st.r.Following(i) && st.overdue(rs, now):
			st.ask(i, now)
		}
	}
	if t := st.cur; t != nil && len(t.parts) == t.want {
		st.apply() // it waited only for regions dropped
	}
}

// drop stops following region i, which no camera came near: the tick
// being put together no longer waits for its message (which may never
// come, its subscription gone), nor applies it if it came. i was
// followed when the tick's global message came, since a region starts
// to be followed only between ticks (regionSnapshot), so the tick's
// want counts it if it changed. interest applies the tick once no
// message it waits for is left.
func (st *follow) drop(i int) {
	f := st.f
	f.cov.Load().stale(i, st.r.Tick())
	st.r.Unfollow(i)
	f.followed.Add(-1)
	t := st.cur
	if t == nil || !t.changed.Has(i) {
		return
	}
	for k, m := range t.parts {
		if r, _, err := wire.RegionInfo(m); err == nil && r == i {
			t.parts = slices.Delete(t.parts, k, k+1)
			break
		}
	}
	t.want--
}

// mark marks the regions within regionEnter of the rectangle of half
// width hw and half height hh around p in want, and those within
// regionLeave in keep.
func (st *follow) mark(p game.Point, hw, hh int) {
	e, l := st.f.enter, max(st.f.leave, st.f.enter)
	st.rect(st.want, p.X-hw-e, p.Y-hh-e, p.X+hw+e, p.Y+hh+e)
	st.rect(st.keep, p.X-hw-l, p.Y-hh-l, p.X+hw+l, p.Y+hh+l)
}

// rect sets in set the regions of the pixels x0..x1, y0..y1 (wrapping).
func (st *follow) rect(set []bool, x0, y0, x1, y1 int) {
	eachRegion(st.g, x0, y0, x1, y1, func(i int) { set[i] = true })
}

// overdue reports whether the snapshot of rs asked for at rs.asked is
// overdue. The answer to a request comes in the stream after every message
// that came before it, so one that came within regionRetry is among the
// messages in the channel regionRetry after the request: the first look
// after that notes how many messages will have been taken once they are
// (due), and the snapshot is overdue once they are.
func (st *follow) overdue(rs *regionState, now time.Time) bool {
	if now.Sub(rs.asked) < regionRetry {
		return false
	}
	if !rs.known {
		rs.due, rs.known = st.taken+uint64(len(st.f.in)), true
	}
	return st.taken >= rs.due
}

// askAgain has the region's snapshot asked for again at the next look:
// the request or its answer was lost, or the answer was of no use.
func (rs *regionState) askAgain() {
	rs.asked, rs.due, rs.known = time.Time{}, 0, true
}

// forget clears what rs knows of a request: there is none.
func (rs *regionState) forget() {
	rs.asked, rs.due, rs.known = time.Time{}, 0, false
}

// ask asks for region i's snapshot.
func (st *follow) ask(i int, now time.Time) {
	st.regions[i].asked, st.regions[i].known = now, false
	st.req = binary.AppendUvarint(st.req[:0], uint64(i))
	_ = st.f.nc.PublishRequest(st.f.subj.region, st.f.inbox, st.req)
}
