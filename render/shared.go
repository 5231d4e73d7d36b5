package render

// This file lets one renderer's frames go to many terminals (the
// daemon's spectators who watch the same snake at the same size): a
// shared renderer starts and ends every frame in one known terminal
// state, and Snapshot brings any terminal to what it shows, so a terminal
// can join its frames at any one, or, having missed some, take them all
// one after another.

// SetShared makes r a shared renderer, or an ordinary one again: each of
// a shared renderer's frames ends with the default pen and the cursor on
// the terminal's first cell (a few bytes a frame), the state its next
// frame starts from and the state a Snapshot leaves. The next frame is a
// full repaint.
func (r *Renderer) SetShared(on bool) {
	r.shared = on
	r.full = true
}

// park leaves the pen at the default and the cursor on the terminal's
// first cell: where a shared renderer's frames start.
func (r *Renderer) park() {
	r.pen(def, def)
	if r.cx != -r.ox || r.cy != -r.oy {
		r.out = append(r.out, 0x1b, '[', 'H')
		r.cx, r.cy = -r.ox, -r.oy
	}
}

// Snapshot appends to dst the bytes that take a terminal of r's size,
// whatever it shows, to what r's last frame left on r's terminal: the
// alternate screen (entered first when enter is set), the scroll region
// and every cell, then, as after every frame of a shared renderer, the
// default pen and the cursor on the first cell. A terminal sent a
// Snapshot of a shared renderer shows what one sent all its frames does,
// and can take its next frames. It does not change r; like Frame, it is
// not safe to call concurrently with r's other methods.
func (r *Renderer) Snapshot(dst []byte, enter bool) []byte {
	// The encoder's full repaint, on a copy of r's state: its grid of
	// what the terminal shows as the frame wanted, a blank one as shown.
	c := *r
	c.next = append([]cell(nil), r.prev...)
	c.prev = make([]cell, len(r.prev))
	c.mask = make([]uint64, len(r.mask), cap(r.mask))
	c.entered = !enter
	c.out = append(dst, syncOn...)
	c.encode(true, 0, 0)
	c.park()
	return append(c.out, syncOff...)
}
