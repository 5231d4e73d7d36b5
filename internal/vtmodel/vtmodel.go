// Package vtmodel is a small, strict model of the VT100/xterm subset that
// snaked's renderer emits. Tests replay a session's bytes through it and
// compare the screen with what was meant. Whatever a real terminal might do
// differently (background-colour erase, resize reflow, scrolled-in lines) is
// modelled as an Unknown cell, so output that relies on it fails the check.
package vtmodel

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Color is a palette index 0..255 or Default.
type Color int16

// Default is the terminal's default colour (foreground or background).
const Default Color = -1

// Unknown is the Ch of a cell whose content a real terminal does not pin down.
const Unknown rune = -1

// Cell is one character cell.
type Cell struct {
	Ch     rune
	FG, BG Color
	Rev    bool // drawn in reverse video (SGR 7)
}

var blank = Cell{Ch: ' ', FG: Default, BG: Default}
var unknown = Cell{Ch: Unknown, FG: Default, BG: Default}

// Term is the model of one terminal. It is not safe for concurrent use.
//
// Understood: printable UTF-8 (every rune one column wide, those of East
// Asian Width "ambiguous" included: block elements, box drawing, arrows;
// runes every terminal draws two columns wide or zero wide, which the
// model cannot place, are reported unsupported), pending wrap with
// autowrap, BS, CR, LF, ESC M
// (RI), ESC D (IND), CSI A B C D G H f (cursor), J K X (erase), P @ (DCH/ICH),
// S T (SU/SD), r (DECSTBM), m (SGR 0, 7, 27, 30-37, 39, 40-47, 49, 90-97,
// 100-107, 38;5;n, 48;5;n; reverse video is kept as a flag on the cell, and
// an erase under it is Unknown) and CSI ? 25, 1049, 2026 h/l. Anything else is recorded in
// Unsupported.
type Term struct {
	cols, rows int
	main, alt  []Cell
	alt1049    bool
	savedX     int
	savedY     int
	x, y       int
	wrap       bool // pending wrap: the last column was just written
	fg, bg     Color
	rev        bool // SGR 7 in effect
	top, bot   int  // scroll region, inclusive rows
	cursor     bool
	sync       bool

	// parser
	state  int
	params []int
	cur    int  // current parameter, -1 when empty
	priv   bool // '?' seen
	inter  bool // an intermediate or other odd byte seen
	seq    []byte
	utf    []byte
	unsupp []string
}

const (
	stGround = iota
	stEsc
	stCSI
)

// New returns a terminal of the given size showing the main screen, blank.
func New(cols, rows int) *Term {
	t := &Term{cursor: true, fg: Default, bg: Default}
	t.setSize(cols, rows)
	for i := range t.main {
		t.main[i] = blank
	}
	return t
}

func (t *Term) setSize(cols, rows int) {
	cols, rows = max(cols, 1), max(rows, 1)
	t.cols, t.rows = cols, rows
	t.main = make([]Cell, cols*rows)
	t.alt = make([]Cell, cols*rows)
	for i := range t.main {
		t.main[i] = unknown
		t.alt[i] = unknown
	}
	t.top, t.bot = 0, rows-1
	t.x, t.y = min(t.x, cols-1), min(t.y, rows-1)
	t.wrap = false
}

// Resize changes the size. What a terminal shows after a resize varies
// (reflow, cropping), so every cell becomes Unknown and the scroll region
// is reset.
func (t *Term) Resize(cols, rows int) { t.setSize(cols, rows) }

func (t *Term) screen() []Cell {
	if t.alt1049 {
		return t.alt
	}
	return t.main
}

// Cell returns the cell at column x, row y (0-based); outside the screen it
// returns an Unknown cell.
func (t *Term) Cell(x, y int) Cell {
	if x < 0 || y < 0 || x >= t.cols || y >= t.rows {
		return unknown
	}
	return t.screen()[y*t.cols+x]
}

