package vtmodel

import (
	"strings"
	"testing"
)

func term(cols, rows int, s string) *Term {
	t := New(cols, rows)
	t.Write([]byte(s))
	return t
}

func lines(t *Term) string {
	_, rows := t.Size()
	var b []string
	for y := 0; y < rows; y++ {
		b = append(b, t.Line(y))
	}
	return strings.Join(b, "|")
}

func TestScreenText(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
		x, y           int
		wrap           bool
	}{
		{"print", "ab", "ab  |    |    ", 2, 0, false},
		{"pending wrap", "abcd", "abcd|    |    ", 3, 0, true},
		{"autowrap", "abcde", "abcd|e   |    ", 1, 1, false},
		{"CR clears wrap", "abcd\rx", "xbcd|    |    ", 1, 0, false},
		{"LF keeps column", "ab\ncd", "ab  |  cd|    ", 3, 1, true},
		{"LF at bottom scrolls", "x\n\n\nab", "    |    |?ab?", 3, 2, false},
		{"BS", "abc\b\bx", "axc |    |    ", 2, 0, false},
		{"BS at 0", "\bx", "x   |    |    ", 1, 0, false},
		{"CUP", "\x1b[2;3Hx\x1b[Hy", "y   |  x |    ", 1, 0, false},
		{"CUP clamps", "\x1b[9;9Hx", "    |    |   x", 3, 2, true},
		{"CHA", "ab\x1b[Gx\x1b[4Gy", "xb y|    |    ", 3, 0, true},
		{"CUF CUB", "\x1b[Cx\x1b[3Dy\x1b[9Cz", "yx z|    |    ", 3, 0, true},
		{"CUD CUU", "\x1b[2Bx\x1b[Ay\x1b[9Az", "  z | y  |x   ", 3, 0, false},
		{"utf8", "\u2580\u2584\u2588", "▀▄█ |    |    ", 3, 0, false},
		{"RI at top scrolls", "ab\x1bMx", "??x?|ab  |    ", 3, 0, false},
		{"EL", "abcd\x1b[2G\x1b[K", "a   |    |    ", 1, 0, false},
		{"EL 1", "abcd\x1b[2G\x1b[1K", "  cd|    |    ", 1, 0, false},
		{"ECH", "abcd\x1b[2G\x1b[2X", "a  d|    |    ", 1, 0, false},
		{"ED", "abcd\x1b[2J", "    |    |    ", 3, 0, false},
		{"coloured erase is unknown", "abcd\x1b[41m\x1b[2G\x1b[2X", "a??d|    |    ", 1, 0, false},
		{"DCH", "abcd\x1b[2G\x1b[2P", "ad??|    |    ", 1, 0, false},
		{"ICH", "abcd\x1b[2G\x1b[@", "a?bc|    |    ", 1, 0, false},
		{"DECSTBM homes", "\x1b[2;3r\x1b[3;2Hx\x1b[r", "    |    | x  ", 0, 0, false},
		{"SU in region", "\x1b[2;3r\x1b[1;1Ha\x1b[2;1Hb\x1b[3;1Hc\x1b[S", "a   |c   |????", 1, 2, false},
		{"SD in region", "\x1b[2;3r\x1b[1;1Ha\x1b[2;1Hb\x1b[3;1Hc\x1b[T", "a   |????|b   ", 1, 2, false},
		{"LF at region bottom", "\x1b[1;2r\x1b[2;1Hb\x1b[3;1Hc\x1b[2;1H\nx", "b   |x???|c   ", 1, 1, false},
		{"LF below region", "\x1b[1;2r\x1b[3;1Hc\nx", "    |    |cx  ", 2, 2, false},
		{"CUD stops at margin", "\x1b[1;2r\x1b[5Bx", "    |x   |    ", 1, 1, false},
		{"CUU stops at margin", "\x1b[2;3r\x1b[3;1H\x1b[5Ax", "    |x   |    ", 1, 1, false},
		{"CUU from below region", "\x1b[1;2r\x1b[3;1H\x1b[Ax", "    |x   |    ", 1, 1, false},
	} {
		tm := term(4, 3, "\x1b[2J"+c.in)
		if got := lines(tm); got != c.want {
			t.Errorf("%s: screen %q, want %q", c.name, got, c.want)
		}
		if x, y, w := tm.Cursor(); x != c.x || y != c.y || w != c.wrap {
			t.Errorf("%s: cursor %d,%d wrap %v, want %d,%d %v", c.name, x, y, w, c.x, c.y, c.wrap)
		}
		if u := tm.Unsupported(); len(u) > 0 {
			t.Errorf("%s: unsupported %q", c.name, u)
		}
	}
}

