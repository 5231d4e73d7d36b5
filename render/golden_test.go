package render

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"

	"snaked/game"
	"snaked/internal/testkit"
	"snaked/internal/vtmodel"
)

// Golden screens: each test below draws hand-built views and compares
// what the terminal model shows with testdata/<Test>.golden.
// go test ./render -run Golden -update rewrites them.

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// gsnake is a snake of a hand-built view: straight, its head at (x, y)
// heading dir, its body trailing behind.
type gsnake struct {
	name string
	x, y int
	dir  game.Dir
	n    int
	bot  bool
}

// gview builds a w x h view at tick with these snakes (slot = index,
// colour = index) and a leaderboard of the longest 10.
func gview(w, h int, tick uint64, ss ...gsnake) *game.View {
	v := &game.View{Tick: tick, W: w, H: h, Pix: make([]game.Pixel, w*h), Snakes: make([]game.SnakeInfo, len(ss)), Heads: make([]game.Point, len(ss))}
	for i, s := range ss {
		st := steps[s.dir]
		for k := s.n - 1; k >= 0; k-- {
			kind := game.Body
			if k == 0 {
				kind = game.Head
			}
			x, y := mod(s.x-k*st.X, w), mod(s.y-k*st.Y, h)
			v.Pix[y*w+x] = game.MakePixel(kind, i, game.Colour(i%16))
		}
		v.Snakes[i] = game.SnakeInfo{
			ID: game.ID(i) | 1<<16, Name: s.name, Colour: game.Colour(i % 16), Bot: s.bot,
			Used: true, Alive: true, Length: s.n,
			BestLength: s.n,
		}
		v.Heads[i] = game.Point{X: s.x, Y: s.y}
	}
	rankTop(v)
	return v
}

// rankTop sets the leaderboard and ranks from the live snakes' lengths.
func rankTop(v *game.View) {
	idx := []int{}
	for i, s := range v.Snakes {
		if s.Alive {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return v.Snakes[b].Length - v.Snakes[a].Length })
	v.Top = v.Top[:0]
	for i, k := range idx {
		if i < game.TopN {
			v.Top = append(v.Top, game.Entry{Slot: k, Name: v.Snakes[k].Name, Length: v.Snakes[k].Length})
		}
	}
	v.MarkRanks()
}

// gscreen draws the frames of one golden screen: v at ticks v.Tick,
// v.Tick+1, ... (n frames, so that what waits for time shows), on a fresh
// renderer and terminal model; it checks the model against the frame and
// returns a dump of the screen headed by title, with the colours of the
// listed rows.
func gscreen(t *testing.T, title string, p Profile, cols, rows int, v *game.View, h *HUD, n int, colourRows ...int) string {
	t.Helper()
	r := newKept(p, cols, rows)
	term := vtmodel.New(cols, rows)
	for i := 0; i < n; i++ {
		if i > 0 {
			v.Tick++
		}
		term.Write(r.Frame(v, h))
		if err := check(term, r); err != nil {
			t.Fatalf("%s: %v", title, err)
		}
	}
	return dump(title, term, colourRows...)
}

// dump is the model's screen between bars (so trailing blanks show), then
// per listed row the colours of its cells: fg and bg as a palette digit
// (0-f) or '.' for the default. On the playfield's rows (those of a
// screen of 12 rows or more, but the first when there is a banner and the
// last), a space with a coloured background, which is how the renderer
// draws a cell whose two pixels are the same colour, shows as █.
func dump(title string, term *vtmodel.Term, colourRows ...int) string {
	cols, rows := term.Size()
	var b strings.Builder
	fmt.Fprintf(&b, "== %s (%dx%d) ==\n", title, cols, rows)
	pf0, pf1 := 0, rows-1
	if rows >= 16 {
		pf0 = 1
	}
	if cols < MinCols || rows < MinRows {
		pf1 = 0
	}
	for y := 0; y < rows; y++ {
		b.WriteByte('|')
		for x := 0; x < cols; x++ {
			switch c := term.Cell(x, y); {
			case c.Ch == vtmodel.Unknown:
				b.WriteByte('?')
			case c.Ch == ' ' && c.BG != vtmodel.Default && y >= pf0 && y < pf1:
				b.WriteRune('█')
			default:
				b.WriteRune(c.Ch)
			}
		}
		b.WriteString("|\n")
	}
	hex := func(c vtmodel.Color) byte {
		if c < 0 || c > 15 {
			return '.'
		}
		return "0123456789abcdef"[c]
	}
	for _, y := range colourRows {
		var fg, bg strings.Builder
		for x := 0; x < cols; x++ {
			c := term.Cell(x, y)
			fg.WriteByte(hex(c.FG))
			bg.WriteByte(hex(c.BG))
		}
		fmt.Fprintf(&b, "row %d fg |%s|\nrow %d bg |%s|\n", y, fg.String(), y, bg.String())
	}
	b.WriteByte('\n')
	return b.String()
}