// Line returns row y as text; Unknown cells read as '?'.
func (t *Term) Line(y int) string {
	if y < 0 || y >= t.rows {
		return ""
	}
	var b strings.Builder
	for _, c := range t.screen()[y*t.cols : (y+1)*t.cols] {
		if c.Ch == Unknown {
			b.WriteByte('?')
		} else {
			b.WriteRune(c.Ch)
		}
	}
	return b.String()
}

// Size returns the columns and rows.
func (t *Term) Size() (cols, rows int) { return t.cols, t.rows }

// Cursor returns the cursor position (0-based) and whether a wrap is pending.
func (t *Term) Cursor() (x, y int, pendingWrap bool) { return t.x, t.y, t.wrap }

// Pen returns the current SGR colours.
func (t *Term) Pen() (fg, bg Color) { return t.fg, t.bg }

// ScrollRegion returns the scroll region's first and last rows (0-based).
func (t *Term) ScrollRegion() (top, bot int) { return t.top, t.bot }

// AltScreen reports whether the alternate screen is shown.
func (t *Term) AltScreen() bool { return t.alt1049 }

// CursorVisible reports whether the cursor is shown.
func (t *Term) CursorVisible() bool { return t.cursor }

// Synchronized reports whether synchronized output (?2026) is on.
func (t *Term) Synchronized() bool { return t.sync }

// Unsupported lists the sequences and bytes it did not understand, in order.
func (t *Term) Unsupported() []string { return t.unsupp }

func (t *Term) bad(format string, a ...any) {
	if len(t.unsupp) < 1000 {
		t.unsupp = append(t.unsupp, fmt.Sprintf(format, a...))
	}
}

// Write parses p. Sequences may be split anywhere across writes.
func (t *Term) Write(p []byte) (int, error) {
	for _, b := range p {
		t.byte(b)
	}
	return len(p), nil
}

func (t *Term) byte(b byte) {
	if len(t.utf) > 0 {
		if b&0xc0 == 0x80 {
			t.utf = append(t.utf, b)
			if utf8.FullRune(t.utf) {
				r, _ := utf8.DecodeRune(t.utf)
				t.utf = t.utf[:0]
				if r == utf8.RuneError {
					t.bad("invalid UTF-8")
				}
				t.print(r)
			}
			return
		}
		t.bad("truncated UTF-8 %q", t.utf)
		t.utf = t.utf[:0]
	}
	switch t.state {
	case stEsc:
		t.esc(b)
		return
	case stCSI:
		t.csiByte(b)
		return
	}
	switch {
	case b == 0x1b:
		t.state = stEsc
	case b == '\r':
		t.x, t.wrap = 0, false
	case b == '\n':
		if t.wrap {
			t.bad("LF with pending wrap")
		}
		t.lf()
	case b == '\b':
		if t.wrap {
			t.bad("BS with pending wrap")
		}
		if t.x > 0 {
			t.x--
		}
		t.wrap = false
	case b < 0x20 || b == 0x7f:
		t.bad("control 0x%02x", b)
	case b < 0x80:
		t.print(rune(b))
	case b >= 0xc2 && b <= 0xf4:
		t.utf = append(t.utf, b)
	default:
		t.bad("invalid UTF-8 byte 0x%02x", b)
	}
}

func (t *Term) esc(b byte) {
	t.state = stGround
	switch b {
	case '[':
		t.state = stCSI
		t.params = t.params[:0]
		t.cur = -1
		t.priv, t.inter = false, false
		t.seq = append(t.seq[:0], "ESC ["...)
	case 'M':
		if t.wrap {
			t.bad("RI with pending wrap")
		}
		t.ri()
	case 'D':
		t.lf()
	default:
		t.bad("ESC %q", b)
	}
}

