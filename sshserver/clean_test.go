package sshserver

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"snaked/game"
	"snaked/internal/scores"
)

// hostileEntries are leaderboard entries whose names no join makes (from
// a database written by something else, or a peer), with the names a
// terminal is to be shown.
func hostileEntries() (top []scores.Entry, clean []string) {
	names := []struct{ hostile, clean string }{
		{"\x1b[2J\x1b[H", "??2J??H"},
		{"\u009b2J", "??2J"}, // CSI as U+009B
		{"x\x7fy", "x?y"},
		{"two\nlines\r", "two?lines?"},
		{strings.Repeat("\x1b", 100) + strings.Repeat("n", 100), strings.Repeat("?", game.MaxName)},
		{"\xff\xfe\xc0", "???"},
		{"\u0085nel", "??nel"}, // NEL, a C1 control json.Marshal passes
		{"Zoë", "Zo??"},
		{"ann", "ann"},
	}
	for i, n := range names {
		top = append(top, scores.Entry{Rank: i + 1, Best: 100 - i, Name: n.hostile, ID: scores.NameID(n.hostile)})
		clean = append(clean, n.clean)
	}
	return top, clean
}

// TestScoresHostileNamesText: "scores" prints each name as game.CleanName
// makes it: no control byte but the CRLF line ends, no DEL, nothing
// outside ASCII.
func TestScoresHostileNamesText(t *testing.T) {
	top, clean := hostileEntries()
	out := scoresText(top)
	lines := bytes.Split(bytes.TrimSuffix(out, []byte("\r\n")), []byte("\r\n"))
	if len(lines) != 2+len(top) {
		t.Fatalf("%d lines, want %d:\n%q", len(lines), 2+len(top), out)
	}
	for i, l := range lines {
		for _, c := range l {
			if c < 0x20 || c >= 0x7f {
				t.Errorf("line %d has byte %#x: %q", i, c, l)
				break
			}
		}
	}
	for i, n := range clean {
		if f := strings.Fields(string(lines[2+i])); len(f) != 4 || f[2] != n {
			t.Errorf("line for %q: %q, want name %q", top[i].Name, lines[2+i], n)
		}
	}
}

// TestScoresHostileNamesJSON: "scores --json" decodes to the clean names,
// and its bytes hold no control, DEL or non-ASCII byte but the newline at
// the end (json.Marshal would escape the C0 controls itself, but not DEL
// or the C1 controls).
func TestScoresHostileNamesJSON(t *testing.T) {
	top, clean := hostileEntries()
	out := scoresJSON(top)
	body, ok := bytes.CutSuffix(out, []byte("\n"))
	if !ok {
		t.Fatalf("no newline at the end: %q", out)
	}
	for i, c := range body {
		if c < 0x20 || c >= 0x7f {
			t.Fatalf("byte %#x at %d: %q", c, i, out)
		}
	}
	var got struct {
		Top []scoreJSON `json:"top"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Top) != len(clean) {
		t.Fatalf("%d entries, want %d: %s", len(got.Top), len(clean), out)
	}
	for i, e := range got.Top {
		if e.Name != clean[i] || e.Rank != i+1 || e.Identity != "keyless" {
			t.Errorf("entry %d: %+v, want name %q", i, e, clean[i])
		}
		for _, c := range []byte(e.Name) {
			if !game.NameByte(c) && c != '?' {
				t.Errorf("entry %d: name %q has byte %#x", i, e.Name, c)
			}
		}
	}
}
