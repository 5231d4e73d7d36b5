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
	r.vt.shared = on
	r.full = true
}

// Snapshot appends to dst the bytes that take a terminal of r's size,
// whatever it shows, to what r's last frame left on r's terminal: the
// alternate screen (entered first when enter is set), the scroll region
// and every cell, then, as after every frame of a shared renderer, the
// default pen and the cursor on the first cell. A terminal sent a
// Snapshot of a shared renderer shows what one sent all its frames does,
// and can take its next frames. It does not change r; like Frame, it is
// not safe to call concurrently with r's other methods.
func (r *Renderer) Snapshot(dst []byte, enter bool) []byte { return r.vt.snapshot(dst, enter) }

// park leaves the pen at the default and the cursor on the terminal's
// first cell: where a shared renderer's frames start.
func (vt *encoder) park() {
	vt.pen(def, def)
	if vt.cx != -vt.ox || vt.cy != -vt.oy {
		vt.out = append(vt.out, 0x1b, '[', 'H')
		vt.cx, vt.cy = -vt.ox, -vt.oy
	}
}

// snapshot is Snapshot: the encoder's full repaint, on a copy of vt, from
// a blank grid (what a terminal shows as far as the copy knows) to the
// grid vt's terminal shows.
func (vt *encoder) snapshot(dst []byte, enter bool) []byte {
	c := *vt
	c.next = append([]cell(nil), vt.prev...)
	c.prev = make([]cell, len(vt.prev))
	c.mask = make([]uint64, vt.rows)
	c.entered = !enter
	c.out = append(dst, syncOn...)
	c.encode(true, 0, 0)
	c.park()
	return append(c.out, syncOff...)
}