func (t *Term) csiByte(b byte) {
	if len(t.seq) < 64 {
		t.seq = append(t.seq, b)
	}
	switch {
	case b >= '0' && b <= '9':
		if t.cur < 0 {
			t.cur = 0
		}
		if t.cur < 100000 {
			t.cur = t.cur*10 + int(b-'0')
		}
	case b == ';':
		t.params = append(t.params, max(t.cur, 0))
		t.cur = -1
	case b == '?' && len(t.seq) == 6:
		t.priv = true
	case b >= 0x40 && b <= 0x7e:
		if t.cur >= 0 || len(t.params) > 0 {
			t.params = append(t.params, max(t.cur, 0))
		}
		t.state = stGround
		if t.inter {
			t.bad("%s", t.seq)
			return
		}
		t.csi(b)
	case b == 0x1b || b < 0x20:
		t.state = stGround
		t.bad("broken CSI %q", t.seq)
	default:
		t.inter = true
	}
}

// arg returns parameter i, with def for missing or 0.
func (t *Term) arg(i, def int) int {
	if i < len(t.params) && t.params[i] != 0 {
		return t.params[i]
	}
	return def
}

func (t *Term) csi(f byte) {
	if t.priv {
		t.mode(f)
		return
	}
	switch f {
	case 'A':
		lim := 0
		if t.y >= t.top {
			lim = t.top
		}
		t.y = max(t.y-t.arg(0, 1), lim)
	case 'B':
		lim := t.rows - 1
		if t.y <= t.bot {
			lim = t.bot
		}
		t.y = min(t.y+t.arg(0, 1), lim)
	case 'C':
		t.x = min(t.x+t.arg(0, 1), t.cols-1)
	case 'D':
		t.x = max(t.x-t.arg(0, 1), 0)
	case 'G':
		t.x = min(t.arg(0, 1), t.cols) - 1
	case 'H', 'f':
		t.y = min(t.arg(0, 1), t.rows) - 1
		t.x = min(t.arg(1, 1), t.cols) - 1
	case 'J':
		t.ed(t.arg(0, 0))
	case 'K':
		t.el(t.arg(0, 0))
	case 'X':
		n := min(t.arg(0, 1), t.cols-t.x)
		t.erase(t.y*t.cols+t.x, n)
	case 'P':
		t.dch(t.arg(0, 1))
	case '@':
		t.ich(t.arg(0, 1))
	case 'S':
		t.scrollUp(t.arg(0, 1))
	case 'T':
		t.scrollDown(t.arg(0, 1))
	case 'r':
		top, bot := t.arg(0, 1)-1, t.arg(1, t.rows)-1
		bot = min(bot, t.rows-1)
		if len(t.params) == 0 {
			top, bot = 0, t.rows-1
		} else if top >= bot {
			t.bad("DECSTBM %s", t.seq)
			return
		}
		t.top, t.bot = top, bot
		t.x, t.y = 0, 0
	case 'm':
		t.sgr()
	default:
		t.bad("%s", t.seq)
		return
	}
	t.wrap = false
}

func (t *Term) mode(f byte) {
	if f != 'h' && f != 'l' {
		t.bad("%s", t.seq)
		return
	}
	on := f == 'h'
	for _, p := range t.params {
		switch p {
		case 25:
			t.cursor = on
		case 2026:
			t.sync = on
		case 1049:
			if on == t.alt1049 {
				continue
			}
			if on {
				t.savedX, t.savedY = t.x, t.y
				for i := range t.alt {
					t.alt[i] = unknown
				}
			} else {
				t.x, t.y = t.savedX, t.savedY
			}
			t.alt1049 = on
			t.wrap = false
		default:
			t.bad("%s", t.seq)
		}
	}
}

func (t *Term) sgr() {
	ps := t.params
	if len(ps) == 0 {
		t.fg, t.bg, t.rev = Default, Default, false
		return
	}
	for i := 0; i < len(ps); i++ {
		p := ps[i]
		switch {
		case p == 0:
			t.fg, t.bg, t.rev = Default, Default, false
		case p == 7:
			t.rev = true
		case p == 27:
			t.rev = false
		case p >= 30 && p <= 37:
			t.fg = Color(p - 30)
		case p == 39:
			t.fg = Default
		case p >= 40 && p <= 47:
			t.bg = Color(p - 40)
		case p == 49:
			t.bg = Default
		case p >= 90 && p <= 97:
			t.fg = Color(p - 90 + 8)
		case p >= 100 && p <= 107:
			t.bg = Color(p - 100 + 8)
		case (p == 38 || p == 48) && i+2 < len(ps) && ps[i+1] == 5 && ps[i+2] < 256:
			if p == 38 {
				t.fg = Color(ps[i+2])
			} else {
				t.bg = Color(ps[i+2])
			}
			i += 2
		default:
			t.bad("SGR %d in %s", p, t.seq)
			return
		}
	}
}

