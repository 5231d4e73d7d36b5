package join

import (
	"strings"
	"testing"

	"snaked/internal/vtmodel"
)

func TestSanitize(t *testing.T) {
	cases := map[string]string{
		"alice":                               "alice",
		"Bob_the-Builder99":                   "Bob_the-Builder9",
		"\x1b[31mred\x1b[0m":                  "31mred0m",
		"é\u202etxt\x00":                      "txt",
		"   ":                                 "",
		"a.b@c":                               "abc",
		string(make([]byte, 100000)) + "late": "",
	}
	for in, want := range cases {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in[:min(len(in), 40)], got, want)
		}
	}
	for _, n := range []string{"root", "ROOT", "admin", "ubuntu", "user", "pi", ""} {
		if Usable(n) {
			t.Errorf("%q should not be usable", n)
		}
	}
	if !Usable("alice") {
		t.Error("alice should be usable")
	}
}

// show replays the screen's bytes on a terminal model and returns its rows.
func show(t *testing.T, vt *vtmodel.Term, s *Screen, cols, rows, shutdownIn int) []string {
	t.Helper()
	vt.Write(s.Draw(nil, cols, rows, shutdownIn))
	out := make([]string, rows)
	for y := range out {
		out[y] = strings.TrimRight(vt.Line(y), " ")
	}
	return out
}

func TestScreenEditing(t *testing.T) {
	s := NewScreen()
	vt := vtmodel.New(80, 24)
	got := show(t, vt, s, 80, 24, -1)
	if got[1] != "  snaked - multiplayer snake over SSH" || got[3] != "  Pick a nickname:" || got[6] != "  Esc or Ctrl-C leaves." {
		t.Fatalf("first screen:\n%s", strings.Join(got, "\n"))
	}
	if b := s.Draw(nil, 80, 24, -1); len(b) != 0 {
		t.Errorf("unchanged screen drew %d bytes", len(b))
	}
	for _, c := range []byte("bo!b") { // '!' is not a name byte
		s.Type(c)
	}
	s.Backspace()
	s.Type('b')
	if s.Name() != "bob" {
		t.Errorf("name %q, want bob", s.Name())
	}
	got = show(t, vt, s, 80, 24, -1)
	if got[3] != "  Pick a nickname: bob" {
		t.Errorf("input row %q", got[3])
	}
	if x, y, _ := vt.Cursor(); x != 2+len("Pick a nickname: bob") || y != 3 {
		t.Errorf("cursor at %d,%d", x, y)
	}
	s.Clear()
	for range 40 {
		s.Type('x')
	}
	if len(s.Name()) != MaxName {
		t.Errorf("name of %d bytes, want at most %d", len(s.Name()), MaxName)
	}
	s.Fail(`"bob" is taken: pick another`)
	got = show(t, vt, s, 80, 24, 3)
	if got[8] != `  "bob" is taken: pick another` || got[9] != "  SHUTTING DOWN IN 3" {
		t.Errorf("message rows:\n%s", strings.Join(got, "\n"))
	}
}

// TestScreenTiny: a terminal smaller than the screen's text gets lines cut
// at its edge, never past it, and the cursor inside it.
func TestScreenTiny(t *testing.T) {
	for _, sz := range [][2]int{{1, 1}, {3, 2}, {10, 5}, {20, 8}} {
		s := NewScreen()
		for _, c := range []byte("someone") {
			s.Type(c)
		}
		vt := vtmodel.New(sz[0], sz[1])
		got := show(t, vt, s, sz[0], sz[1], 9)
		for y, l := range got {
			if len(l) > sz[0] {
				t.Errorf("%dx%d: row %d is %q", sz[0], sz[1], y, l)
			}
		}
		if x, y, _ := vt.Cursor(); x < 0 || x >= sz[0] || y < 0 || y >= sz[1] {
			t.Errorf("%dx%d: cursor at %d,%d", sz[0], sz[1], x, y)
		}
	}
}
