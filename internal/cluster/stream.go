package cluster

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"snaked/game"
	"snaked/internal/cluster/wire"
)

// The world's stream: after every Step the simulation publishes the delta
// (package wire's format, behind the stream header naming the simulation
// instance) on PREFIX.tick; a follower builds a wire.Replica from a
// snapshot (a request on PREFIX.gw.NAME.snapshot, answered with the
// snapshot's chunks on the requester's inbox, at most ChunkSize bytes
// each, each behind the same header) and applies the deltas of that
// instance in order. A follower that joins late, sees a gap or hears
// another instance's tick (the simulation restarted) asks for a snapshot
// again; the simulation never waits for anyone.

// ChunkSize bounds a snapshot chunk: well under NATS's default 1 MB payload.
const ChunkSize = 512 << 10

// maxChunks bounds the chunks of one snapshot a follower collects.
const maxChunks = 4096

// SnapshotBytes is the most snapshot bytes a follower that takes worlds of
// at most maxPixels pixels collects: six bytes a pixel (a snapshot's pixel
// runs take at most five) and 32 MiB for the snake records.
func SnapshotBytes(maxPixels int) int { return 6*maxPixels + 32<<20 }

// Publisher is the simulation's side of the stream. Ticked runs on the
// goroutine that calls Step and encodes; a goroutine of the Publisher's
// own hands the messages to the connection (outbox), and another writes
// snapshots from the view of their tick (wire.SnapshotLater), so neither
// a slow NATS server nor a gateway that needs a snapshot (it joined, or
// fell behind) costs the simulation's tick more than a hand-off.
type Publisher struct {
	nc    *nats.Conn
	subj  subjects
	inst  uint64
	enc   *wire.Encoder
	w     *game.World
	out   *outbox
	snapq chan snapReq // snapshot requests, for Ticked
	sub   *nats.Subscription

	reg *regionPub // the world's regional form (regions.go)

	waiting map[string]string    // gateway name -> the inbox of its latest request not served yet (Ticked's goroutine)
	served  map[string]time.Time // gateway name -> when its last snapshot was handed to the writer (Ticked's goroutine)
	closed  bool                 // Close ran (Ticked's goroutine)
	busy    atomic.Bool          // a snapshot is being written
	jobs    chan snapJob         // to the writer, one at a time
	done    chan struct{}        // the writer has ended
	closing sync.Once

	// rounds is write-locked while the world steps and Ticked encodes
	// (Rounds); the writer encodes a snapshot under its read side, a slice
	// at a time
	rounds sync.RWMutex

	sent, bytes, snaps, dropped atomic.Uint64
}

// snapReq is a gateway's request for a snapshot: its name and the inbox.
type snapReq struct{ gw, inbox string }

// snapEvery is how often one gateway name gets a snapshot at most: its
// requests meanwhile wait, the latest one standing for all.
const snapEvery = time.Second

// snapJob is a snapshot to write and the inboxes that asked for it.
type snapJob struct {
	l       *wire.Later
	inboxes []string
}

// NewPublisher streams world w on nc under prefix as simulation instance
// inst (Sim.Instance). Create it on the goroutine that calls Step, between
// Steps; Close it there too.
func NewPublisher(nc *nats.Conn, w *game.World, prefix string, inst uint64) (*Publisher, error) {
	if inst == 0 {
		return nil, errors.New("cluster: publisher without a simulation instance")
	}
	p := &Publisher{nc: nc, subj: subjectsOf(prefix, "*"), inst: inst, enc: wire.NewEncoder(w), w: w,
		snapq: make(chan snapReq, 64), waiting: map[string]string{}, served: map[string]time.Time{},
		jobs: make(chan snapJob, 1), done: make(chan struct{})}
	sub, err := nc.Subscribe(p.subj.snapshot, func(m *nats.Msg) {
		if !p.subj.replyOK(m) {
			p.dropped.Add(1)
			return
		}
		gw, _ := p.subj.sender(m.Subject)
		select {
		case p.snapq <- snapReq{gw, m.Reply}:
		default:
			p.dropped.Add(1) // too many at once: the follower asks again
		}
	})
	if err != nil {
		return nil, err
	}
	p.sub = sub
	if p.reg, err = newRegionPub(p); err != nil {
		_ = sub.Unsubscribe()
		return nil, err
	}
	if err := nc.Flush(); err != nil { // the server has the subscriptions: requests from now on are heard
		_ = sub.Unsubscribe()
		_ = p.reg.sub.Unsubscribe()
		return nil, err
	}
	p.out = newOutbox(nc)
	go p.writer()
	return p, nil
}