// erase blanks n cells from index i: known blanks with the default
// background pen, Unknown otherwise (terminals differ on colour erase).
func (t *Term) erase(i, n int) {
	c := blank
	if t.bg != Default || t.rev {
		c = unknown
	}
	s := t.screen()
	for k := i; k < i+n && k < len(s); k++ {
		s[k] = c
	}
}

func (t *Term) ed(mode int) {
	i := t.y*t.cols + t.x
	switch mode {
	case 0:
		t.erase(i, len(t.screen())-i)
	case 1:
		t.erase(0, i+1)
	case 2:
		t.erase(0, len(t.screen()))
	default:
		t.bad("%s", t.seq)
	}
}

func (t *Term) el(mode int) {
	row := t.y * t.cols
	switch mode {
	case 0:
		t.erase(row+t.x, t.cols-t.x)
	case 1:
		t.erase(row, t.x+1)
	case 2:
		t.erase(row, t.cols)
	default:
		t.bad("%s", t.seq)
	}
}

func (t *Term) dch(n int) {
	row := t.screen()[t.y*t.cols : (t.y+1)*t.cols]
	n = min(n, t.cols-t.x)
	copy(row[t.x:], row[t.x+n:])
	for k := t.cols - n; k < t.cols; k++ {
		row[k] = unknown
	}
}

func (t *Term) ich(n int) {
	row := t.screen()[t.y*t.cols : (t.y+1)*t.cols]
	n = min(n, t.cols-t.x)
	copy(row[t.x+n:], row[t.x:])
	for k := t.x; k < t.x+n; k++ {
		row[k] = unknown
	}
}

// scrollUp moves the scroll region's rows up by n; rows scrolled in are Unknown.
func (t *Term) scrollUp(n int) {
	s := t.screen()
	h := t.bot - t.top + 1
	n = min(n, h)
	copy(s[t.top*t.cols:(t.bot+1)*t.cols], s[(t.top+n)*t.cols:(t.bot+1)*t.cols])
	for k := (t.bot + 1 - n) * t.cols; k < (t.bot+1)*t.cols; k++ {
		s[k] = unknown
	}
}

// scrollDown moves the scroll region's rows down by n; rows scrolled in are Unknown.
func (t *Term) scrollDown(n int) {
	s := t.screen()
	h := t.bot - t.top + 1
	n = min(n, h)
	copy(s[(t.top+n)*t.cols:(t.bot+1)*t.cols], s[t.top*t.cols:(t.bot+1-n)*t.cols])
	for k := t.top * t.cols; k < (t.top+n)*t.cols; k++ {
		s[k] = unknown
	}
}

func (t *Term) lf() {
	t.wrap = false
	switch {
	case t.y == t.bot:
		t.scrollUp(1)
	case t.y < t.rows-1:
		t.y++
	}
}

func (t *Term) ri() {
	t.wrap = false
	switch {
	case t.y == t.top:
		t.scrollDown(1)
	case t.y > 0:
		t.y--
	}
}

func (t *Term) print(r rune) {
	if w := Width(r); w != 1 {
		t.bad("rune %U is %d columns wide", r, w)
	}
	if t.wrap {
		t.x = 0
		t.lf()
	}
	t.screen()[t.y*t.cols+t.x] = Cell{Ch: r, FG: t.fg, BG: t.bg, Rev: t.rev}
	if t.x == t.cols-1 {
		t.wrap = true
	} else {
		t.x++
	}
}