// alone is a 400x220 world where alice (slot 0) has nobody in sight: bob
// is nearest, down and right; carol leads, up and left; dave is a bot far
// away.
func alone() (*game.View, *HUD) {
	v := gview(400, 220, 1,
		gsnake{name: "alice", x: 200, y: 100, dir: game.Right, n: 8},
		gsnake{name: "bob", x: 290, y: 160, dir: game.Up, n: 6},
		gsnake{name: "carol", x: 60, y: 20, dir: game.Left, n: 30},
		gsnake{name: "dave", x: 390, y: 210, dir: game.Down, n: 12, bot: true},
	)
	id := v.Snakes[0].ID
	return v, &HUD{You: id, Follow: id, ShutdownIn: -1, Players: 3, Spectators: 1, Join: "ssh -p 2222 host"}
}

// TestGoldenRadar: with nobody in sight, after radarDelay ticks, the radar
// points to the nearest snake and the leader, in UTF-8 arrows or ASCII,
// at full and compact width; the leader line alone when the nearest
// leads; nothing while another head is on screen.
func TestGoldenRadar(t *testing.T) {
	var b strings.Builder
	v, h := alone()
	b.WriteString(gscreen(t, "ANSI16, nearest and leader", ANSI16, 80, 24, v, h, radarDelay+1))
	v, h = alone()
	b.WriteString(gscreen(t, "Mono", Mono, 80, 24, v, h, radarDelay+1))
	v, h = alone()
	b.WriteString(gscreen(t, "ANSI16, compact", ANSI16, 40, 12, v, h, radarDelay+1))
	v, h = alone()
	v.Snakes[1].Length = 40 // bob leads: one line
	rankTop(v)
	b.WriteString(gscreen(t, "ANSI16, the nearest leads", ANSI16, 80, 24, v, h, radarDelay+1))
	v, h = alone()
	b.WriteString(gscreen(t, "ANSI16, not yet (radarDelay-1 ticks alone)", ANSI16, 80, 24, v, h, radarDelay))
	testkit.Golden(t, t.Name(), b.String(), *update)
}

// crowd is alice (slot 0) with bob, carol and a bot near her head.
func crowd() (*game.View, *HUD) {
	v := gview(400, 220, 1,
		gsnake{name: "alice", x: 200, y: 110, dir: game.Right, n: 10},
		gsnake{name: "bob", x: 215, y: 100, dir: game.Down, n: 6},
		gsnake{name: "carol", x: 180, y: 122, dir: game.Left, n: 8},
		gsnake{name: "bot7", x: 230, y: 118, dir: game.Up, n: 5, bot: true},
		gsnake{name: "averyveryverylongname", x: 160, y: 96, dir: game.Right, n: 5},
	)
	id := v.Snakes[0].ID
	return v, &HUD{You: id, Follow: id, ShutdownIn: -1, Players: 4, Join: "ssh -p 2222 host"}
}

// TestGoldenTags: other snakes carry their names (cut to tagName) near
// their heads, never over a pixel, as many as the screen has room for
// (tagRoom: 3 at 80x24, the farthest from the player goes without);
// Mono brackets them; HideTags hides them.
func TestGoldenTags(t *testing.T) {
	var b strings.Builder
	v, h := crowd()
	b.WriteString(gscreen(t, "ANSI16", ANSI16, 80, 24, v, h, 1))
	v, h = crowd()
	b.WriteString(gscreen(t, "ANSI16, room for all", ANSI16, 120, 40, v, h, 1))
	v, h = crowd()
	b.WriteString(gscreen(t, "Mono", Mono, 80, 24, v, h, 1))
	v, h = crowd()
	h.HideTags = true
	b.WriteString(gscreen(t, "ANSI16, HideTags", ANSI16, 80, 24, v, h, 1))
	testkit.Golden(t, t.Name(), b.String(), *update)
}