// Close stops answering snapshot requests, and waits for the messages of
// the ticks handed over to be handed to the connection and for a snapshot
// being written. Call it on the goroutine that calls Ticked.
func (p *Publisher) Close() {
	p.closing.Do(func() {
		_ = p.sub.Unsubscribe()
		_ = p.reg.sub.Unsubscribe()
		p.closed = true
		close(p.jobs)
		p.out.close()
	})
	<-p.done
}

// writer writes the snapshots Ticked hands it and sends each to the
// inboxes that asked, until Close.
func (p *Publisher) writer() {
	defer close(p.done)
	pause := func() {
		p.rounds.RUnlock()
		p.rounds.RLock()
	}
	for j := range p.jobs {
		p.rounds.RLock()
		chunks, err := j.l.ChunksPausing(ChunkSize, pause)
		p.rounds.RUnlock()
		if err == nil {
			p.send(chunks, j.inboxes)
		}
		p.busy.Store(false)
	}
}

// Rounds is the lock to hold while the world steps and Ticked encodes (a
// round of game.Clock, its Hold): the snapshot writer encodes only while
// it is free, pausing every slice of about a millisecond's work, so that
// a snapshot being written never takes a core from a round (which waits
// at most for one slice). The chunks go to NATS outside it: the round
// never waits on the connection.
func (p *Publisher) Rounds() sync.Locker { return &p.rounds }

// send publishes a snapshot's chunks, each behind the stream header, to
// each inbox.
func (p *Publisher) send(chunks [][]byte, inboxes []string) {
	p.snaps.Add(1)
	var msg []byte
	for _, c := range chunks {
		msg = append(appendStream(msg[:0], p.inst), c...)
		for _, inbox := range inboxes {
			_ = p.nc.Publish(inbox, msg) // the connection copies msg
		}
	}
}

// Ticked publishes what the Steps since the last call changed (encoded
// here, handed to the connection by the outbox's sender, in order; an
// error the connection gave a tick's publishing is returned by a later
// Ticked), then hands the snapshot requests waiting to the writer (one snapshot for all of
// them; while it writes one, new requests wait for the next). A world
// whose views carry pixels only when asked (game.Config.LazyPixels) is
// asked for them first, and the requests wait for the next view that
// carries them (the next tick's, or a later one while the world's buffer
// with pixels is held or is the newest). Call it on the goroutine that
// calls Step, after Step; after Close it does nothing.
func (p *Publisher) Ticked() error {
	if p.closed {
		return nil
	}
	b := p.out.take()
	var err error
	b.buf, err = p.enc.AppendDeltaSplit(appendStream(b.buf, p.inst), p.reg.split)
	if err != nil {
		p.out.put(b)
		return err
	}
	b.add(p.subj.tick, 0)
	p.sent.Add(1)
	p.bytes.Add(uint64(len(b.buf)))
	p.reg.ticked(b)
	p.out.post(b)
	if err := p.out.failed(); err != nil {
		return err
	}
	p.take()
	now := time.Now()
	if p.anyDue(now) && p.w.WantPixels() {
		return nil // the world's views carry pixels when asked: the next one does
	}
	inboxes := p.due(now)
	if len(inboxes) == 0 {
		return nil
	}
	if l := wire.SnapshotLater(p.w); l != nil {
		p.busy.Store(true)
		p.jobs <- snapJob{l, inboxes} // room: the writer is not busy
		return nil
	}
	// no view of this tick (every buffer held): write it here
	chunks, err := wire.Snapshot(p.w, ChunkSize)
	if err != nil {
		return err
	}
	p.send(chunks, inboxes)
	return nil
}

