package sshserver

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// This file draws the tick's frames: a few frame workers, owned by Serve,
// share each tick's list of playing and watching sessions and draw each
// in turn, so a tick wakes a few goroutines instead of every session's
// writer (waking thousands of goroutines a tick costs more than the
// frames they write).
//
// A worker renders up to batchMax sessions' frames, then writes them, in
// order: renders one after another find the world, the tables and the
// code in the caches, which a write (the kernel's TCP path) empties, and
// the writes one after another likewise. A session's frame waits at most
// batchMax renders for its write, well under a millisecond.
//
// A slow client still hurts only itself:
//   - A session is drawn by one goroutine at a time (session.fmu, held
//     from its render to its write): a worker that finds it busy (its own
//     writer drawing, or a write of it stalled) skips it and pokes its
//     writer, which draws the newest view once it can (latest wins).
//   - A worker stalled on one session (a write the client does not read,
//     a join a gateway waits for) is found by the pool's monitor within
//     stallAfter plus a period, taken out of the pool and replaced; the
//     replacement first writes the frames the stalled one rendered and
//     did not reach, so they wait for no one. The stalled worker ends
//     once its session lets it go. The others go on meanwhile.
//   - A session whose write once took stallAfter or more (session.solo)
//     is drawn by its own writer from then on, which the tick pokes: a
//     slow client costs the pool one stall at most.
//   - A tick that comes while the last one's list is not done (a busy
//     machine) starts a new list with the sessions not reached yet first.

// Frame pool bounds.
const (
	stallAfter   = 10 * time.Millisecond // a worker on one session this long is replaced
	monitorEvery = 5 * time.Millisecond  // how often the monitor looks while a list is being drawn
	yieldEvery   = 32                    // sessions a worker draws between yields
	batchMax     = 16                    // frames a worker renders before it writes them
)

// batch is one tick's list of sessions to draw.
type batch struct {
	list []*session
	next atomic.Int64 // index of the next session to claim
}

// worker is one frame worker.
type worker struct {
	since    atomic.Int64         // nanoseconds (pool.clock) when it took its session; 0 when idle
	detached atomic.Bool          // replaced by the monitor: ends after its session
	held     atomic.Pointer[held] // the frames it rendered and has not all written; nil between batches
}

// held is a worker's frames rendered and not yet written, in order. The
// worker publishes each session after its render (n); whoever writes one
// claims it first (next), the worker or, once the monitor replaced a
// stalled worker, its replacement, so each is written once.
type held struct {
	list [batchMax]*session
	n    atomic.Int32 // sessions in list
	next atomic.Int32 // sessions claimed for writing
}

// claim returns the next session to write, if any.
func (h *held) claim() (*session, bool) {
	for {
		i := h.next.Load()
		if i >= h.n.Load() {
			return nil, false
		}
		if h.next.CompareAndSwap(i, i+1) {
			return h.list[i], true
		}
	}
}

// waiting reports whether h has frames no one claimed yet.
func (h *held) waiting() bool { return h != nil && h.next.Load() < h.n.Load() }

// framePool is the server's frame workers and their shared list.
type framePool struct {
	n      int                   // workers kept ready
	render func(*session) bool   // renders a session's frame; true: send writes it (session.tickRender)
	send   func(*session)        // writes the frame render made (session.tickSend)
	start  time.Time             // pool.clock's origin
	cur    atomic.Pointer[batch] // the newest list
	kick   chan struct{}         // wakes idle workers; cap n
	watch  chan struct{}         // wakes the monitor; cap 1
	stop   chan struct{}         // closed by close
	wg     sync.WaitGroup        // workers, detached ones included, and the monitor
	live   atomic.Bool           // running: dispatch hands lists to the workers

	mu      sync.Mutex // guards workers, gen and stopped; serialises dispatch
	workers []*worker  // the workers in the pool (not detached)
	gen     uint64     // lists dispatched
	stopped bool
}

// newFramePool returns a pool of n workers that draw sessions with render
// and send; run starts it.
func newFramePool(n int, render func(*session) bool, send func(*session)) *framePool {
	p := &framePool{
		n:      max(n, 1),
		render: render,
		send:   send,
		start:  time.Now(),
		kick:   make(chan struct{}, max(n, 1)),
		watch:  make(chan struct{}, 1),
		stop:   make(chan struct{}),
	}
	p.cur.Store(&batch{})
	return p
}

// clock is the pool's monotonic time in nanoseconds (never 0).
func (p *framePool) clock() int64 { return int64(time.Since(p.start)) + 1 }

// run starts the workers and the monitor; close stops them.
func (p *framePool) run() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range p.n {
		p.spawn(nil)
	}
	p.wg.Go(p.monitor)
	p.live.Store(true)
}