// feedView is crowd with kills: carol cut bob off, the bot ran into
// itself, erin and frank met head-on (reported twice), and a far-away
// death nobody cares about, at ticks 95-99 of view tick 100.
func feedView() (*game.View, *HUD) {
	v, h := crowd()
	v.Tick = 100
	near := game.Point{X: 210, Y: 105}
	v.Kills = []game.Kill{
		{Tick: 95, Victim: "zed", VictimSlot: 9, Length: 1, KillerSlot: -1, At: game.Point{X: 10, Y: 10}},
		{Tick: 96, Victim: "bob", VictimSlot: 1, Length: 6, Killer: "carol", KillerSlot: 2, At: near},
		{Tick: 97, Victim: "bot7", VictimSlot: 3, VictimBot: true, Length: 5, KillerSlot: -1, At: near},
		{Tick: 99, Victim: "erin", VictimSlot: 7, Length: 9, KillerSlot: -1, HeadOn: true, Other: "frank", At: near},
		{Tick: 99, Victim: "frank", VictimSlot: 8, Length: 9, KillerSlot: -1, HeadOn: true, Other: "erin", At: near},
	}
	// A full leaderboard of long snakes far away, so zed (length 1, far
	// away) is nobody's business.
	for i := 0; i < game.TopN; i++ {
		v.Snakes = append(v.Snakes, game.SnakeInfo{ID: game.ID(len(v.Snakes)) | 1<<16, Name: fmt.Sprintf("far%d", i),
			Used: true, Alive: true, Length: 50})
		v.Heads = append(v.Heads, game.Point{X: 0, Y: 200})
	}
	rankTop(v)
	return v, h
}

// TestGoldenFeed: the kill feed's three kinds of line (a head-on once),
// the player as "you" and highlighted, names cut to fit beside the radar
// at 40 columns, and lines gone feedShow ticks after their death.
func TestGoldenFeed(t *testing.T) {
	var b strings.Builder
	v, h := feedView()
	b.WriteString(gscreen(t, "ANSI16", ANSI16, 80, 24, v, h, 1, 1, 2, 3))
	v, h = feedView()
	b.WriteString(gscreen(t, "Mono", Mono, 80, 24, v, h, 1))
	// alice cuts gina off, far away: she is in it, so it shows.
	v, h = feedView()
	v.Kills = append(v.Kills, game.Kill{Tick: 100, Victim: "gina", VictimSlot: 6, Length: 3, Killer: "alice", KillerSlot: 0, At: game.Point{X: 0, Y: 0}})
	b.WriteString(gscreen(t, "ANSI16, you cut someone off (the oldest line goes)", ANSI16, 80, 24, v, h, 1, 1, 2, 3))
	// Nobody in sight, 40 columns: the radar and the feed share the rows.
	v, h = alone()
	v.Tick = 100
	v.Kills = []game.Kill{
		{Tick: 99, Victim: "bob", VictimSlot: 1, Length: 6, Killer: "carolineisverylong", KillerSlot: 2, At: game.Point{X: 210, Y: 105}},
	}
	b.WriteString(gscreen(t, "ANSI16, 40x12 beside the radar", ANSI16, 40, 12, v, h, radarDelay+1))
	// feedShow ticks after the last death, the feed is empty.
	v, h = feedView()
	b.WriteString(gscreen(t, "ANSI16, feedShow ticks later", ANSI16, 80, 24, v, h, feedShow-1+1+2))
	testkit.Golden(t, t.Name(), b.String(), *update)
}

// board is a view whose leaderboard mixes people and bots, alice third.
func board() (*game.View, *HUD) {
	v := gview(400, 220, 1,
		gsnake{name: "alice", x: 200, y: 110, dir: game.Right, n: 25},
		gsnake{name: "bot6", x: 20, y: 20, dir: game.Right, n: 49, bot: true},
		gsnake{name: "carol", x: 20, y: 40, dir: game.Right, n: 38},
		gsnake{name: "bot3", x: 20, y: 60, dir: game.Right, n: 12, bot: true},
		gsnake{name: "dave", x: 20, y: 80, dir: game.Right, n: 7},
	)
	v.Snakes[0].Kills = 2
	id := v.Snakes[0].ID
	return v, &HUD{You: id, Follow: id, ShutdownIn: -1, Players: 3, Join: "ssh -p 2222 host"}
}

