package loadtest

import (
	"bytes"
	"fmt"
	"strings"
)

// Screen is the terminal model a checked session feeds its bytes to. The
// project's internal/vtmodel satisfies it through a small adapter.
type Screen interface {
	Write(p []byte) (int, error)
	Line(y int) string     // row text
	Painted(x, y int) bool // the cell shows a glyph or a non-default background
	Unknown(x, y int) bool // a real terminal may show anything there
	AltScreen() bool       // the alternate screen is active
	Unsupported() []string // sequences or bytes the model did not understand
	// Pixels returns the colours (0-15, -1 the default) of the two pixels
	// a half-block cell shows; ok is false for a text or unknown cell.
	Pixels(x, y int) (top, bottom int, ok bool)
}

// CheckScreen inspects a screen that should show a running game and returns
// what is wrong with it (nil when sane): unsupported sequences, no banner
// containing banner (case-insensitive) in the top two rows (banner ""
// skips this), not on the alternate screen, cells whose content depends on
// the terminal (for example exposed by a scroll and never painted), or
// nothing painted in the playfield rows.
func CheckScreen(s Screen, cols, rows int, banner string) []string {
	var bad []string
	if u := s.Unsupported(); len(u) > 0 {
		bad = append(bad, fmt.Sprintf("unsupported sequences: %q", u[:min(len(u), 3)]))
	}
	if !s.AltScreen() {
		bad = append(bad, "not on the alternate screen")
	}
	if banner != "" {
		found := false
		for y := 0; y < min(2, rows); y++ {
			if strings.Contains(strings.ToLower(s.Line(y)), strings.ToLower(banner)) {
				found = true
				break
			}
		}
		if !found {
			bad = append(bad, fmt.Sprintf("no banner %q in the top rows (row 0: %q)", banner, strings.TrimSpace(s.Line(0))))
		}
	}
	painted, unknown := 0, 0
	for y := 0; y < rows; y++ {
		for x := 0; x < cols; x++ {
			if s.Unknown(x, y) {
				unknown++
			} else if y >= 2 && y < rows-2 && s.Painted(x, y) {
				painted++
			}
		}
	}
	if unknown > 0 {
		bad = append(bad, fmt.Sprintf("%d cells undefined (never painted after erase/scroll)", unknown))
	}
	if painted == 0 {
		bad = append(bad, "playfield rows are blank")
	}
	return bad
}

// marker finds a byte string in a stream that arrives in pieces: a match
// split across two writes is found too. Not safe for concurrent use.
type marker struct {
	pat  []byte
	tail []byte // the last len(pat)-1 bytes seen
	buf  []byte // scratch for the seam
}

func newMarker(pat string) *marker {
	return &marker{pat: []byte(pat)}
}

// Scan reports whether the pattern occurs in the stream and ends inside p.
func (m *marker) Scan(p []byte) bool {
	if len(m.pat) == 0 {
		return false
	}
	found := bytes.Contains(p, m.pat)
	if !found && len(m.tail) > 0 {
		// The seam: tail + the first len(pat)-1 bytes of p.
		m.buf = append(append(m.buf[:0], m.tail...), p[:min(len(p), len(m.pat)-1)]...)
		found = bytes.Contains(m.buf, m.pat)
	}
	k := len(m.pat) - 1
	if len(p) >= k {
		m.tail = append(m.tail[:0], p[len(p)-k:]...)
	} else {
		m.tail = append(m.tail, p...)
		if len(m.tail) > k {
			m.tail = append(m.tail[:0], m.tail[len(m.tail)-k:]...)
		}
	}
	return found
}

// stripText returns the printable text in p with escape sequences (CSI,
// OSC, two-byte ESC) and control bytes removed, ASCII lower-cased. It is
// used on the first screens only, to recognise a join prompt.
func stripText(p []byte) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == 0x1b && i+1 < len(p) && p[i+1] == '[':
			i += 2
			for i < len(p) && (p[i] < 0x40 || p[i] > 0x7e) {
				i++
			}
		case c == 0x1b && i+1 < len(p) && p[i+1] == ']':
			i += 2
			for i < len(p) && p[i] != 0x07 && !(p[i] == 0x1b && i+1 < len(p) && p[i+1] == '\\') {
				i++
			}
			if i < len(p) && p[i] == 0x1b {
				i++
			}
		case c == 0x1b:
			i++
		case c == '\r' || c == '\n':
			b.WriteByte(' ')
		case c < 0x20 || c == 0x7f:
		case 'A' <= c && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// joinPrompt reports whether text (from stripText) looks like a screen
// asking for a nickname.
func joinPrompt(text string) bool {
	for _, m := range []string{"nickname", "your name", "a name", "name:", "name?", "name >", "name>"} {
		if strings.Contains(text, m) {
			return true
		}
	}
	return false
}

// joinEcho reports whether a join prompt in text (from stripText) only
// echoes name, or part of it, as typed so far: the word after the last
// "name" on screen is a non-empty prefix of name.
func joinEcho(text, name string) bool {
	i := strings.LastIndex(text, "name")
	if i < 0 {
		return false
	}
	f := strings.Fields(strings.TrimLeft(text[i+len("name"):], ":?> "))
	return len(f) > 0 && strings.HasPrefix(strings.ToLower(name), f[0])
}
