package cluster

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
)

// outbox carries a Publisher's tick messages (the delta, its regional
// form, the region snapshots due) from Ticked to a goroutine of its own,
// which alone hands them to the connection, in order. A NATS client
// writes a message bigger than its buffer (32 KB) to the socket in the
// publishing goroutine, so a tick's 0.5-1 MB at 100,000 snakes waited for
// the server to read it: when the server was short of a core, a round of
// the simulation's clock took hundreds of milliseconds and ticks were
// dropped. The tick now hands its messages over and goes on; only when
// the sender is sendDepth ticks behind does Ticked wait for it.
type outbox struct {
	nc    *nats.Conn
	free  chan *batch // batches to fill (Ticked takes one a tick)
	ready chan *batch // batches to send, in order (the sender)
	done  chan struct{}

	mu  sync.Mutex
	err error // guarded by mu: the first publish error since Ticked last asked

	waits  atomic.Uint64 // times Ticked found no free batch and waited
	behind atomic.Int32  // batches handed over and not yet sent
	took   prometheus.Histogram
}

// sendDepth is how many ticks' messages may wait for the sender: 800 ms
// at ten ticks a second, longer than the publishing stalls seen in `make
// scale` (docs/SCALING.md).
const sendDepth = 8

// keepBatch bounds the bytes a batch keeps between ticks: a bigger one
// (a tick that served many region snapshots) is let go once sent.
const keepBatch = 4 << 20

// batch is one tick's messages, end to end in buf, in the order they go
// out.
type batch struct {
	buf  []byte
	msgs []outMsg
}

// outMsg is a message of a batch: buf[lo:hi] on subj.
type outMsg struct {
	subj   string
	lo, hi int
}

// add notes b.buf[lo:] as the next message, on subj.
func (b *batch) add(subj string, lo int) {
	b.msgs = append(b.msgs, outMsg{subj, lo, len(b.buf)})
}

func newOutbox(nc *nats.Conn) *outbox {
	o := &outbox{nc: nc, free: make(chan *batch, sendDepth), ready: make(chan *batch, sendDepth), done: make(chan struct{}),
		took: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "snaked_cluster_send_seconds",
			Help:    "Time to hand one tick's messages to the NATS connection, off the clock's goroutine.",
			Buckets: tickBuckets(),
		})}
	for range sendDepth {
		o.free <- &batch{}
	}
	go o.run()
	return o
}

// take returns an empty batch, waiting for the sender when every batch is
// handed over and not yet sent.
func (o *outbox) take() *batch {
	select {
	case b := <-o.free:
		return b
	default:
	}
	o.waits.Add(1)
	return <-o.free
}

// post hands b to the sender, after the batches posted before it.
func (o *outbox) post(b *batch) {
	o.behind.Add(1)
	o.ready <- b // room: there are sendDepth batches
}

// put gives back a batch taken and not posted.
func (o *outbox) put(b *batch) {
	b.buf, b.msgs = b.buf[:0], b.msgs[:0]
	o.free <- b
}

// failed returns the first publish error since the last call, if any.
func (o *outbox) failed() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	err := o.err
	o.err = nil
	return err
}

// run publishes the batches posted, in order, until close.
func (o *outbox) run() {
	defer close(o.done)
	for b := range o.ready {
		t0 := time.Now()
		for _, m := range b.msgs {
			if err := o.nc.Publish(m.subj, b.buf[m.lo:m.hi]); err != nil {
				o.mu.Lock()
				if o.err == nil {
					o.err = err
				}
				o.mu.Unlock()
			}
		}
		o.took.Observe(time.Since(t0).Seconds())
		o.behind.Add(-1)
		if cap(b.buf) > keepBatch {
			b.buf = nil
		}
		o.put(b)
	}
}

// close sends the batches posted and ends the sender. Call it once, from
// the goroutine that posts.
func (o *outbox) close() {
	close(o.ready)
	<-o.done
}