// TestGoldenBoard: the status row: the player's figures, a separator,
// then "rank name length" entries separated by dots, bots marked '~' (and
// grey), the player's entry highlighted (bright white on blue; Mono:
// brackets); compact at 40 columns; a spectator's followed snake
// highlighted.
func TestGoldenBoard(t *testing.T) {
	var b strings.Builder
	v, h := board()
	b.WriteString(gscreen(t, "ANSI16", ANSI16, 80, 24, v, h, 1, 23))
	v, h = board()
	b.WriteString(gscreen(t, "Mono", Mono, 80, 24, v, h, 1, 23))
	v, h = board()
	b.WriteString(gscreen(t, "ANSI16, compact", ANSI16, 40, 12, v, h, 1, 11))
	v, h = board()
	h.You, h.Spectator, h.Follow = 0, true, v.Snakes[1].ID
	b.WriteString(gscreen(t, "ANSI16, spectator following bot6", ANSI16, 100, 24, v, h, 1, 23))
	v, h = board()
	h.Notice = "world restarting"
	b.WriteString(gscreen(t, "ANSI16, a notice in the banner", ANSI16, 80, 24, v, h, 1, 0))
	testkit.Golden(t, t.Name(), b.String(), *update)
}

// dead is alice dead at tick 700 after living from tick 50, best 40.
func dead(killedBy string) (*game.View, *HUD) {
	v, h := board()
	v.Tick = 700
	s := &v.Snakes[0]
	s.Alive, s.DeathTick, s.SpawnTick, s.BestLength, s.KilledBy = false, 700, 50, 40, killedBy
	rankTop(v)
	return v, h
}

// TestGoldenBoxes: the death box (killed by someone, by yourself,
// head-on as the kill feed tells) and the help boxes (playing, watching),
// framed in box drawing on UTF-8 terminals and in ASCII on Mono, their
// columns aligned.
func TestGoldenBoxes(t *testing.T) {
	var b strings.Builder
	v, h := dead("carol")
	b.WriteString(gscreen(t, "death, ANSI16", ANSI16, 80, 24, v, h, 1))
	v, h = dead("carol")
	b.WriteString(gscreen(t, "death, Mono", Mono, 80, 24, v, h, 1))
	v, h = dead("")
	b.WriteString(gscreen(t, "death by yourself, ANSI16", ANSI16, 80, 24, v, h, 1))
	v, h = dead("carol")
	h.AllBest, h.AllRank = 57, 12
	b.WriteString(gscreen(t, "death with the all-time record known, ANSI16", ANSI16, 80, 24, v, h, 1))
	v, h = dead("carol")
	v.Kills = []game.Kill{
		{Tick: 700, Victim: "alice", VictimSlot: 0, Length: 25, KillerSlot: -1, HeadOn: true, Other: "carol", At: game.Point{X: 200, Y: 110}},
	}
	r := newKept(ANSI16, 80, 24)
	term := vtmodel.New(80, 24)
	term.Write(r.Frame(v, h))
	// View.Kills forgets the death after game.KillTicks; the box does not.
	v.Kills, v.Tick = nil, v.Tick+game.KillTicks+1
	term.Write(r.Frame(v, h))
	if err := check(term, r); err != nil {
		t.Fatal(err)
	}
	b.WriteString(dump("death head-on, after View.Kills forgot it, ANSI16", term))
	ft := vtmodel.New(80, 24)
	ft.Write(newKept(ANSI16, 80, 24).Frame(v, h)) // a fresh renderer never saw the kill
	if all := text(ft); !strings.Contains(all, "killed by carol") {
		t.Errorf("without the kill, a fresh renderer should say killed by carol:\n%s", all)
	}
	v, h = board()
	h.Help = true
	b.WriteString(gscreen(t, "help, ANSI16", ANSI16, 80, 24, v, h, 1))
	v, h = board()
	h.Help = true
	b.WriteString(gscreen(t, "help, Mono", Mono, 80, 24, v, h, 1))
	v, h = board()
	h.Help, h.Spectator, h.You = true, true, 0
	b.WriteString(gscreen(t, "help watching, ANSI16", ANSI16, 80, 24, v, h, 1))
	testkit.Golden(t, t.Name(), b.String(), *update)
}