func TestSGR(t *testing.T) {
	for _, c := range []struct {
		in     string
		fg, bg Color
	}{
		{"\x1b[31m", 1, Default},
		{"\x1b[31;42m", 1, 2},
		{"\x1b[91;102m", 9, 10},
		{"\x1b[31;42m\x1b[m", Default, Default},
		{"\x1b[31;42m\x1b[;33m", 3, Default},
		{"\x1b[31;42m\x1b[39m", Default, 2},
		{"\x1b[31;42m\x1b[49m", 1, Default},
		{"\x1b[38;5;200;48;5;17m", 200, 17},
		{"\x1b[97;40m", 15, 0},
	} {
		tm := term(4, 1, c.in+"x")
		if got := tm.Cell(0, 0); got != (Cell{'x', c.fg, c.bg, false}) {
			t.Errorf("%q: cell %+v, want fg %d bg %d", c.in, got, c.fg, c.bg)
		}
	}
	for _, c := range []struct {
		in  string
		rev bool
	}{{"\x1b[7mx", true}, {"\x1b[7;27mx", false}, {"\x1b[7m\x1b[mx", false}, {"\x1b[7;0mx", false}, {"\x1b[31;7mx", true}} {
		tm := term(4, 1, c.in)
		if got := tm.Cell(0, 0); got.Rev != c.rev || got.Ch != 'x' {
			t.Errorf("%q: cell %+v, want reverse %v", c.in, got, c.rev)
		}
	}
	if got := term(4, 1, "\x1b[7m\x1b[K").Cell(1, 0); got.Ch != Unknown {
		t.Errorf("erase in reverse video: %+v, want Unknown", got)
	}
	tm := term(4, 1, "\x1b[1m")
	if len(tm.Unsupported()) != 1 {
		t.Errorf("bold: unsupported %q, want one entry", tm.Unsupported())
	}
}

func TestModes(t *testing.T) {
	tm := term(4, 2, "ab\x1b[?1049h")
	if !tm.AltScreen() || tm.Line(0) != "????" {
		t.Fatalf("alt screen %v, line %q: want on and unknown", tm.AltScreen(), tm.Line(0))
	}
	tm.Write([]byte("\x1b[2J\x1b[Hxy\x1b[?25l\x1b[?2026h"))
	if tm.CursorVisible() || !tm.Synchronized() || tm.Line(0) != "xy  " {
		t.Fatalf("cursor %v sync %v line %q", tm.CursorVisible(), tm.Synchronized(), tm.Line(0))
	}
	tm.Write([]byte("\x1b[?2026l\x1b[?25h\x1b[?1049l"))
	if tm.AltScreen() || !tm.CursorVisible() || tm.Synchronized() || tm.Line(0) != "ab  " {
		t.Fatalf("after leaving: alt %v cursor %v sync %v line %q", tm.AltScreen(), tm.CursorVisible(), tm.Synchronized(), tm.Line(0))
	}
	if x, y, _ := tm.Cursor(); x != 2 || y != 0 {
		t.Errorf("cursor not restored: %d,%d", x, y)
	}
	if u := tm.Unsupported(); len(u) > 0 {
		t.Errorf("unsupported %q", u)
	}
	tm.Resize(3, 3)
	if c, r := tm.Size(); c != 3 || r != 3 || tm.Line(2) != "???" {
		t.Errorf("resize: %dx%d line %q", c, r, tm.Line(2))
	}
}