// take takes the snapshot requests that came since the last call into
// p.waiting: one a gateway name, its latest. On Ticked's goroutine.
func (p *Publisher) take() {
	for more := true; more; {
		select {
		case r := <-p.snapq:
			if _, ok := p.waiting[r.gw]; !ok && len(p.waiting) >= maxGateways {
				p.dropped.Add(1)
				continue
			}
			p.waiting[r.gw] = r.inbox
		default:
			more = false
		}
	}
}

// anyDue reports whether due(now) would return an inbox. On Ticked's
// goroutine.
func (p *Publisher) anyDue(now time.Time) bool {
	if len(p.waiting) == 0 || p.busy.Load() {
		return false
	}
	for gw := range p.waiting {
		if now.Sub(p.served[gw]) >= snapEvery {
			return true
		}
	}
	return false
}

// due returns the inboxes the next snapshot goes to, of the requests take
// took: only to a gateway that had none within snapEvery before now (the
// others wait); none while the writer is busy. On Ticked's goroutine.
func (p *Publisher) due(now time.Time) []string {
	if len(p.waiting) == 0 || p.busy.Load() {
		return nil
	}
	var inboxes []string
	for gw, inbox := range p.waiting {
		if now.Sub(p.served[gw]) < snapEvery {
			continue
		}
		inboxes = append(inboxes, inbox)
		delete(p.waiting, gw)
		p.served[gw] = now
	}
	for gw, at := range p.served {
		if now.Sub(at) >= snapEvery {
			delete(p.served, gw)
		}
	}
	return inboxes
}

// Follower is a gateway's side of the stream: it keeps a wire.Replica of
// the simulation's world and is what the gateway's sessions read. The
// connection queues each delta (onDelta); one goroutine of its own
// (syncLoop) takes snapshots and applies the deltas in order; Close stops
// it.
type Follower struct {
	nc        *nats.Conn
	subj      subjects
	maxPixels int           // the largest world it takes
	snapWait  time.Duration // how long a snapshot's chunks may take
	onTick    func()        // after each view published (wakes the sessions' writers)
	rep       atomic.Pointer[replica]
	empty     *game.View
	sub       *nats.Subscription
	wake      chan struct{} // a delta was queued (one slot)
	stop      chan struct{}
	done      chan struct{}
	mu        sync.Mutex     // guards pending and spare
	pending   []pendingDelta // the deltas received, in order, for syncLoop
	spare     [][]byte       // buffers of deltas applied, for the next ones (at most maxSpare)
	batch     []pendingDelta // the deltas syncLoop is applying (syncLoop's)

	applied, gaps, bad, snaps, foreign atomic.Uint64
	bytes                              atomic.Uint64 // stream bytes received: deltas and snapshot chunks
	last                               atomic.Int64  // when a delta was last applied (unix ns)
	newest                             atomic.Uint64 // the base tick of the last delta received
	tick                               atomic.Uint64 // the replica's tick, as syncLoop last left it
	applying                           atomic.Int64  // the deltas of syncLoop's batch not yet applied
}

// replica is the followed world: its replica and the simulation instance
// whose world it is.
type replica struct {
	*wire.Replica
	sim uint64
}

// newReplica pairs r with the simulation instance sim whose world it
// holds, and names that world in r's views. Call it before r's views are
// read.
func newReplica(r *wire.Replica, sim uint64) *replica {
	r.SetWorld(sim)
	return &replica{r, sim}
}

// pendingDelta is a delta received, for syncLoop.
type pendingDelta struct {
	sim uint64
	msg []byte
}

// A follower at least quietFrom ticks behind the stream applies a tick
// without a view (its sessions draw only the newest, which the next
// ticks supersede at once), but for every maxQuiet-th: however far
// behind, its sessions see the world move at least every 1.6 s of it. A
// follower that keeps up, or nearly, publishes every tick.
const (
	quietFrom = 3
	maxQuiet  = 16
)

