package join

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"snaked/internal/vtmodel"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

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

// show replays the screen's bytes on a terminal model and returns its text.
func show(t *testing.T, vt *vtmodel.Term, s *Screen, shutdownIn int, ascii bool) string {
	t.Helper()
	cols, rows := vt.Size()
	vt.Write(s.Draw(nil, cols, rows, shutdownIn, ascii))
	if u := vt.Unsupported(); len(u) > 0 {
		t.Fatalf("the terminal model rejected the output: %q", u)
	}
	var b strings.Builder
	for y := range rows {
		b.WriteString(strings.TrimRight(vt.Line(y), " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// golden compares got with testdata/<name>.golden (-update rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/join -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s: screen differs from %s (-update rewrites it)\ngot:\n%s\nwant:\n%s", name, path, got, want)
	}
}

// TestScreens draws the join screen at several sizes, in Unicode and in
// ASCII, after typing, a failed try and with the shutdown countdown.
func TestScreens(t *testing.T) {
	for _, c := range []struct {
		name       string
		cols, rows int
		ascii      bool
	}{
		{"utf8-80x24", 80, 24, false},
		{"ascii-80x24", 80, 24, true},
		{"utf8-42x12", 42, 12, false}, // the box just fits
		{"utf8-41x12", 41, 12, false}, // one column short: unboxed
		{"ascii-20x5", 20, 5, true},
		{"1x1", 1, 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := NewScreen()
			for _, b := range []byte("bob") {
				s.Type(b)
			}
			s.Fail(`"bob" is taken: pick another`)
			vt := vtmodel.New(c.cols, c.rows)
			got := show(t, vt, s, 7, c.ascii)
			golden(t, "Screen-"+c.name, got)
			x, y, _ := vt.Cursor()
			if x < 0 || x >= c.cols || y < 0 || y >= c.rows {
				t.Errorf("cursor at %d,%d outside %dx%d", x, y, c.cols, c.rows)
			}
			if c.cols >= 42 {
				if col := inputEnd(got, y); col != x {
					t.Errorf("cursor at column %d, the input ends at %d", x, col)
				}
			}
			if c.ascii {
				for _, r := range got {
					if r > 0x7e {
						t.Fatalf("non-ASCII %q on the ASCII screen", r)
					}
				}
			}
		})
	}
}

func TestScreenEditing(t *testing.T) {
	s := NewScreen()
	vt := vtmodel.New(80, 24)
	show(t, vt, s, -1, false)
	if b := s.Draw(nil, 80, 24, -1, false); len(b) != 0 {
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
	got := show(t, vt, s, -1, false)
	if !strings.Contains(got, prompt+"bob") {
		t.Errorf("input not shown:\n%s", got)
	}
	// The cursor sits right after the input.
	x, y, _ := vt.Cursor()
	if col := inputEnd(got, y); col != x {
		t.Errorf("cursor at column %d, the input ends at %d", x, col)
	}
	s.Clear()
	for range 40 {
		s.Type('x')
	}
	if len(s.Name()) != MaxName {
		t.Errorf("name of %d bytes, want at most %d", len(s.Name()), MaxName)
	}
}

// inputEnd is the column just after "Pick a nickname: <input>" on row y of
// the screen text, or -1.
func inputEnd(screen string, y int) int {
	row := []rune(strings.Split(screen, "\n")[y])
	p := []rune(prompt)
	for i := 0; i+len(p) <= len(row); i++ {
		if string(row[i:i+len(p)]) == prompt {
			j := i + len(p)
			for j < len(row) && NameByte(byte(row[j])) && row[j] < 0x80 {
				j++
			}
			return j
		}
	}
	return -1
}