func TestUnsupported(t *testing.T) {
	for _, in := range []string{
		"\x07", "\x1b[5n", "\x1b[?1000h", "\x1b7", "\xff", "\xe2\x96x",
		"\x1b[3;3r\x1b[2;1r", "\t", "\x1b[1 q",
		"abcd\n", "abcd\b", "abcd\x1bM",
	} {
		tm := term(4, 3, in)
		if len(tm.Unsupported()) == 0 {
			t.Errorf("%q: not reported as unsupported", in)
		}
	}
}

// Splitting the bytes anywhere must not change the outcome.
func TestSplits(t *testing.T) {
	in := []byte("\x1b[2J\x1b[2;3r\x1b[31;102mab\u2580\u2584\x1b[3;2H\x1b[2X\x1b[?25lc\x1b[S\x1b[2@\x1b[m\u2588\x1b[1;4Hz\rq")
	whole := term(6, 4, string(in))
	bytewise := New(6, 4)
	for i := range in {
		bytewise.Write(in[i : i+1])
	}
	for n := 2; n < 9; n++ {
		chunked := New(6, 4)
		for b := in; len(b) > 0; {
			k := min(n, len(b))
			chunked.Write(b[:k])
			b = b[k:]
		}
		for _, tm := range []*Term{bytewise, chunked} {
			if lines(tm) != lines(whole) || len(tm.Unsupported()) != 0 {
				t.Fatalf("chunk %d: %q vs %q (%q)", n, lines(tm), lines(whole), tm.Unsupported())
			}
			for y := 0; y < 4; y++ {
				for x := 0; x < 6; x++ {
					if tm.Cell(x, y) != whole.Cell(x, y) {
						t.Fatalf("chunk %d: cell %d,%d %+v vs %+v", n, x, y, tm.Cell(x, y), whole.Cell(x, y))
					}
				}
			}
		}
	}
	if len(whole.Unsupported()) != 0 {
		t.Fatalf("unsupported %q", whole.Unsupported())
	}
}

// Arbitrary bytes never panic and never leave the cursor off the screen.
func FuzzWrite(f *testing.F) {
	f.Add([]byte("\x1b[2J\x1b[5;3r\x1b[99S\x1b[99@x"), 5, 4)
	f.Add([]byte("\x1b[?1049h\x1b[999;999H\u2580\n\x1bM"), 1, 1)
	f.Fuzz(func(t *testing.T, b []byte, cols, rows int) {
		tm := New(cols%300, rows%300)
		tm.Write(b)
		c, r := tm.Size()
		if x, y, _ := tm.Cursor(); x < 0 || y < 0 || x >= c || y >= r {
			t.Fatalf("cursor %d,%d outside %dx%d", x, y, c, r)
		}
	})
}

// TestWidth checks the runes the model takes (one column: ASCII, block
// elements, box drawing, arrows, the middle dot, all of East Asian Width
// "ambiguous" or narrower) and those it rejects (wide CJK, fullwidth forms,
// emoji; zero-width combining and format characters).
func TestWidth(t *testing.T) {
	for _, r := range "a~▀▄█─│┌┐└┘←↑→↓·…é" {
		if w := Width(r); w != 1 {
			t.Errorf("Width(%q) = %d, want 1", r, w)
		}
		tm := term(4, 1, string(r))
		if u := tm.Unsupported(); len(u) > 0 || tm.Line(0) != string(r)+"   " {
			t.Errorf("%q: screen %q, unsupported %q", r, tm.Line(0), u)
		}
	}
	for _, c := range []struct {
		r rune
		w int
	}{{'中', 2}, {'Ａ', 2}, {'한', 2}, {'🐍', 2}, {'⌚', 2}, {'\u0301', 0}, {'\u200d', 0}, {'\u200b', 0}} {
		if w := Width(c.r); w != c.w {
			t.Errorf("Width(%U) = %d, want %d", c.r, w, c.w)
		}
		if u := term(4, 1, "a"+string(c.r)).Unsupported(); len(u) != 1 {
			t.Errorf("%U: unsupported %q, want it reported", c.r, u)
		}
	}
}
