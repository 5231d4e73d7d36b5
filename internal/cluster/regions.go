package cluster

import (
	"encoding/binary"
	"sync/atomic"

	"github.com/nats-io/nats.go"

	"snaked/internal/cluster/wire"
)

// The world's stream in regions: after each tick's delta the simulation
// publishes the same steps in their regional form (package wire): the
// global part on PREFIX.g and each region that changed on PREFIX.r.X.Y,
// all behind the stream header, in that order, from one connection, so a
// follower that reads them through one channel has them in order. A
// gateway's RegionFollower follows the global part and the regions its
// cameras need; a region it starts to need comes as a region snapshot (a
// request on PREFIX.gw.NAME.region, answered on the requester's inbox,
// right after the tick's messages, so that it is of the tick the
// follower has just had).

// Region sizes the simulation chooses from, smallest first: the smallest
// whose grid has at most maxRegionSubjects regions. Smaller regions carry
// less a follower does not show (docs/BENCHMARKS.md, "Regions"); more
// subjects than a NATS client's and server's caches of subjects hold (512
// and 1,024) cost the server a lookup each.
var regionSizes = [...][2]int{{128, 64}, {192, 96}, {256, 128}, {384, 192}, {512, 256}, {1024, 512}}

// maxRegionSubjects bounds the regions of the grid (see regionSizes).
const maxRegionSubjects = 512

// regionSize returns the region size for a w x h world.
func regionSize(w, h int) (rw, rh int) {
	for _, s := range regionSizes {
		if ((w+s[0]-1)/s[0])*((h+s[1]-1)/s[1]) <= maxRegionSubjects {
			return s[0], s[1]
		}
	}
	s := regionSizes[len(regionSizes)-1]
	return s[0], s[1]
}

// Regions is the number of regions a w x h world is published in.
func Regions(w, h int) int {
	rw, rh := regionSize(w, h)
	return ((w + rw - 1) / rw) * ((h + rh - 1) / rh)
}

// Region snapshot service bounds: the snapshots written a tick, and for
// one gateway name; the requests waiting, and for one gateway name.
const (
	regionSnapsPerTick = 64
	regionSnapsPerGW   = 32
	maxRegionQueue     = 8192
	maxRegionQueueGW   = 1024
)

// regionPub is the regional side of a Publisher: the split of its deltas,
// the regions' subjects, and the region snapshot service.
type regionPub struct {
	p        *Publisher
	split    *wire.Split
	subjects []string // by region
	sub      *nats.Subscription
	reqs     chan regionReq // from the subscription, for ticked

	// ticked's goroutine
	queue  []regionReq
	queued map[regionKey]int // the index in queue of a gateway's request for a region
	perGW  map[string]int    // requests queued by gateway name
	served map[string]int    // scratch: snapshots served this tick by gateway name

	sent, bytes, snaps, dropped atomic.Uint64
}

// regionReq is a gateway's request for a region's snapshot.
type regionReq struct {
	gw, inbox string
	region    int
}

type regionKey struct {
	gw     string
	region int
}

func newRegionPub(p *Publisher) (*regionPub, error) {
	w, h := p.w.Feed().Size()
	rw, rh := regionSize(w, h)
	split, err := wire.NewSplit(p.enc, rw, rh)
	if err != nil {
		return nil, err
	}
	g := split.Regions()
	rp := &regionPub{p: p, split: split, subjects: make([]string, g.Count()), reqs: make(chan regionReq, 1024),
		queued: map[regionKey]int{}, perGW: map[string]int{}, served: map[string]int{}}
	for r := range rp.subjects {
		rp.subjects[r] = p.subj.regionSubject(r%g.NX, r/g.NX)
	}
	subj := subjectsOf(p.subj.prefix, "*")
	rp.sub, err = p.nc.Subscribe(subj.region, func(m *nats.Msg) {
		region, n := binary.Uvarint(m.Data)
		if !subj.replyOK(m) || n <= 0 || n != len(m.Data) || region >= uint64(g.Count()) {
			rp.dropped.Add(1)
			return
		}
		gw, _ := subj.sender(m.Subject)
		select {
		case rp.reqs <- regionReq{gw, m.Reply, int(region)}:
		default:
			rp.dropped.Add(1) // too many at once: the follower asks again
		}
	})
	return rp, err
}

// ticked adds to b, after the delta Ticked just encoded, its regional
// form, then the region snapshots due. On Ticked's goroutine.
func (rp *regionPub) ticked(b *batch) {
	p, s := rp.p, rp.split
	if len(s.Global()) == 0 {
		return
	}
	lo := len(b.buf)
	b.buf = append(appendStream(b.buf, p.inst), s.Global()...)
	b.add(p.subj.global, lo)
	for _, r := range s.Changed() {
		at := len(b.buf)
		b.buf = append(appendStream(b.buf, p.inst), s.Region(int(r))...)
		b.add(rp.subjects[r], at)
	}
	rp.sent.Add(uint64(1 + len(s.Changed())))
	rp.bytes.Add(uint64(len(b.buf) - lo))
	rp.serve(b)
}

// serve takes the region snapshot requests that came since the last tick
// and writes the snapshots due: at most regionSnapsPerTick, and
// regionSnapsPerGW for one gateway name, oldest request first; the rest
// wait (at most maxRegionQueue, maxRegionQueueGW a gateway name; the
// latest request of a gateway for a region stands for its earlier ones).
// The snapshots go into b, after the tick's messages.
func (rp *regionPub) serve(b *batch) {
	for more := true; more; {
		select {
		case q := <-rp.reqs:
			k := regionKey{q.gw, q.region}
			if i, ok := rp.queued[k]; ok {
				rp.queue[i].inbox = q.inbox
				continue
			}
			if len(rp.queue) >= maxRegionQueue || rp.perGW[q.gw] >= maxRegionQueueGW {
				rp.dropped.Add(1)
				continue
			}
			rp.queued[k] = len(rp.queue)
			rp.perGW[q.gw]++
			rp.queue = append(rp.queue, q)
		default:
			more = false
		}
	}
	if len(rp.queue) == 0 {
		return
	}
	clear(rp.served)
	p, g := rp.p, rp.split.Regions()
	keep, total := rp.queue[:0], 0
	for _, q := range rp.queue {
		if total >= regionSnapsPerTick || rp.served[q.gw] >= regionSnapsPerGW {
			rp.queued[regionKey{q.gw, q.region}] = len(keep)
			keep = append(keep, q)
			continue
		}
		total++
		rp.served[q.gw]++
		delete(rp.queued, regionKey{q.gw, q.region})
		if rp.perGW[q.gw]--; rp.perGW[q.gw] == 0 {
			delete(rp.perGW, q.gw)
		}
		at := len(b.buf)
		b.buf = wire.AppendRegionSnapshot(appendStream(b.buf, p.inst), p.w, g, q.region)
		b.add(q.inbox, at)
		rp.snaps.Add(1)
	}
	clear(rp.queue[len(keep):])
	rp.queue = keep
}