// TestGoldenSmall: the smallest game screen (40x12: no banner, compact
// rows) with the tallest box, the death box, radar and feed; and just
// below it (39x12, 40x11), the "please enlarge" screen.
func TestGoldenSmall(t *testing.T) {
	var b strings.Builder
	v, h := board()
	h.Help, h.Spectator, h.You = true, true, 0
	b.WriteString(gscreen(t, "help watching", ANSI16, 40, 12, v, h, 1))
	v, h = board()
	h.Help = true
	b.WriteString(gscreen(t, "help, Mono", Mono, 40, 12, v, h, 1))
	v, h = dead("carol")
	b.WriteString(gscreen(t, "death", ANSI16, 40, 12, v, h, 1))
	v, h = feedView()
	b.WriteString(gscreen(t, "tags and feed", ANSI16, 40, 12, v, h, 1))
	for _, sz := range [][2]int{{39, 12}, {40, 11}} {
		v, h = board()
		b.WriteString(gscreen(t, "below the minimum", ANSI16, sz[0], sz[1], v, h, 1))
	}
	testkit.Golden(t, t.Name(), b.String(), *update)
}

// TestFeedWants: which deaths the feed takes when it has room (a
// renderer with an empty feed takes the view's one new death, or not:
// feedUpdate; TestFeedLineReplaced checks the room). The player (alice, followed
// at the centre of an 80x24 screen, camera at rest) sees deaths within a
// screen of the screen's centre (80 columns, 44 pixel rows: the playfield
// and half a screen past each edge), her own, and those of the top 10;
// not a nobody's death a screen and a half away.
func TestFeedWants(t *testing.T) {
	v, h := feedView()
	r := newKept(ANSI16, 80, 24)
	r.Frame(v, h)
	own := v.Snakes[0].ID.Slot()
	cx, cy := r.camX+r.cols/2, r.camY+r.pfRows
	for _, c := range []struct {
		name string
		k    game.Kill
		want bool
	}{
		{"on screen", game.Kill{Victim: "zed", VictimSlot: 9, Length: 1, KillerSlot: -1, At: game.Point{X: cx + 30, Y: cy - 15}}, true},
		{"a screen right", game.Kill{Victim: "zed", VictimSlot: 9, Length: 1, KillerSlot: -1, At: game.Point{X: cx + 80, Y: cy}}, true},
		{"a screen up", game.Kill{Victim: "zed", VictimSlot: 9, Length: 1, KillerSlot: -1, At: game.Point{X: cx, Y: cy - 44}}, true},
		{"a screen and a half right", game.Kill{Victim: "zed", VictimSlot: 9, Length: 1, KillerSlot: -1, At: game.Point{X: cx + 120, Y: cy}}, false},
		{"a screen and a half down", game.Kill{Victim: "zed", VictimSlot: 9, Length: 1, KillerSlot: -1, At: game.Point{X: cx, Y: cy + 66}}, false},
		{"far, alice the victim", game.Kill{Victim: "alice", VictimSlot: own, Length: 1, KillerSlot: -1, At: game.Point{X: cx + 150, Y: cy + 80}}, true},
		{"far, alice the killer", game.Kill{Victim: "zed", VictimSlot: 9, Length: 1, Killer: "alice", KillerSlot: own, At: game.Point{X: cx + 150, Y: cy + 80}}, true},
		{"far, victim long enough for the top 10", game.Kill{Victim: "zed", VictimSlot: 9, Length: 60, KillerSlot: -1, At: game.Point{X: cx + 150, Y: cy + 80}}, true},
		{"far, killer in the top 10", game.Kill{Victim: "zed", VictimSlot: 9, Length: 1, Killer: "far0", KillerSlot: v.Top[0].Slot, At: game.Point{X: cx + 150, Y: cy + 80}}, v.Top[0].Name == "far0"},
		{"far, killer in a top slot under another name", game.Kill{Victim: "zed", VictimSlot: 9, Length: 1, Killer: "nobody", KillerSlot: v.Top[0].Slot, At: game.Point{X: cx + 150, Y: cy + 80}}, false},
		{"far, killer's slot 64 past a top one", game.Kill{Victim: "zed", VictimSlot: 9, Length: 1, Killer: v.Top[0].Name, KillerSlot: v.Top[0].Slot + 64, At: game.Point{X: cx + 150, Y: cy + 80}}, false},
	} {
		k := c.k
		k.Tick = v.Tick
		v.Kills = []game.Kill{k}
		for i := range r.feed {
			r.feed[i].on = false
		}
		r.feedAt = v.Tick - 1
		r.feedUpdate(v, own)
		got := false
		for i := range r.feed {
			got = got || r.feed[i].on
		}
		if got != c.want {
			t.Errorf("%s: wanted in the feed = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestFeedLineReplaced: while the feed is full, a stranger's death waits
// for a line that has stayed feedDwell ticks (it is not shown before);
// then it takes the oldest line's row, shows its own text there, and the
// old line's is gone (a line keeps its text from frame to frame only
// while it is the same line in the same room).
func TestFeedLineReplaced(t *testing.T) {
	v, h := feedView()
	r := newKept(ANSI16, 80, 24)
	term := vtmodel.New(80, 24)
	text := func() string {
		var b strings.Builder
		for y := 0; y < 24; y++ {
			for x := 0; x < 80; x++ {
				b.WriteRune(term.Cell(x, y).Ch)
			}
			b.WriteByte('\n')
		}
		return b.String()
	}
	for i := range 4 {
		if i > 0 {
			v.Tick++
		}
		term.Write(r.Frame(v, h))
	}
	if s := text(); !strings.Contains(s, "carol cut off bob") || strings.Contains(s, "hank") {
		t.Fatalf("before: the feed should show carol's kill and not hank's:\n%s", s)
	}
	// The oldest line (bob's, tick 96) has stayed feedDwell-1 ticks.
	v.Tick = 96 + feedDwell - 1
	v.Kills = append(v.Kills, game.Kill{Tick: v.Tick, Victim: "ivan", VictimSlot: 5, Length: 4, Killer: "carol", KillerSlot: 2, At: game.Point{X: 210, Y: 105}})
	term.Write(r.Frame(v, h))
	if s := text(); strings.Contains(s, "ivan") || !strings.Contains(s, "carol cut off bob") {
		t.Fatalf("within feedDwell: ivan's death should wait, bob's line stay:\n%s", s)
	}
	v.Tick++
	v.Kills = append(v.Kills, game.Kill{Tick: v.Tick, Victim: "hank", VictimSlot: 5, Length: 4, Killer: "carol", KillerSlot: 2, At: game.Point{X: 210, Y: 105}})
	term.Write(r.Frame(v, h))
	if err := check(term, r); err != nil {
		t.Fatal(err)
	}
	if s := text(); !strings.Contains(s, "carol cut off hank") || strings.Contains(s, "carol cut off bob") {
		t.Fatalf("after: hank's death should have taken the oldest line's row:\n%s", s)
	}
}

// TestFeedMineAtOnce: the player's own kill takes the oldest line's row at
// once, however fresh the lines are.
func TestFeedMineAtOnce(t *testing.T) {
	v, h := feedView()
	r := newKept(ANSI16, 80, 24)
	r.Frame(v, h)
	v.Tick++
	v.Kills = append(v.Kills, game.Kill{Tick: v.Tick, Victim: "gina", VictimSlot: 6, Length: 3, Killer: "alice", KillerSlot: 0, At: game.Point{X: 0, Y: 0}})
	term := vtmodel.New(80, 24)
	r.Invalidate()
	term.Write(r.Frame(v, h))
	var b strings.Builder
	for y := 0; y < 24; y++ {
		for x := 0; x < 80; x++ {
			b.WriteRune(term.Cell(x, y).Ch)
		}
	}
	if s := b.String(); !strings.Contains(s, "you cut off gina") || strings.Contains(s, "carol cut off bob") {
		t.Fatalf("alice's kill should have taken bob's line's row at once:\n%s", s)
	}
}
