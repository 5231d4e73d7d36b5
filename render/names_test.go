package render

import (
	"bytes"
	"strings"
	"testing"

	"snaked/game"
	"snaked/internal/vtmodel"
)

// hostile maps the fixtures' names to names no join makes (as a peer on
// the cluster link could send them) and those to what a terminal is to be
// shown of them: each byte outside the nickname alphabet as '?', cut to
// 16 bytes. No two of the shown names are the same, so a screen drawn
// from the hostile names is the one drawn from the shown names.
var hostile = map[string]struct{ bad, shown string }{
	"alice":                 {"al\x1b[31mice", "al??31mice"},
	"bob":                   {"b\x1b[2Job", "b??2Job"},
	"carol":                 {"\u009bcarol", "??carol"}, // CSI as U+009B
	"erin":                  {"erin\x7f", "erin?"},
	"frank":                 {"fr\nank", "fr?ank"},
	"dave":                  {"d\xffave", "d?ave"},
	"bot6":                  {"bot\x9b6", "bot?6"},
	"averyveryverylongname": {"\x1b]0;pwned\x07" + strings.Repeat("x", 200), "??0?pwned?xxxxxx"},
}

// renamed renames every name v holds (snakes, killers, leaderboard, best,
// kills) with name.
func renamed(v *game.View, name func(string) string) {
	for i := range v.Snakes {
		s := &v.Snakes[i]
		s.Name, s.KilledBy = name(s.Name), name(s.KilledBy)
	}
	for i := range v.Top {
		v.Top[i].Name = name(v.Top[i].Name)
	}
	v.Best.Name = name(v.Best.Name)
	for i := range v.Kills {
		k := &v.Kills[i]
		k.Victim, k.Killer, k.Other = name(k.Victim), name(k.Killer), name(k.Other)
	}
}

// TestHostileNames: tags, the kill feed (a head-on once), the leaderboard,
// the status row (playing and watching) and the death box (killed by,
// head-on with) draw a name with control sequences, C1 controls, DEL, a
// newline, broken UTF-8 or 200 bytes exactly as they draw that name with
// each bad byte as '?', frame for frame, byte for byte.
func TestHostileNames(t *testing.T) {
	headOn := func() (*game.View, *HUD) {
		v, h := dead("carol")
		v.Kills = []game.Kill{{Tick: 700, Victim: "alice", VictimSlot: 0, Length: 25, KillerSlot: -1, HeadOn: true, Other: "carol", At: game.Point{X: 200, Y: 110}}}
		return v, h
	}
	headOnFeed := func() (*game.View, *HUD) { // the feed has room for both halves
		v, h := feedView()
		v.Kills = v.Kills[3:]
		return v, h
	}
	watching := func() (*game.View, *HUD) {
		v, h := board()
		h.You, h.Spectator, h.Follow = 0, true, v.Snakes[1].ID
		return v, h
	}
	for _, c := range []struct {
		title      string
		view       func() (*game.View, *HUD)
		prof       Profile
		cols, rows int
		want       []string // on the screen
	}{
		{"tags", crowd, ANSI16, 120, 40, []string{"b??2Job", "??carol", "??0?pwned?xx ", "al??31mice"}},
		{"tags, Mono", crowd, Mono, 120, 40, []string{"[b??2Job]", "[??0?pwned?xx]"}},
		{"feed", feedView, ANSI16, 80, 24, []string{"??carol cut off b??2Job", "erin? and fr?ank met head-on"}},
		{"feed, a head-on alone", headOnFeed, ANSI16, 80, 24, []string{"erin? and fr?ank met head-on"}},
		{"feed, Mono", feedView, Mono, 80, 24, []string{"??carol cut off b??2Job"}},
		{"leaderboard", board, ANSI16, 160, 24, []string{"al??31mice  len 25", "~bot?6 49", "??carol 38", "d?ave 7"}},
		{"leaderboard, compact", board, ANSI16, 40, 12, []string{"~bot?6 49"}},
		{"watching", watching, ANSI16, 100, 24, []string{"watching bot?6"}},
		{"killed by", func() (*game.View, *HUD) { return dead("carol") }, ANSI16, 80, 24, []string{"killed by ??carol"}},
		{"head-on", headOn, Mono, 80, 24, []string{"head-on with ??carol"}},
	} {
		vb, hb := c.view()
		renamed(vb, func(n string) string {
			if x, ok := hostile[n]; ok {
				return x.bad
			}
			return n
		})
		vs, hs := c.view()
		renamed(vs, func(n string) string {
			if x, ok := hostile[n]; ok {
				return x.shown
			}
			return n
		})
		rb, rs := newKept(c.prof, c.cols, c.rows), newKept(c.prof, c.cols, c.rows)
		term := vtmodel.New(c.cols, c.rows)
		for i := 0; i < 3; i++ {
			if i > 0 {
				vb.Tick++
				vs.Tick++
			}
			ob, os := rb.Frame(vb, hb), rs.Frame(vs, hs)
			if !bytes.Equal(ob, os) {
				t.Fatalf("%s, frame %d: hostile names drew\n%q\nthe names shown drew\n%q", c.title, i, ob, os)
			}
			term.Write(ob)
			if err := check(term, rb); err != nil {
				t.Fatalf("%s, frame %d: %v", c.title, i, err)
			}
		}
		all := text(term)
		for _, w := range c.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s: the screen lacks %q:\n%s", c.title, w, all)
			}
		}
		if u := term.Unsupported(); len(u) > 0 {
			t.Errorf("%s: unsupported sequences %q", c.title, u)
		}
	}
}
