package loadtest

import (
	"sync"
	"time"
)

// Key-to-frame latency. A checked player's screen is a terminal model, so
// the swarm can see its own snake: the daemon draws the player's own head
// in bright white, the only such pixel on the playfield, and the neck is
// the one snake-coloured pixel beside it. The heading is head minus neck.
// When the script presses a turn at a right angle to the heading seen,
// the time from the key's write to the read that completes the first
// frame showing the new heading is one sample: the wait for the next tick
// (0-100 ms at 10 Hz), the tick, and everything between the server's world
// and this screen (a gateway's link included).

// Terminal colours the probe reads, as the daemon draws them in 16 colours.
const (
	ownHeadColour = 15 // bright white: the player's own head
	fruitColour   = 9  // bright red
	noPixel       = -2 // a text cell, or off the screen
)

// probeTimeout gives up on a turn not seen on screen (the snake died, the
// key was dropped, the frame was ambiguous every time).
const probeTimeout = time.Second

// headOf finds the player's own head on s and its heading. ok is false
// unless exactly one pixel is the own-head colour and exactly one of its
// four neighbours is snake-coloured.
func headOf(s Screen, cols, rows int) (d Dir, ok bool) {
	// pixel colour at pixel coordinates (x, y): y counts half rows
	px := func(x, y int) int {
		if x < 0 || x >= cols || y < 0 || y >= 2*rows {
			return noPixel
		}
		top, bottom, pix := s.Pixels(x, y/2)
		switch {
		case !pix:
			return noPixel
		case y%2 == 0:
			return top
		default:
			return bottom
		}
	}
	hx, hy, n := 0, 0, 0
	// the playfield's rows: not the banner (row 0) nor the status row (the last)
	for y := 2; y < 2*(rows-1); y++ {
		for x := range cols {
			if px(x, y) == ownHeadColour {
				hx, hy, n = x, y, n+1
			}
		}
	}
	if n != 1 {
		return NoDir, false
	}
	necks := 0
	for _, nb := range [...]struct {
		dx, dy int
		d      Dir
	}{{-1, 0, Right}, {1, 0, Left}, {0, -1, Down}, {0, 1, Up}} {
		switch c := px(hx+nb.dx, hy+nb.dy); c {
		case noPixel, -1, fruitColour, ownHeadColour:
		default:
			necks++
			d = nb.d
		}
	}
	if necks != 1 {
		return NoDir, false
	}
	return d, true
}

// probe is a checked player's turn in flight: pressed, not yet seen.
type probe struct {
	mu   sync.Mutex // guards all below
	seen Dir        // the heading the newest frame showed (NoDir: not known)
	want Dir        // the heading pressed; NoDir: no turn in flight
	at   time.Time  // when it was pressed
}

// press records a turn to d about to be sent, when it can be measured: at
// a right angle to the heading on screen, and no other turn in flight.
func (p *probe) press(d Dir, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.want != NoDir && now.Sub(p.at) < probeTimeout {
		return
	}
	p.want = NoDir
	if p.seen != NoDir && d != p.seen && d != p.seen.Reverse() {
		p.want, p.at = d, now
	}
}

// frame takes the heading a read left on screen (ok false: none seen) at
// now, and returns the latency of the turn in flight when this read shows
// it, and whether a turn timed out.
func (p *probe) frame(d Dir, ok bool, now time.Time) (lat time.Duration, hit, lost bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ok {
		p.seen = d
	}
	switch {
	case p.want == NoDir:
	case ok && d == p.want:
		lat, hit = now.Sub(p.at), true
		p.want = NoDir
	case now.Sub(p.at) >= probeTimeout:
		lost = true
		p.want = NoDir
	}
	return lat, hit, lost
}

// forget drops the turn in flight and the heading (a death, a respawn).
func (p *probe) forget() {
	p.mu.Lock()
	p.want, p.seen = NoDir, NoDir
	p.mu.Unlock()
}