// Width is how many columns a terminal gives rune r: 0 for combining and
// format characters, 2 for East Asian Wide and Fullwidth ones (CJK,
// fullwidth forms, emoji shown as emoji), else 1 (East Asian ambiguous
// included, as terminals draw them unless told otherwise).
func Width(r rune) int {
	if unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf) {
		return 0
	}
	for _, w := range wide {
		if r < w[0] {
			break
		}
		if r <= w[1] {
			return 2
		}
	}
	return 1
}

// wide lists, in order, the ranges of East Asian Width W and F (after
// Unicode's EastAsianWidth.txt): the blocks and the emoji a terminal
// draws two columns wide.
var wide = [][2]rune{
	{0x1100, 0x115f}, {0x231a, 0x231b}, {0x2329, 0x232a}, {0x23e9, 0x23ec}, {0x23f0, 0x23f0},
	{0x23f3, 0x23f3}, {0x25fd, 0x25fe}, {0x2614, 0x2615}, {0x2648, 0x2653}, {0x267f, 0x267f},
	{0x2693, 0x2693}, {0x26a1, 0x26a1}, {0x26aa, 0x26ab}, {0x26bd, 0x26be}, {0x26c4, 0x26c5},
	{0x26ce, 0x26ce}, {0x26d4, 0x26d4}, {0x26ea, 0x26ea}, {0x26f2, 0x26f3}, {0x26f5, 0x26f5},
	{0x26fa, 0x26fa}, {0x26fd, 0x26fd}, {0x2705, 0x2705}, {0x270a, 0x270b}, {0x2728, 0x2728},
	{0x274c, 0x274c}, {0x274e, 0x274e}, {0x2753, 0x2755}, {0x2757, 0x2757}, {0x2795, 0x2797},
	{0x27b0, 0x27b0}, {0x27bf, 0x27bf}, {0x2b1b, 0x2b1c}, {0x2b50, 0x2b50}, {0x2b55, 0x2b55},
	{0x2e80, 0x303e}, {0x3041, 0x33ff}, {0x3400, 0x4dbf}, {0x4e00, 0x9fff}, {0xa000, 0xa4cf},
	{0xa960, 0xa97f}, {0xac00, 0xd7a3}, {0xf900, 0xfaff}, {0xfe10, 0xfe19}, {0xfe30, 0xfe6f},
	{0xff00, 0xff60}, {0xffe0, 0xffe6}, {0x16fe0, 0x16fe4}, {0x17000, 0x18cd5}, {0x1b000, 0x1b2fb},
	{0x1f004, 0x1f004}, {0x1f0cf, 0x1f0cf}, {0x1f18e, 0x1f18e}, {0x1f191, 0x1f19a}, {0x1f200, 0x1f251},
	{0x1f300, 0x1f320}, {0x1f32d, 0x1f335}, {0x1f337, 0x1f37c}, {0x1f37e, 0x1f393}, {0x1f3a0, 0x1f3ca},
	{0x1f3cf, 0x1f3d3}, {0x1f3e0, 0x1f3f0}, {0x1f3f4, 0x1f3f4}, {0x1f3f8, 0x1f43e}, {0x1f440, 0x1f440},
	{0x1f442, 0x1f4fc}, {0x1f4ff, 0x1f53d}, {0x1f54b, 0x1f54e}, {0x1f550, 0x1f567}, {0x1f57a, 0x1f57a},
	{0x1f595, 0x1f596}, {0x1f5a4, 0x1f5a4}, {0x1f5fb, 0x1f64f}, {0x1f680, 0x1f6c5}, {0x1f6cc, 0x1f6cc},
	{0x1f6d0, 0x1f6d2}, {0x1f6d5, 0x1f6d7}, {0x1f6dc, 0x1f6df}, {0x1f6eb, 0x1f6ec}, {0x1f6f4, 0x1f6fc},
	{0x1f7e0, 0x1f7eb}, {0x1f7f0, 0x1f7f0}, {0x1f90c, 0x1f93a}, {0x1f93c, 0x1f945}, {0x1f947, 0x1f9ff},
	{0x1fa70, 0x1faff}, {0x20000, 0x2fffd}, {0x30000, 0x3fffd},
}
