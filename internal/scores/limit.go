package scores

import (
	"net/netip"
	"sync"
	"time"
)

// Bounds of the claim limiter.
const (
	// maxSources is the most sources the limiter tracks at once; past it,
	// new sources share one bucket (see limiter).
	maxSources = 1 << 16
	// maxSource is the longest source Claim takes: an IPv6 /64 as text
	// is at most 43 bytes.
	maxSource = 64
	// limitWindow is the limiter's period: a source regains
	// ClaimsPerHour new claims over it.
	limitWindow = int64(time.Hour)
	// sweepEvery is how often, at most, a full map is swept for
	// refilled entries (always at most once per limitWindow otherwise).
	sweepEvery = int64(time.Minute)
	// siteSources is how many sources' claims an IPv6 /48 (one site, as
	// registries assign them) has in all: its /64s together get this many
	// times ClaimsPerHour, so one site cannot fill the map.
	siteSources = 4
)

// limiter bounds the new claims per source: a token bucket per source
// holding ClaimsPerHour claims, refilled at ClaimsPerHour per hour (one
// back every hour/ClaimsPerHour). A source that is an IPv6 /64 also
// spends from its /48's bucket, which holds siteSources times as many:
// a site's 65,536 /64s cannot take more than that together, nor fill the
// map. A bucket is kept as the time it will be full again, so a source
// whose bucket is full needs no entry: entries that refilled are dropped
// by a sweep, at most once an hour, or once a minute while the map holds
// maxSources entries. A new source arriving when the map is full even
// after a sweep shares one bucket, of the same size, with every other
// such source until entries refill: past maxSources, new claims from
// sources not seen within the hour are bounded together (refreshes of
// held names never pass here).
//
// Times come from the callers' now, never the clock. All methods are safe
// for concurrent use; a nil limiter allows everything.
type limiter struct {
	per int64 // nanoseconds a bucket takes to regain one claim

	mu    sync.Mutex       // guards the fields below
	full  map[string]int64 // per source (and per /48, as "site PREFIX"): when its bucket is full again (Unix ns)
	over  int64            // the shared bucket of sources past maxSources
	swept int64            // when the map was last swept (Unix ns)
}

// newLimiter returns a limiter of perHour new claims per source and hour,
// or nil (no limit) for perHour <= 0.
func newLimiter(perHour int) *limiter {
	if perHour <= 0 {
		return nil
	}
	return &limiter{per: max(limitWindow/int64(perHour), 1), full: make(map[string]int64)}
}

// site returns the key of the /48 bucket of source from, or "" when from
// is not an IPv6 address.
func site(from string) string {
	a, err := netip.ParseAddr(from)
	if err != nil || !a.Is6() || a.Is4In6() {
		return ""
	}
	p, err := a.Prefix(48)
	if err != nil {
		return ""
	}
	return "site " + p.String()
}

// take spends one of from's claims at now (and one of its /48's) and
// reports whether it had one. The source "" is unknown and never limited.
func (l *limiter) take(from string, now time.Time) bool {
	if l == nil || from == "" {
		return true
	}
	t := now.UnixNano()
	ws := site(from)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(t)
	var wnext int64
	if ws != "" { // the site's bucket first: a refused site spends nothing
		var ok bool
		if wnext, _, ok = l.spend(ws, l.per/siteSources, t); !ok {
			return false
		}
	}
	next, shared, ok := l.spend(from, l.per, t)
	if !ok {
		return false
	}
	if shared {
		l.over = next
	} else {
		l.full[from] = next
	}
	if ws != "" {
		if _, known := l.full[ws]; known || len(l.full) < maxSources {
			l.full[ws] = wnext
		}
	}
	return true
}

// spend returns when key's bucket is full again once a claim costing cost
// is spent from it at t, whether key is past maxSources (the shared
// bucket's), and whether the bucket has the claim. l.mu is held.
func (l *limiter) spend(key string, cost, t int64) (next int64, shared, ok bool) {
	at, known := l.full[key]
	shared = !known && len(l.full) >= maxSources
	if shared {
		at = l.over
	}
	next = max(at, t) + cost
	return next, shared, next-t <= limitWindow
}

// undo gives back a claim take spent for from (the claim failed). The
// shared bucket keeps what it spent.
func (l *limiter) undo(from string) {
	if l == nil || from == "" {
		return
	}
	ws := site(from)
	l.mu.Lock()
	defer l.mu.Unlock()
	if at, ok := l.full[from]; ok {
		l.full[from] = at - l.per
	}
	if at, ok := l.full[ws]; ws != "" && ok {
		l.full[ws] = at - l.per/siteSources
	}
}

// sweep drops the entries whose bucket is full again at t, when it is time
// to (see limiter); l.mu is held.
func (l *limiter) sweep(t int64) {
	if t < l.swept {
		l.swept = t // now went back: count from here
	}
	since := t - l.swept
	if since < limitWindow && (len(l.full) < maxSources || since < sweepEvery) {
		return
	}
	l.swept = t
	for from, at := range l.full {
		if at <= t {
			delete(l.full, from)
		}
	}
}

// sources is the number of sources the limiter tracks (for tests).
func (l *limiter) sources() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.full)
}