// maxPending bounds the deltas queued for syncLoop: 25 s of ticks, for a
// snapshot on its way or a follower short of CPU. maxSpare bounds the
// buffers of applied deltas kept for the next (a follower that keeps up
// queues one or two at a time).
const maxPending, maxSpare = 256, 8

// FollowerStats are a follower's counters.
type FollowerStats struct {
	Applied   uint64 // deltas applied (on regions: ticks)
	Gaps      uint64 // deltas that did not follow (on regions: and region messages missed)
	Bad       uint64 // messages that did not decode
	Snapshots uint64 // whole snapshots the replica was built from
	Foreign   uint64 // ticks of another simulation instance
	Bytes     uint64 // stream bytes received: deltas, their regional form, snapshots
	Regions   uint64 // region snapshots taken in (a RegionFollower's)
	Queued    uint64 // messages received and not yet applied (deltas; on regions, messages of any kind): how far behind it is
}

// NewFollower follows the world streamed under prefix on nc, for gateway
// name (its snapshot requests go under its name), taking worlds of at most
// maxPixels pixels (0: game.MaxPixels); onTick (may be nil) runs after
// every view published, on the follower's own goroutine (syncLoop): of
// every snapshot taken and of every delta applied, but those a follower
// behind the stream applies without one (see quietFrom).
// Close stops it.
func NewFollower(nc *nats.Conn, prefix, name string, maxPixels int, onTick func()) (*Follower, error) {
	return newFollower(nc, prefix, name, maxPixels, onTick, snapshotWait)
}

