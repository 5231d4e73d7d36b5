package sshserver

import (
	"container/list"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"

	"snaked/render"
)

// ipKey maps an address to the unit per-IP limits count in: the IPv4
// address, or the /64 of an IPv6 address.
func ipKey(a net.Addr) netip.Addr {
	var ip netip.Addr
	switch t := a.(type) {
	case *net.TCPAddr:
		ip, _ = netip.AddrFromSlice(t.IP)
	default:
		ap, err := netip.ParseAddrPort(a.String())
		if err == nil {
			ip = ap.Addr()
		}
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, err := ip.Prefix(64)
		if err == nil {
			ip = p.Addr()
		}
	}
	return ip.WithZone("")
}

// unauthSet tracks connections that are not admitted yet: those in the SSH
// handshake and those queued for a handshake slot. At most perIP handshakes
// run at once per address key; further connections from that key wait in
// its FIFO queue (at most queue of them) and start as slots free up, so a
// crowd behind one NAT gets in at the pace the server can take. Beyond the
// queue a connection is refused. Globally at most max connections are
// tracked, running or queued: past that a new connection evicts the oldest,
// so a crowd of stalled handshakes cannot lock real players out.
type unauthSet struct {
	max, perIP, queue int

	mu    sync.Mutex                // guards order, byIP and every entry's el, running and the queues
	order *list.List                // of *unauthEntry, oldest first
	byIP  map[netip.Addr]*addrQueue // per address key with entries
}

// addrQueue is one address key's handshakes: running ones and the queue.
type addrQueue struct {
	running int
	waiting []*unauthEntry // FIFO
}

// unauthEntry is one tracked connection.
type unauthEntry struct {
	conn    net.Conn
	key     netip.Addr
	el      *list.Element // nil once done or evicted
	running bool          // it holds a handshake slot
	ready   chan struct{} // queued: closed when it gets a slot or is evicted; nil when it had one at once
}

func newUnauthSet(max, perIP, queue int) *unauthSet {
	return &unauthSet{max: max, perIP: perIP, queue: queue, order: list.New(), byIP: map[netip.Addr]*addrQueue{}}
}

// add registers c. It returns nil when c must be refused (its address's
// queue is full), and the evicted connection (to be closed by the caller)
// when the global cap pushed the oldest one out. When the returned entry's
// ready is not nil, the connection is queued: it may start its handshake
// once ready is closed (see wait).
func (u *unauthSet) add(c net.Conn, key netip.Addr) (e *unauthEntry, evicted net.Conn) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if q := u.byIP[key]; q != nil && q.running >= u.perIP && len(q.waiting) >= u.queue {
		return nil, nil
	}
	if u.order.Len() >= u.max {
		old := u.order.Front().Value.(*unauthEntry)
		u.remove(old)
		evicted = old.conn
	}
	q := u.byIP[key] // after the eviction, which may have dropped key's entry
	if q == nil {
		q = &addrQueue{}
		u.byIP[key] = q
	}
	e = &unauthEntry{conn: c, key: key}
	e.el = u.order.PushBack(e)
	if q.running < u.perIP {
		q.running++
		e.running = true
	} else {
		e.ready = make(chan struct{})
		q.waiting = append(q.waiting, e)
	}
	return e, evicted
}

// started reports whether e holds a handshake slot (false once it was
// evicted or is done). A queued entry calls it after ready closes.
func (u *unauthSet) started(e *unauthEntry) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return e.el != nil && e.running
}

// done removes e (handshake finished or failed, or it gave up waiting) and
// hands its slot to the next queued connection of its address. It reports
// false when e had already been removed (evicted).
func (u *unauthSet) done(e *unauthEntry) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if e.el == nil {
		return false
	}
	u.remove(e)
	return true
}

// remove takes e out of every list; a freed slot goes to the address's
// oldest queued entry, and an evicted queued entry is woken. Callers hold mu.
func (u *unauthSet) remove(e *unauthEntry) {
	u.order.Remove(e.el)
	e.el = nil
	q := u.byIP[e.key]
	if e.running {
		e.running = false
		q.running--
		if len(q.waiting) > 0 {
			next := q.waiting[0]
			q.waiting[0] = nil
			q.waiting = q.waiting[1:]
			next.running = true
			q.running++
			close(next.ready)
		}
	} else if i := slices.Index(q.waiting, e); i >= 0 {
		q.waiting = slices.Delete(q.waiting, i, i+1)
		close(e.ready)
	}
	u.tidy(e.key, q)
}

// tidy forgets an address key with nothing tracked. Callers hold mu.
func (u *unauthSet) tidy(key netip.Addr, q *addrQueue) {
	if q.running == 0 && len(q.waiting) == 0 {
		delete(u.byIP, key)
	}
}

// closeAll closes every tracked connection (shutdown).
func (u *unauthSet) closeAll() {
	u.mu.Lock()
	defer u.mu.Unlock()
	for el := u.order.Front(); el != nil; el = el.Next() {
		el.Value.(*unauthEntry).conn.Close()
	}
}

// len is the number of tracked connections, running and queued.
func (u *unauthSet) len() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.order.Len()
}

// queued is the number of connections waiting for a handshake slot.
func (u *unauthSet) queued() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for _, q := range u.byIP {
		n += len(q.waiting)
	}
	return n
}

// connSet counts established connections, globally and per address key.
type connSet struct {
	max, perIP int

	mu   sync.Mutex         // guards n and byIP
	n    int                // established connections
	byIP map[netip.Addr]int // established connections per address key
}

// admit reserves a slot for key; ok is false when it is refused, and why.
func (c *connSet) admit(key netip.Addr) (why refusal, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if why, ok = c.check(key); !ok {
		return why, false
	}
	if c.byIP == nil {
		c.byIP = map[netip.Addr]int{}
	}
	c.n++
	c.byIP[key]++
	return 0, true
}

// wouldAdmit reports what admit would say now, without reserving.
func (c *connSet) wouldAdmit(key netip.Addr) (why refusal, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.check(key)
}

// check is admit's test. Callers hold mu.
func (c *connSet) check(key netip.Addr) (refusal, bool) {
	if c.n >= c.max {
		return refuseFull, false
	}
	if c.byIP[key] >= c.perIP {
		return refusePerIP, false
	}
	return 0, true
}

// release frees a slot taken by admit.
func (c *connSet) release(key netip.Addr) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n--
	if c.byIP[key] <= 1 {
		delete(c.byIP, key)
	} else {
		c.byIP[key]--
	}
}

// cellBudget accounts the renderer cells sessions hold: each session at
// most per, all together at most total, except that a session always gets
// the floor (render.MinCols x render.MinRows) so the game still shows.
type cellBudget struct {
	per, total int64
	used       atomic.Int64 // cells held by all sessions
}

// cellFloor is the budget a session gets when the total is used up.
const cellFloor = render.MinCols * render.MinRows

// take re-sizes a session's holding for a cols x rows terminal: held is what
// it holds now. It returns the renderer budget to use and the cells that
// budget draws, which the session holds from now on.
func (b *cellBudget) take(held, cols, rows int) (budget, cells int) {
	for {
		used := b.used.Load()
		free := b.total - (used - int64(held))
		budget = int(b.per)
		if w, h := render.Fit(cols, rows, budget); int64(w*h) > free {
			budget = int(max(free, cellFloor))
		}
		w, h := render.Fit(cols, rows, budget)
		cells = w * h
		if b.used.CompareAndSwap(used, used-int64(held)+int64(cells)) {
			return budget, cells
		}
	}
}

// release gives back what a session held.
func (b *cellBudget) release(held int) { b.used.Add(-int64(held)) }
