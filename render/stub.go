package render

import (
	"strconv"

	"snaked/game"
)

// Renderer turns views into bytes for one terminal. Not safe for concurrent use.
type Renderer struct {
	prof       Profile
	cols, rows int
	buf        []byte
	first      bool
}

// New returns a renderer for a terminal of the given profile and size.
func New(p Profile, cols, rows int) *Renderer {
	return &Renderer{prof: p, cols: cols, rows: rows, first: true}
}

// Resize sets the terminal size; the next frame is a full repaint.
func (r *Renderer) Resize(cols, rows int) { r.cols, r.rows = cols, rows }

// Invalidate makes the next frame a full repaint (Ctrl-L).
func (r *Renderer) Invalidate() {}

// Frame renders v for the HUD h; the bytes are valid until the next call.
func (r *Renderer) Frame(v *game.View, h *HUD) []byte {
	b := r.buf[:0]
	if r.first {
		b = append(b, "\x1b[?1049h\x1b[?25l"...)
		r.first = false
	}
	b = append(b, "\x1b[H\x1b[2Jtick "...)
	b = strconv.AppendUint(b, v.Tick, 10)
	r.buf = b
	return b
}
