package loadtest

import (
	"strings"
	"testing"
)

func TestMarkerAcrossWrites(t *testing.T) {
	stream := "\x1b[5;10Hspace or enter to respawn\x1b[m and more"
	for cut := 0; cut <= len(stream); cut++ {
		for cut2 := cut; cut2 <= len(stream); cut2 += 3 {
			m := newMarker("respawn")
			hits := 0
			for _, p := range []string{stream[:cut], stream[cut:cut2], stream[cut2:]} {
				if m.Scan([]byte(p)) {
					hits++
				}
			}
			if hits != 1 {
				t.Fatalf("cuts %d,%d: %d hits, want 1", cut, cut2, hits)
			}
		}
	}
	// One byte at a time.
	m := newMarker("respawn")
	hits := 0
	for i := range len(stream) {
		if m.Scan([]byte{stream[i]}) {
			hits++
		}
	}
	if hits != 1 {
		t.Fatalf("byte by byte: %d hits", hits)
	}
	if newMarker("respawn").Scan([]byte("respaw")) || newMarker("").Scan([]byte("x")) {
		t.Fatal("false hit")
	}
}

func TestStripTextAndJoinPrompt(t *testing.T) {
	join := "\x1b[?1049h\x1b[2J\x1b]0;title\x07\x1b[5;3H\x1b[97mPick a nickname: \x1b[m\x1b[6;3HLetters..."
	text := stripText([]byte(join))
	if !strings.Contains(text, "pick a nickname: ") || strings.Contains(text, "title") || strings.ContainsAny(text, "\x1b[") {
		t.Fatalf("stripText = %q", text)
	}
	if !joinPrompt(text) {
		t.Fatal("join prompt not recognised")
	}
	game := "\x1b[1;2Hsnaked  12 players  ssh -p 2222 host\x1b[24;1Hlen 5 rank 3 kills 0"
	if joinPrompt(stripText([]byte(game))) {
		t.Fatal("game screen taken for a join prompt")
	}
}

// testScreen feeds s through the project's terminal model.
func testScreen(cols, rows int, s string) Screen {
	sc := newScreen(cols, rows)
	sc.Write([]byte(s))
	return sc
}

func TestCheckScreen(t *testing.T) {
	frames := floorFrames(300, 2)
	good := "\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J\x1b[1;2H" + floorBanner + string(frames[0]) + string(frames[1])
	if bad := CheckScreen(testScreen(80, 24, good), 80, 24, "snake"); bad != nil {
		t.Fatalf("sane screen reported: %q", bad)
	}
	for name, c := range map[string]struct{ out, want string }{
		"unsupported":  {good + "\x1b[5n", "unsupported"},
		"no banner":    {"\x1b[?1049h\x1b[2J" + string(frames[0]), "no banner"},
		"main screen":  {"\x1b[2J\x1b[1;1Hsnaked" + string(frames[0]), "alternate"},
		"blank":        {"\x1b[?1049h\x1b[2J\x1b[1;1Hsnaked", "blank"},
		"undefined":    {good + "\x1b[3S", "undefined"},
		"stray binary": {good + "\x1b[10;10H\x01", "unsupported"},
	} {
		bad := CheckScreen(testScreen(80, 24, c.out), 80, 24, "snake")
		if !strings.Contains(strings.Join(bad, "|"), c.want) {
			t.Errorf("%s: problems %q, want one mentioning %q", name, bad, c.want)
		}
	}
}

func TestFloorFrames(t *testing.T) {
	for _, size := range []int{16, 17, 40, 150, 151, 300, 1500, 5000} {
		fs := floorFrames(size, 16)
		for i, f := range fs {
			if len(f) != size {
				t.Fatalf("size %d frame %d: %d bytes", size, i, len(f))
			}
		}
		if size >= 150 {
			// Drawn inside 80x24 with nothing a strict terminal rejects.
			all := "\x1b[?1049h\x1b[2J\x1b[1;2H" + floorBanner
			for _, f := range fs {
				all += string(f)
			}
			if bad := CheckScreen(testScreen(80, 24, all), 80, 24, "snake"); bad != nil {
				t.Errorf("size %d: %q", size, bad)
			}
		}
	}
}

func TestJoinEcho(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{"pick a nickname: botx12", true},
		{"pick a nickname: bot", true},
		{"pick a nickname: ", false},
		{"pick a nickname: botx12 pick a nickname: taken, try another", false},
		{"pick a nickname: letters, digits, _ and -. enter joins (empty: a guest name).", false},
		{"pick a nickname: botx12zz", false},
		{"no prompt", false},
	} {
		if got := joinEcho(c.text, "botX12"); got != c.want {
			t.Errorf("joinEcho(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}
