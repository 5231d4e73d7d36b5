package sshserver

import (
	"container/list"
	"net"
	"net/netip"
	"sync"
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

// unauthSet tracks connections that have not finished the SSH handshake. It
// holds at most max of them globally and perIP per address key. When the
// global cap is reached a new connection evicts the oldest one, so a crowd
// of stalled handshakes cannot lock real players out; beyond the per-IP cap
// new connections are refused.
type unauthSet struct {
	max, perIP int

	mu    sync.Mutex         // guards order and byIP
	order *list.List         // of *unauthEntry, oldest first
	byIP  map[netip.Addr]int // live entries per address key
}

type unauthEntry struct {
	conn net.Conn
	key  netip.Addr
	el   *list.Element
}

func newUnauthSet(max, perIP int) *unauthSet {
	return &unauthSet{max: max, perIP: perIP, order: list.New(), byIP: map[netip.Addr]int{}}
}

// add registers c. It returns nil when c must be refused (per-IP cap), and
// the evicted connection (to be closed by the caller) when the global cap
// pushed the oldest one out.
func (u *unauthSet) add(c net.Conn, key netip.Addr) (e *unauthEntry, evicted net.Conn) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.byIP[key] >= u.perIP {
		return nil, nil
	}
	if u.order.Len() >= u.max {
		old := u.order.Remove(u.order.Front()).(*unauthEntry)
		old.el = nil
		u.dec(old.key)
		evicted = old.conn
	}
	e = &unauthEntry{conn: c, key: key}
	e.el = u.order.PushBack(e)
	u.byIP[key]++
	return e, evicted
}

// done removes e (handshake finished or failed). It reports false when e had
// already been evicted.
func (u *unauthSet) done(e *unauthEntry) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if e.el == nil {
		return false
	}
	u.order.Remove(e.el)
	e.el = nil
	u.dec(e.key)
	return true
}

func (u *unauthSet) dec(k netip.Addr) {
	if u.byIP[k] <= 1 {
		delete(u.byIP, k)
	} else {
		u.byIP[k]--
	}
}

// closeAll closes every pending connection (shutdown).
func (u *unauthSet) closeAll() {
	u.mu.Lock()
	defer u.mu.Unlock()
	for el := u.order.Front(); el != nil; el = el.Next() {
		el.Value.(*unauthEntry).conn.Close()
	}
}

// len is the number of pending connections.
func (u *unauthSet) len() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.order.Len()
}

// connSet counts established connections, globally and per address key.
type connSet struct {
	max, perIP int

	mu   sync.Mutex         // guards n and byIP
	n    int                // established connections
	byIP map[netip.Addr]int // established connections per address key
}

// admit reserves a slot for key; reason is "" on success, else why not.
func (c *connSet) admit(key netip.Addr) (reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n >= c.max {
		return "server full"
	}
	if c.byIP[key] >= c.perIP {
		return "too many connections from this address"
	}
	if c.byIP == nil {
		c.byIP = map[netip.Addr]int{}
	}
	c.n++
	c.byIP[key]++
	return ""
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
