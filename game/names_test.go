package game

import (
	"strings"
	"testing"
	"unsafe"
)

// TestNameByte: the nickname alphabet is [A-Za-z0-9_-] and nothing else.
func TestNameByte(t *testing.T) {
	for c := 0; c < 256; c++ {
		want := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
		if NameByte(byte(c)) != want {
			t.Errorf("NameByte(%#x) = %v, want %v", c, !want, want)
		}
	}
}

// hostileNames are names no join makes, each with what a terminal is
// shown of it (cut to MaxName bytes).
var hostileNames = []struct{ in, want string }{
	{"", ""},
	{"ann", "ann"},
	{"Bob_the-2nd", "Bob_the-2nd"},
	{"bot12", "bot12"},
	{"exactly16bytes__", "exactly16bytes__"},
	{"seventeen_bytes__", "seventeen_bytes_"},
	{"\x1b[2J", "??2J"},
	{"a\x1b]0;pwned\x07b", "a??0?pwned?b"},
	{"\u009b2J", "??2J"}, // CSI as U+009B: 0xc2 0x9b
	{"x\x7fy", "x?y"},
	{"two\nlines\r", "two?lines?"},
	{"\xff\xfe\xc0", "???"},
	{"Zoë", "Zo??"},
	{"a b.c~d", "a?b?c?d"},
	{"?", "?"},
	{strings.Repeat("\x1b", 200), strings.Repeat("?", MaxName)},
	{strings.Repeat("n", 200), strings.Repeat("n", MaxName)},
}

// TestAppendName: each byte outside the alphabet becomes '?', the name is
// cut to n bytes and appended after what b holds.
func TestAppendName(t *testing.T) {
	for _, c := range hostileNames {
		if got := string(AppendName([]byte("> "), c.in, MaxName)); got != "> "+c.want {
			t.Errorf("AppendName(%q) = %q, want %q", c.in, got, "> "+c.want)
		}
		if got := string(AppendName(nil, []byte(c.in), MaxName)); got != c.want {
			t.Errorf("AppendName([]byte(%q)) = %q, want %q", c.in, got, c.want)
		}
		if got, want := string(AppendName(nil, c.in, 3)), c.want[:min(3, len(c.want))]; got != want {
			t.Errorf("AppendName(%q, 3) = %q, want %q", c.in, got, want)
		}
	}
	if got := AppendName(nil, "ann", 0); len(got) != 0 {
		t.Errorf("AppendName(n 0) = %q", got)
	}
}

// TestCleanName: CleanName is AppendName to MaxName bytes, and a name
// already clean comes back as itself.
func TestCleanName(t *testing.T) {
	for _, c := range hostileNames {
		got := CleanName(c.in)
		if got != c.want {
			t.Errorf("CleanName(%q) = %q, want %q", c.in, got, c.want)
		}
		if clean := strings.IndexFunc(c.in, func(r rune) bool { return r >= 0x80 || !NameByte(byte(r)) }) < 0; clean && c.in != "" && unsafe.StringData(got) != unsafe.StringData(c.in) {
			t.Errorf("CleanName(%q) copied a clean name", c.in)
		}
		for i := 0; i < len(got); i++ {
			if !NameByte(got[i]) && got[i] != '?' {
				t.Errorf("CleanName(%q) = %q has byte %#x", c.in, got, got[i])
			}
		}
	}
}

// TestNameAllocs: AppendName into a buffer with room, and CleanName of a
// clean name (or of one only too long), allocate nothing.
func TestNameAllocs(t *testing.T) {
	buf := make([]byte, 0, 64)
	hostile, clean, long := "\x1b[2J\u009b\x7f\xff", "Bob_the-2nd", strings.Repeat("n", 200)
	bhostile := []byte(hostile)
	var sink string
	if n := testing.AllocsPerRun(100, func() {
		buf = AppendName(buf[:0], hostile, MaxName)
		buf = AppendName(buf, bhostile, MaxName)
		buf = AppendName(buf, long, MaxName)
		sink = CleanName(clean)
		sink = CleanName(long)
	}); n != 0 {
		t.Errorf("%v allocations a run, want 0", n)
	}
	_ = sink
}