// spawn starts a worker, which first writes the frames of h (those a
// stalled worker left); p.mu is held.
func (p *framePool) spawn(h *held) {
	w := &worker{}
	w.held.Store(h)
	p.workers = append(p.workers, w)
	p.wg.Go(func() {
		if h != nil {
			p.flush(w, h)
			w.held.Store(nil)
			if w.detached.Load() {
				return
			}
		}
		p.work(w)
	})
}

// close stops the workers and the monitor and waits for them, stalled
// ones included: their sessions' connections must be closing.
func (p *framePool) close() {
	p.mu.Lock()
	if !p.stopped {
		p.stopped = true
		p.live.Store(false)
		close(p.stop)
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// dispatch hands the tick's sessions to the workers; it reports false
// when the pool is not running (the caller pokes them instead). Sessions
// of the last list that no worker reached yet come first.
func (p *framePool) dispatch(sessions []*session) bool {
	if !p.live.Load() {
		return false
	}
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return false
	}
	p.gen++
	old := p.cur.Load()
	k := min(int(old.next.Load()), len(old.list))
	list := make([]*session, 0, len(sessions))
	for _, s := range old.list[k:] {
		if s.queued != p.gen {
			s.queued = p.gen
			list = append(list, s)
		}
	}
	for _, s := range sessions {
		if s.queued != p.gen {
			s.queued = p.gen
			list = append(list, s)
		}
	}
	p.cur.Store(&batch{list: list})
	p.mu.Unlock()
	for range p.n {
		select {
		case p.kick <- struct{}{}:
		default:
		}
	}
	select {
	case p.watch <- struct{}{}:
	default:
	}
	return true
}

// work is a worker's loop: on each kick it draws sessions of the current
// list, a batch at a time, until none is left.
func (p *framePool) work(w *worker) {
	n := 0
	h := &held{}
	for {
		select {
		case <-p.stop:
			return
		case <-p.kick:
		}
		for more := true; more; {
			// Only a replacement (which the monitor starts when it
			// detaches this worker, and which then ends) reads h besides
			// this worker: while this worker is not detached, h is its
			// own again once flushed.
			h.n.Store(0)
			h.next.Store(0)
			w.held.Store(h)
			for k := int32(0); k < batchMax; {
				b := p.cur.Load()
				i := int(b.next.Add(1) - 1)
				if i >= len(b.list) {
					more = false
					break
				}
				s := b.list[i]
				w.since.Store(p.clock())
				if p.render(s) {
					h.list[k] = s
					k++
					h.n.Store(k)
				}
				w.since.Store(0)
				n++
				if w.detached.Load() {
					break
				}
			}
			p.flush(w, h)
			w.held.Store(nil)
			if w.detached.Load() {
				return
			}
			if n >= yieldEvery {
				// Let the readers and x/crypto's goroutines run: cheaper
				// than the runtime's preemption of a goroutine that runs
				// 10 ms without a pause (a signal each).
				n = 0
				runtime.Gosched()
			}
		}
	}
}

// flush writes the frames of h no one claimed yet.
func (p *framePool) flush(w *worker, h *held) {
	for {
		s, ok := h.claim()
		if !ok {
			return
		}
		w.since.Store(p.clock())
		p.send(s)
		w.since.Store(0)
	}
}

// busy reports whether the current list has sessions no worker took yet,
// or a worker of the pool is drawing one.
func (p *framePool) busy() bool {
	if b := p.cur.Load(); int(b.next.Load()) < len(b.list) {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range p.workers {
		if w.since.Load() != 0 || w.held.Load().waiting() {
			return true
		}
	}
	return false
}

// monitor replaces workers stalled on one session, looking every
// monitorEvery while a list is being drawn.
func (p *framePool) monitor() {
	t := time.NewTimer(monitorEvery)
	t.Stop()
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-p.watch:
		}
		for {
			t.Reset(monitorEvery)
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
			p.replaceStalled()
			if !p.busy() {
				break
			}
		}
	}
}

// replaceStalled takes the workers on one session for stallAfter or more
// out of the pool and starts one in each one's place, which writes the
// frames the stalled one rendered and did not reach.
func (p *framePool) replaceStalled() {
	now := p.clock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	for i := 0; i < len(p.workers); {
		w := p.workers[i]
		if s := w.since.Load(); s != 0 && now-s >= int64(stallAfter) {
			w.detached.Store(true)
			p.workers = append(p.workers[:i], p.workers[i+1:]...)
			p.spawn(w.held.Load())
			// The new worker may have missed this list's kick.
			select {
			case p.kick <- struct{}{}:
			default:
			}
			continue
		}
		i++
	}
}