// newFollower is NewFollower with the bound of a snapshot's wait.
func newFollower(nc *nats.Conn, prefix, name string, maxPixels int, onTick func(), wait time.Duration) (*Follower, error) {
	if maxPixels <= 0 || maxPixels > game.MaxPixels {
		maxPixels = game.MaxPixels
	}
	f := &Follower{nc: nc, subj: subjectsOf(prefix, name), maxPixels: maxPixels, onTick: onTick, empty: game.EmptyView(),
		snapWait: wait, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	sub, err := nc.Subscribe(f.subj.tick, f.onDelta)
	if err != nil {
		return nil, err
	}
	f.sub = sub
	go f.syncLoop()
	return f, nil
}

// FollowMode is which form of the world's stream a gateway follows.
type FollowMode int

// Follow modes.
const (
	FollowFull    FollowMode = iota // every tick's whole delta (Follower)
	FollowRegions                   // the global part and the regions its cameras need (RegionFollower)
)

// String is the mode's name, as flags and metrics say it.
func (m FollowMode) String() string {
	if m == FollowRegions {
		return "regions"
	}
	return "full"
}

// ParseFollowMode reads a mode's name.
func ParseFollowMode(s string) (FollowMode, error) {
	switch s {
	case "full":
		return FollowFull, nil
	case "regions":
		return FollowRegions, nil
	}
	return 0, fmt.Errorf("cluster: follow %q: want full or regions", s)
}

// Mode is FollowFull.
func (f *Follower) Mode() FollowMode { return FollowFull }

// Stats returns the counters.
func (f *Follower) Stats() FollowerStats {
	f.mu.Lock()
	queued := len(f.pending) + int(f.applying.Load())
	f.mu.Unlock()
	return FollowerStats{Applied: f.applied.Load(), Gaps: f.gaps.Load(), Bad: f.bad.Load(), Snapshots: f.snaps.Load(),
		Foreign: f.foreign.Load(), Bytes: f.bytes.Load(), Queued: uint64(queued)}
}

// Live reports whether a delta was applied within d: the simulation is
// there and the follower keeps up.
func (f *Follower) Live(d time.Duration) bool {
	return time.Since(time.Unix(0, f.last.Load())) <= d
}

// Behind is how many ticks the replica is behind the newest delta
// received: a follower short of CPU falls behind by the deltas queued.
func (f *Follower) Behind() int {
	n, t := f.newest.Load(), f.tick.Load()
	if f.rep.Load() == nil || n <= t {
		return 0
	}
	return int(min(n-t, math.MaxInt32))
}

// Synced reports whether the follower has a replica.
func (f *Follower) Synced() bool { return f.rep.Load() != nil }

// Instance is the simulation instance whose world the follower has; 0
// before the first snapshot.
func (f *Follower) Instance() uint64 {
	if r := f.rep.Load(); r != nil {
		return r.sim
	}
	return 0
}

// Acquire returns the replica's newest view, or an empty one (no world:
// the renderer draws nothing) before the first snapshot. Release it.
func (f *Follower) Acquire() *game.View {
	if r := f.rep.Load(); r != nil {
		return r.Acquire()
	}
	return f.empty
}

// Close stops following and waits for the snapshot loop.
func (f *Follower) Close() {
	_ = f.sub.Unsubscribe()
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
	<-f.done
}

// onDelta queues a delta for syncLoop, in the order they come; past
// maxPending waiting it drops the delta (the gap that leaves asks for a
// snapshot). It takes the lock only to append.
func (f *Follower) onDelta(m *nats.Msg) {
	f.bytes.Add(uint64(len(m.Data)))
	sim, msg, err := decodeStream(m.Data)
	if err != nil {
		f.bad.Add(1)
		return
	}
	if base, err := wire.DeltaBase(msg); err == nil {
		f.newest.Store(base) // the deltas come in order (a restarted simulation's from 1 again)
	}
	f.mu.Lock()
	if len(f.pending) < maxPending {
		var b []byte
		if n := len(f.spare); n > 0 {
			b, f.spare = f.spare[n-1][:0], f.spare[:n-1]
		}
		f.pending = append(f.pending, pendingDelta{sim, append(b, msg...)})
	}
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// syncLoop is the follower's one applier: it fetches a snapshot at the
// start and whenever the deltas stop following the replica (a gap,
// another instance), retrying every second until one arrives, and applies
// the deltas queued, in order, a batch at a time; a gateway short of CPU
// falls behind by the deltas queued, while the connection keeps
// delivering them.
func (f *Follower) syncLoop() {
	defer close(f.done)
	need := true // a snapshot
	for {
		if need {
			if err := f.fetch(); err != nil {
				select {
				case <-f.stop:
					return
				case <-time.After(time.Second):
				}
				continue
			}
			need = false
		}
		select {
		case <-f.stop:
			return
		case <-f.wake:
		}
		need = f.applyPending()
	}
}

// snapshotWait bounds the wait for a snapshot's chunks.
const snapshotWait = 5 * time.Second

// errSnapshot says a snapshot's chunks did not make one.
var errSnapshot = errors.New("cluster: bad snapshot")

// fetch asks for a snapshot and makes the replica built from it the
// followed one: sessions read the old replica until the new one is built,
// then the new one as the deltas queued since the request catch it up
// (applyPending).
func (f *Follower) fetch() error {
	f.mu.Lock()
	clear(f.pending) // from before the request: older than the snapshot
	f.pending = f.pending[:0]
	f.mu.Unlock()
	gr, sim, err := collectSnapshot(context.Background(), f.nc, f.subj.snapshot, f.maxPixels, f.snapWait, &f.bad, &f.bytes)
	if err != nil {
		return err
	}
	f.snaps.Add(1)
	f.tick.Store(gr.Tick())
	f.rep.Store(newReplica(gr, sim))
	f.last.Store(time.Now().UnixNano())
	if f.onTick != nil {
		f.onTick()
	}
	return nil
}

// recycle keeps up to maxSpare of the batch's buffers for the deltas to
// come and lets the others go.
func (f *Follower) recycle() {
	f.mu.Lock()
	for _, d := range f.batch {
		if len(f.spare) == maxSpare {
			break
		}
		f.spare = append(f.spare, d.msg)
	}
	f.mu.Unlock()
	clear(f.batch)
}

// applyPending applies the deltas queued, in order, publishing views of
// the last quietFrom and of every maxQuiet-th (the sessions draw the
// newest view), and reports whether
// the replica needs a snapshot: a delta of another simulation instance
// (the simulation restarted, or a second one publishes under this
// prefix; never applied to this replica), or one that does not follow
// the replica's tick (a delta lost). Deltas older than the replica (from
// before its snapshot) are passed over. It stops early at Close.
func (f *Follower) applyPending() (resync bool) {
	f.mu.Lock()
	f.batch, f.pending = f.pending, f.batch[:0]
	f.mu.Unlock()
	defer f.recycle()
	defer f.applying.Store(0)
	r := f.rep.Load()
	defer f.publish(r) // a view of the last delta applied, however the batch ends
	for k, d := range f.batch {
		f.applying.Store(int64(len(f.batch) - k))
		select {
		case <-f.stop:
			return false // Close waits for syncLoop
		default:
		}
		if d.sim != r.sim {
			f.foreign.Add(1)
			return true
		}
		var err error
		view := len(f.batch)-1-k < quietFrom || (k+1)%maxQuiet == 0
		if view {
			err = r.Apply(d.msg)
		} else {
			err = r.ApplyQuiet(d.msg) // the next deltas are here: their views supersede this one's
		}
		switch {
		case err == nil:
			f.applying.Store(int64(len(f.batch) - k - 1))
			f.applied.Add(1)
			f.tick.Store(r.Tick())
			f.last.Store(time.Now().UnixNano())
			if view && f.onTick != nil {
				f.onTick()
			}
		case errors.Is(err, wire.ErrGap):
			if base, err := wire.DeltaBase(d.msg); err == nil && base < r.Tick() {
				continue // from before the snapshot: the replica has it
			}
			f.gaps.Add(1)
			return true
		default:
			f.bad.Add(1)
		}
	}
	return false
}

// publish publishes the view of r's tick if the batch applied it quietly
// and ended before a delta applied with its view (a gap, another
// instance, Close), and tells onTick.
func (f *Follower) publish(r *replica) {
	if r.Publish() && f.onTick != nil {
		f.onTick()
	}
}

// collectSnapshot asks for a snapshot of the world on subject (a
// gateway's snapshot request) and builds a replica from it: it collects
// the chunks by their index, within maxChunks and SnapshotBytes(maxPixels),
// for at most wait or until ctx ends, and returns the replica and
// the simulation instance whose world it is. Chunks that do not make a
// snapshot count in bad; every chunk's bytes in bytes.
func collectSnapshot(ctx context.Context, nc *nats.Conn, subject string, maxPixels int, wait time.Duration, bad, bytes *atomic.Uint64) (*wire.Replica, uint64, error) {
	inbox := nc.NewRespInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return nil, 0, err
	}
	defer sub.Unsubscribe()
	if err := nc.PublishRequest(subject, inbox, nil); err != nil {
		return nil, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var parts [][]byte
	var sim, tick uint64
	got, size, most := 0, 0, SnapshotBytes(maxPixels)
	for {
		m, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			if got > 0 {
				bad.Add(1) // chunks that never made a snapshot
			}
			return nil, 0, err // no simulation, or it stopped mid-snapshot: try again
		}
		bytes.Add(uint64(len(m.Data)))
		s, c, err := decodeStream(m.Data)
		if err != nil {
			bad.Add(1)
			return nil, 0, err
		}
		t, i, n, err := wire.ChunkInfo(c)
		switch {
		case err != nil:
		case parts == nil && n > maxChunks:
			err = fmt.Errorf("%w: %d chunks, more than %d", errSnapshot, n, maxChunks)
		case parts == nil:
			parts, sim, tick = make([][]byte, n), s, t
		case s != sim || t != tick || n != len(parts):
			err = fmt.Errorf("%w: chunks of two snapshots", errSnapshot)
		case parts[i] != nil:
			err = fmt.Errorf("%w: chunk %d twice", errSnapshot, i)
		}
		if size += len(c); err == nil && size > most {
			err = fmt.Errorf("%w: more than %d bytes", errSnapshot, most)
		}
		if err != nil {
			bad.Add(1)
			return nil, 0, err
		}
		parts[i] = c
		if got++; got < len(parts) {
			continue
		}
		gr, err := wire.NewReplicaWithin(parts, maxPixels)
		if err != nil {
			bad.Add(1)
			return nil, 0, err
		}
		return gr, sim, nil
	}
}
