package cluster

import (
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"snaked/game"
	"snaked/internal/cluster/wire"
	"snaked/internal/testkit"
)

// gatedDialer dials connections whose writes (or, with reads, reads)
// wait while the gate is held: a NATS server that does not read what the
// client writes, or a client that does not read what the server sends.
type gatedDialer struct {
	reads bool
	mu    sync.Mutex
	open  chan struct{} // guarded by mu; closed while the gate lets through
}

func newGatedDialer(reads bool) *gatedDialer {
	d := &gatedDialer{reads: reads, open: make(chan struct{})}
	close(d.open)
	return d
}

func (d *gatedDialer) Dial(network, address string) (net.Conn, error) {
	c, err := net.Dial(network, address)
	if err != nil {
		return nil, err
	}
	return gatedConn{c, d}, nil
}

// hold makes writes wait until release.
func (d *gatedDialer) hold() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.open = make(chan struct{})
}

// release lets writes pass (again); a second release does nothing.
func (d *gatedDialer) release() {
	d.mu.Lock()
	defer d.mu.Unlock()
	select {
	case <-d.open:
	default:
		close(d.open)
	}
}

func (d *gatedDialer) gate() chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.open
}

type gatedConn struct {
	net.Conn
	d *gatedDialer
}

func (c gatedConn) Write(b []byte) (int, error) {
	if !c.d.reads {
		<-c.d.gate()
	}
	return c.Conn.Write(b)
}

func (c gatedConn) Read(b []byte) (int, error) {
	if c.d.reads {
		<-c.d.gate()
	}
	return c.Conn.Read(b)
}

// TestTickedWithAServerNotReading: while the NATS server reads nothing
// from the simulation's connection, Ticked still returns for sendDepth
// ticks (it encodes and hands the messages over; the sender waits), then
// waits for the sender; once the server reads again every tick's delta
// arrives, in order.
func TestTickedWithAServerNotReading(t *testing.T) {
	gc := game.DefaultConfig()
	gc.W, gc.H, gc.MaxSnakes, gc.Bots, gc.Seed = 256, 128, 64, 40, 5
	w, err := game.New(gc)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := Embed("127.0.0.1:0", Auth{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	d := newGatedDialer(false)
	// a write buffer this small writes every message in Publish, as a
	// 100,000-snake world's deltas are written with the default one
	snc, err := nats.Connect(ns.ClientURL(), nats.SetCustomDialer(d), nats.WriteBufferSize(64))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(snc.Close)
	rnc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rnc.Close)
	got, err := rnc.SubscribeSync("o.tick")
	if err != nil {
		t.Fatal(err)
	}
	if err := rnc.Flush(); err != nil {
		t.Fatal(err)
	}
	pub, err := NewPublisher(snc, w, "o", 9)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pub.Close)
	t.Cleanup(d.release) // first: the publisher's and the connection's close wait for their writes
	tick := uint64(0)
	step := func() {
		tick++
		w.Step(tick)
	}
	step()
	if err := pub.Ticked(); err != nil {
		t.Fatal(err)
	}
	if _, err := got.NextMsg(5 * time.Second); err != nil {
		t.Fatalf("the first delta, with the server reading: %v", err)
	}
	if !testkit.Eventually(5*time.Second, func() bool { return len(pub.out.free) == sendDepth }) {
		t.Fatal("the first tick's batch did not come back from the sender")
	}

	d.hold()
	ticked := make(chan error, 1)
	for k := range sendDepth {
		step()
		go func() { ticked <- pub.Ticked() }()
		select {
		case err := <-ticked:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Ticked %d of %d with the server not reading has not returned", k+1, sendDepth)
		}
	}
	if s := pub.Stats(); s.SendWaits != 0 || s.Deltas != 1+sendDepth {
		t.Fatalf("after %d ticks held: %+v, want no wait and %d deltas handed over", sendDepth, s, 1+sendDepth)
	}
	// one more: every batch is handed over and the sender is stuck
	step()
	go func() { ticked <- pub.Ticked() }()
	if !testkit.Eventually(10*time.Second, func() bool { return pub.Stats().SendWaits == 1 }) {
		t.Fatalf("Ticked %d did not wait for the sender: %+v", sendDepth+1, pub.Stats())
	}
	d.release()
	select {
	case err := <-ticked:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Ticked still waits with the server reading again")
	}
	pub.Close() // every batch handed over is handed to the connection
	if err := snc.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := rnc.Flush(); err != nil {
		t.Fatal(err)
	}
	for want := uint64(1); want <= sendDepth+1; want++ {
		m, err := got.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatalf("delta from tick %d: %v", want, err)
		}
		_, msg, err := decodeStream(m.Data)
		if err != nil {
			t.Fatal(err)
		}
		if base, err := wire.DeltaBase(msg); err != nil || base != want {
			t.Fatalf("delta from tick %d (%v), want from %d: in order", base, err, want)
		}
	}
}

// TestEmbedNeverHoldsUpThePublisher: with one subscriber reading nothing,
// the embedded server takes every message the publisher sends, far past
// the subscriber's pending limit, without holding the publisher up (no
// stall counted); the subscriber misses what it cannot hold instead.
func TestEmbedNeverHoldsUpThePublisher(t *testing.T) {
	ns, err := Embed("127.0.0.1:0", Auth{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	d := newGatedDialer(true)
	slow, err := nats.Connect(ns.ClientURL(), nats.SetCustomDialer(d))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(slow.Close)
	if _, err := slow.Subscribe("x", func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	if err := slow.Flush(); err != nil {
		t.Fatal(err)
	}
	pnc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pnc.Close)
	d.hold()
	t.Cleanup(d.release) // first
	// 96 MB: past the default pending limit (64 MB) of the subscriber
	msg := make([]byte, 1<<20)
	for range 96 {
		if err := pnc.Publish("x", msg); err != nil {
			t.Fatal(err)
		}
	}
	if err := pnc.FlushTimeout(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	v, err := ns.Varz(nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.StalledClients != 0 {
		t.Fatalf("the server held the publisher up %d times for a subscriber behind", v.StalledClients)
	}
	if v.OutMsgs >= 96 {
		t.Fatalf("the subscriber reading nothing was sent all %d messages: it should miss some", v.OutMsgs)
	}
}

// TestTickedReportsASendError: a publish the connection refuses (it is
// closed) comes back as the error of a later Ticked, which still returns:
// the clock logs it and goes on.
func TestTickedReportsASendError(t *testing.T) {
	l := newLink(t, time.Second, 8)
	nc := l.conn("t", "")
	pub, err := NewPublisher(nc, l.w, "t", l.sim.Instance())
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	l.step()
	if err := pub.Ticked(); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	var got error
	for range 50 {
		l.step()
		if got = pub.Ticked(); got != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !errors.Is(got, nats.ErrConnectionClosed) {
		t.Fatalf("Ticked after the connection closed: %v, want %v", got, nats.ErrConnectionClosed)
	}
	l.step()
	if err := pub.Ticked(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
		t.Fatalf("the next Ticked: %v", err)
	}
}
