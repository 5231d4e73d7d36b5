package loadtest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// paint draws pixel rows (one string per pixel row, a character a pixel:
// '.' empty, 'W' own head, 'g' green body, 'r' fruit, 'y' yellow body)
// as half-block cells on a model terminal, with a banner row above and a
// status row below, the way the daemon lays out its screen.
func paint(t *testing.T, px []string) (Screen, int, int) {
	t.Helper()
	cols, rows := len(px[0]), len(px)/2+2
	col := map[byte]int{'.': -1, 'W': 15, 'g': 2, 'r': 9, 'y': 3}
	sgr := func(fg, bg int) string {
		f, b := "39", "49"
		if fg >= 0 {
			f = fmt.Sprint(30 + fg%8 + 60*(fg/8))
		}
		if bg >= 0 {
			b = fmt.Sprint(40 + bg%8 + 60*(bg/8))
		}
		return "\x1b[" + f + ";" + b + "m"
	}
	var b strings.Builder
	b.WriteString("\x1b[?1049h\x1b[H\x1b[44m snak\x1b[K\x1b[m")
	for y := 0; y+1 < len(px); y += 2 {
		fmt.Fprintf(&b, "\x1b[%d;1H", y/2+2)
		for x := range cols {
			b.WriteString(sgr(col[px[y][x]], col[px[y+1][x]]) + "▀")
		}
	}
	fmt.Fprintf(&b, "\x1b[m\x1b[%d;1H a 4", rows)
	s := newScreen(cols, rows)
	if _, err := s.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	return s, cols, rows
}

func TestHeadOf(t *testing.T) {
	for _, c := range []struct {
		name string
		px   []string
		want Dir
		ok   bool
	}{
		{"moving right", []string{
			"......",
			".gggW.",
			"......",
			"..r...",
		}, Right, true},
		{"just turned up", []string{
			"...W..",
			".ggg..",
			"......",
			"......",
		}, Up, true},
		{"moving down, head in a bottom half", []string{
			"..g...",
			"..g...",
			"..W...",
			"......",
		}, Down, true},
		{"another snake beside the head: which is the neck?", []string{
			".y....",
			"rWggg.",
			"..r...",
			"......",
		}, NoDir, false},
		{"fruit beside the head", []string{
			"......",
			"rWggg.",
			"......",
			"......",
		}, Left, true},
		{"no head", []string{
			"......",
			".gggg.",
			"......",
			"......",
		}, NoDir, false},
		{"two heads", []string{
			"W.....",
			"g.ggW.",
			"......",
			"......",
		}, NoDir, false},
	} {
		s, cols, rows := paint(t, c.px)
		if d, ok := headOf(s, cols, rows); d != c.want || ok != c.ok {
			t.Errorf("%s: headOf = %v %v, want %v %v", c.name, d, ok, c.want, c.ok)
		}
	}
}

// TestProbe: a turn is timed only at a right angle to the heading seen,
// from its key to the first read that shows it; one never seen is lost
// after probeTimeout; a death forgets it.
func TestProbe(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var p probe
	p.press(Up, t0) // no heading seen yet: not timed
	if _, hit, lost := p.frame(Right, true, t0.Add(10*time.Millisecond)); hit || lost {
		t.Fatal("a turn pressed before any heading was seen was timed")
	}
	p.press(Left, t0.Add(20*time.Millisecond)) // the reverse: the game ignores it
	if _, hit, _ := p.frame(Left, true, t0.Add(30*time.Millisecond)); hit {
		t.Fatal("a reverse was timed")
	}
	p.frame(Right, true, t0.Add(40*time.Millisecond))
	p.press(Down, t0.Add(50*time.Millisecond))
	if _, hit, _ := p.frame(NoDir, false, t0.Add(60*time.Millisecond)); hit { // an ambiguous frame
		t.Fatal("an ambiguous frame was a hit")
	}
	if _, hit, _ := p.frame(Right, true, t0.Add(100*time.Millisecond)); hit {
		t.Fatal("the old heading was a hit")
	}
	p.press(Up, t0.Add(110*time.Millisecond)) // a second turn while one is in flight: ignored
	lat, hit, _ := p.frame(Down, true, t0.Add(180*time.Millisecond))
	if !hit || lat != 130*time.Millisecond {
		t.Fatalf("the turn down: hit %v after %v, want a hit after 130ms", hit, lat)
	}
	p.press(Left, t0.Add(200*time.Millisecond))
	if _, hit, lost := p.frame(Down, true, t0.Add(200*time.Millisecond+probeTimeout)); hit || !lost {
		t.Fatalf("a turn never shown: hit %v lost %v, want lost", hit, lost)
	}
	p.press(Right, t0.Add(2*time.Second))
	p.forget()
	if _, hit, lost := p.frame(Right, true, t0.Add(3*time.Second)); hit || lost {
		t.Fatal("a forgotten turn was timed")
	}
}
