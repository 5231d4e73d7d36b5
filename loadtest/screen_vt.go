package loadtest

import "snaked/internal/vtmodel"

// vtScreen adapts the project's strict terminal model to Screen.
type vtScreen struct{ *vtmodel.Term }

// newScreen returns the terminal model a checked session feeds its bytes to.
func newScreen(cols, rows int) Screen { return vtScreen{vtmodel.New(cols, rows)} }

// Painted reports a visible glyph or a coloured background.
func (s vtScreen) Painted(x, y int) bool {
	c := s.Cell(x, y)
	return c.BG != vtmodel.Default || (c.Ch != ' ' && c.Ch != 0 && c.Ch != vtmodel.Unknown)
}

// Unknown reports a cell whose content a real terminal does not pin down.
func (s vtScreen) Unknown(x, y int) bool { return s.Cell(x, y).Ch == vtmodel.Unknown }

// Pixels decodes a half-block cell: a space shows its background twice,
// ▀ the foreground over the background, ▄ the reverse, █ the foreground.
func (s vtScreen) Pixels(x, y int) (top, bottom int, ok bool) {
	c := s.Cell(x, y)
	if c.Rev {
		return 0, 0, false
	}
	f, b := int(c.FG), int(c.BG)
	switch c.Ch {
	case ' ':
		return b, b, true
	case '\u2580':
		return f, b, true
	case '\u2584':
		return b, f, true
	case '\u2588':
		return f, f, true
	}
	return 0, 0, false
}
