package game

import (
	"errors"
	"fmt"
	"testing"
)

// die ends snake id at once, as a death in a phase would (its body just
// disappears), so tests can make bots die on demand.
func die(w *World, slot int) {
	s := &w.snakes[slot]
	if !s.alive {
		return
	}
	for k := 0; k < s.length; k++ {
		w.set(s.at(k), 0)
	}
	s.alive = false
	s.deathTick = w.tick
}

// population returns the newest view's players, bots, and the bots' names.
func population(w *World) (players, bots int, names map[string]bool) {
	v := w.Acquire()
	defer v.Release()
	names = make(map[string]bool)
	for _, s := range v.Snakes {
		if s.Used && s.Bot {
			names[s.Name] = true
		}
	}
	return v.Players, v.Bots, names
}

// TestPopulation follows the bots of a world while people join and leave:
// bots fill to the target at once in New, step aside (when they die, or
// while they wait for a spawn) as people join, never go below the floor,
// and come back at most 4 a tick as people leave; no join within
// MaxSnakes is refused, and bot names stay unique and small.
func TestPopulation(t *testing.T) {
	const floor, target, sessions = 3, 12, 20
	w, err := New(Config{W: 256, H: 128, MaxSnakes: sessions + target, Bots: floor, BotTarget: target, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	wantBots := func(players int) int { return max(floor, target-players) }
	// step runs a tick, kills the surplus bots (so stepping aside does not
	// wait for bots to die on their own) and runs another, in which they
	// leave.
	step := func() {
		t.Helper()
		run(t, w, 1)
		surplus := w.bots - w.want
		for _, slot := range w.botList {
			if s := &w.snakes[slot]; surplus > 0 && s.alive {
				die(w, int(slot))
				surplus--
			}
		}
		run(t, w, 1)
	}
	p, b, names := population(w)
	if p != 0 || b != target || len(names) != target {
		t.Fatalf("new world: players %d bots %d names %d, want 0, %d, %d", p, b, len(names), target, target)
	}
	for n := 1; n <= target; n++ {
		if !names[fmt.Sprint("bot", n)] {
			t.Fatalf("bot names %v, want bot1..bot%d", names, target)
		}
	}
	var ids []ID
	for n := 1; n <= sessions; n++ {
		id, err := w.Join(fmt.Sprint("p", n))
		if err != nil {
			t.Fatalf("join %d of %d: %v", n, sessions, err)
		}
		ids = append(ids, id)
		step()
		if p, b, _ := population(w); p != n || b != wantBots(n) {
			t.Fatalf("%d joined: players %d bots %d, want %d bots", n, p, b, wantBots(n))
		}
	}
	// Past the sessions the daemon allows, people still fit in the slots
	// the surplus bots left: ErrFull comes when players + floor fill
	// MaxSnakes.
	for n := sessions + 1; ; n++ {
		id, err := w.Join(fmt.Sprint("p", n))
		if errors.Is(err, ErrFull) {
			if n != sessions+target-floor+1 {
				t.Fatalf("join %d refused, want %d people to fit", n, sessions+target-floor)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		run(t, w, 1)
	}
	// Leaving: bots come back, at most 4 a tick.
	for len(ids) > 0 {
		k := min(7, len(ids))
		for _, id := range ids[:k] {
			w.Leave(id)
		}
		ids = ids[k:]
		_, before, _ := population(w)
		for {
			run(t, w, 1)
			p, b, names := population(w)
			if b-before > 4 || b < before { // the documented rate, not botFill, so a change to it shows
				t.Fatalf("bots %d -> %d in one tick", before, b)
			}
			if len(names) != b {
				t.Fatalf("bot names %v for %d bots", names, b)
			}
			if b == wantBots(p) {
				break
			}
			before = b
		}
	}
	_, b, names = population(w)
	if b != target {
		t.Fatalf("everyone left: %d bots, want %d", b, target)
	}
	for n := 1; n <= target; n++ {
		if !names[fmt.Sprint("bot", n)] {
			t.Fatalf("bot names %v, want the numbers reused: bot1..bot%d", names, target)
		}
	}
}

// TestPopulationWaiting checks that surplus bots waiting for a spawn step
// aside at once, without dying first.
func TestPopulationWaiting(t *testing.T) {
	w, err := New(Config{W: 256, H: 128, MaxSnakes: 40, Bots: 2, BotTarget: 20, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, slot := range w.botList { // every bot is dead and waits for a spawn
		die(w, int(slot))
		w.snakes[slot].wantLife = true
		w.spawnq = append(w.spawnq, slot)
	}
	for n := 0; n < 10; n++ {
		if _, err := w.Join(fmt.Sprint("p", n)); err != nil {
			t.Fatal(err)
		}
	}
	w.Step(w.tick + 1)
	if err := w.check(); err != nil {
		t.Fatal(err)
	}
	if _, b, _ := population(w); b != 10 {
		t.Fatalf("10 people joined 20 waiting bots: %d bots left, want 10", b)
	}
}

// TestPopulationUndersized checks a world whose MaxSnakes leaves no room
// for the bots on top of the people: a join that finds it full takes the
// slot of a bot above the floor, until only the floor is left.
func TestPopulationUndersized(t *testing.T) {
	const floor, target, max = 2, 10, 12
	w, err := New(Config{W: 256, H: 128, MaxSnakes: max, Bots: floor, BotTarget: target, Seed: 6})
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= max-floor; n++ {
		if _, err := w.Join(fmt.Sprint("p", n)); err != nil {
			t.Fatalf("join %d: %v", n, err)
		}
		run(t, w, 1)
		if p, b, names := population(w); p != n || p+b > max || b < floor || len(names) != b {
			t.Fatalf("%d joined: players %d bots %d names %v", n, p, b, names)
		}
	}
	if _, err := w.Join("more"); !errors.Is(err, ErrFull) {
		t.Fatalf("join with only the floor's bots: %v, want ErrFull", err)
	}
	if p, b, _ := population(w); p != max-floor || b != floor {
		t.Fatalf("players %d bots %d, want %d %d", p, b, max-floor, floor)
	}
}

// TestRetireUnseen checks that a live surplus bot leaves only where no
// player can see it: with the people all in one corner of a wide world,
// the bots far from them leave and the ones near them stay until they die.
func TestRetireUnseen(t *testing.T) {
	w, err := New(Config{W: 2048, H: 256, MaxSnakes: 60, Bots: 0, BotTarget: 30, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	run(t, w, 10)
	for n := 0; n < 20; n++ {
		if _, err := w.Join(fmt.Sprint("p", n)); err != nil {
			t.Fatal(err)
		}
	}
	retired := 0
	for tk := 0; tk < 300; tk++ {
		before := w.Acquire()
		w.Step(w.tick + 1)
		after := w.Acquire()
		for i, s := range before.Snakes {
			if !s.Bot || !s.Alive || i < len(after.Snakes) && after.Snakes[i].ID == s.ID {
				continue
			}
			retired++
			for j, o := range before.Snakes {
				sh, oh := before.Heads[i], before.Heads[j]
				if o.Used && !o.Bot && o.Alive && abs(off(oh.X-sh.X, w.w)) <= 160+s.Length && abs(off(oh.Y-sh.Y, w.h)) <= 96+s.Length {
					t.Fatalf("tick %d: bot %s at %v retired alive in sight of %s at %v", after.Tick, s.Name, sh, o.Name, oh)
				}
			}
		}
		before.Release()
		after.Release()
		if tk%25 == 0 {
			if err := w.check(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if retired == 0 {
		t.Fatal("no live bot was retired")
	}
	t.Logf("%d live bots retired out of sight", retired)
}

// TestAutoSize checks AutoSize's promises over a range of capacities.
func TestAutoSize(t *testing.T) {
	if w, h := AutoSize(3000); w != 2048 || h != 512 {
		t.Fatalf("AutoSize(3000) = %dx%d, want 2048x512 (the size the load figures were measured at)", w, h)
	}
	if w, h := AutoSize(0); w != 512 || h != 128 {
		t.Fatalf("AutoSize(0) = %dx%d, want the 512x128 minimum", w, h)
	}
	lastArea := 0
	for _, c := range []int{-5, 0, 1, 10, 100, 186, 187, 188, 200, 500, 999, 1000, 2999, 3000, 3001, 5000, 10000, 60000, 100000, 180000, MaxCapacity, 1 << 20, 1 << 30} {
		w, h := AutoSize(c)
		if w != 4*h || h%8 != 0 || h < 128 || w > MaxSide || w*h > MaxPixels || h < MinSide {
			t.Fatalf("AutoSize(%d) = %dx%d: want 4:1, height a multiple of 8, 512x128..%dx%d", c, w, h, MaxSide, MaxSide/4)
		}
		if w*h < lastArea {
			t.Fatalf("AutoSize(%d) = %dx%d is smaller than for fewer players", c, w, h)
		}
		lastArea = w * h
		if per := float64(w*h) / float64(c); c >= 200 && w < MaxSide && (per < 330 || per > 370) {
			t.Fatalf("AutoSize(%d) = %dx%d: %.0f pixels per player, want about 350", c, w, h, per)
		}
		if c >= 1 && c <= 10000 { // bigger worlds take a while to allocate
			if _, err := New(Config{W: w, H: h, MaxSnakes: c, Seed: 1}); err != nil {
				t.Fatalf("AutoSize(%d) = %dx%d: %v", c, w, h, err)
			}
		}
	}
}

// TestAutoBotTarget checks AutoBotTarget's density and bounds.
func TestAutoBotTarget(t *testing.T) {
	if n := AutoBotTarget(2048, 512); n != 512 {
		t.Fatalf("AutoBotTarget(2048, 512) = %d, want 512", n)
	}
	for _, c := range []int{0, 100, 3000, 60000} {
		w, h := AutoSize(c)
		n := AutoBotTarget(w, h)
		if n < 1 || n > MaxCapacity || n != w*h/PxPerSnake {
			t.Fatalf("AutoBotTarget(%d, %d) = %d, want one snake per %d pixels", w, h, n, PxPerSnake)
		}
		// an 80x44 screen's share of the world
		if per := float64(n) * 80 * 44 / float64(w*h); per < 1 || per > 3 {
			t.Fatalf("AutoBotTarget(%d, %d) = %d: %.2f snakes per screen if spread evenly", w, h, n, per)
		}
	}
	if AutoBotTarget(0, 512) != 0 || AutoBotTarget(-1, -1) != 0 || AutoBotTarget(MaxSide, MaxSide) > MaxCapacity {
		t.Fatal("AutoBotTarget out of bounds")
	}
}

// TestAutoDefaults keeps the benchmark's default-world row equal to what
// AutoSize and AutoBotTarget give for the daemon's 3,000 sessions.
func TestAutoDefaults(t *testing.T) {
	for _, c := range benchCases {
		if c.w == 0 {
			continue
		}
		w, h := AutoSize(3000)
		if c.w != w || c.h != h || c.target != AutoBotTarget(w, h) {
			t.Fatalf("bench case %s: want %dx%d, target %d", c.name(), w, h, AutoBotTarget(w, h))
		}
	}
}

// corner returns the pixels of a straight line from a to b and on to c
// (tail first), for bodies bent round a corner.
func corner(a, b, c Point) []Point {
	var ps []Point
	for _, seg := range [][2]Point{{a, b}, {b, c}} {
		p, q := seg[0], seg[1]
		dx, dy := sign(q.X-p.X), sign(q.Y-p.Y)
		for ; p != q; p = pt(p.X+dx, p.Y+dy) {
			ps = append(ps, p)
		}
	}
	return append(ps, c)
}

func sign(a int) int {
	switch {
	case a > 0:
		return 1
	case a < 0:
		return -1
	}
	return 0
}

// TestSpawnNear checks spawning near the action across the wrap edges:
// with one long snake bent round a corner of the world, a person's new
// head lands within 40 columns and 22 rows of that snake's head (on the
// torus: on the newcomer's first screen), mostly within the person's ring
// (at most 36 columns and 19 rows away, not within 20 columns and 11 rows
// at once), where the rule puts it when the random place it tried first
// was out of sight, often across an edge, and never within the spawn
// clearance of the other body (2 pixels beside or behind the new body, 4
// ahead of its head).
func TestSpawnNear(t *testing.T) {
	for _, c := range []struct {
		name string
		d    Dir
		body []Point
	}{
		{"top left", Up, corner(pt(30, 14), pt(0, 14), pt(0, 1))},
		{"bottom right", Down, corner(pt(220, 120), pt(254, 120), pt(254, 127))},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, err := New(Config{W: 256, H: 128, MaxSnakes: 4, Seed: 2, Fruit: 1})
			if err != nil {
				t.Fatal(err)
			}
			clear(w.grid)
			w.fruit, w.cfg.Fruit = 0, 0
			a := place(t, w, "a", c.d, c.body...)
			ah := c.body[len(c.body)-1]
			w.heads = append(w.heads[:0], w.snakes[a.Slot()].head) // as the last publish lists it
			w.near.index(w.heads)
			b, err := w.Join("b")
			if err != nil {
				t.Fatal(err)
			}
			w.drain(0)
			s := &w.snakes[b.Slot()]
			wrapped, inner := 0, 0
			for k := 0; k < 300; k++ {
				w.tick++ // the next tick's dice
				f := w.find(int32(b.Slot()))
				if !f.ok {
					t.Fatalf("spawn %d: no place found in an empty world", k)
				}
				w.place(int32(b.Slot()), &f)
				h := w.point(s.head)
				dx, dy := off(h.X-ah.X, w.w), off(h.Y-ah.Y, w.h)
				if abs(dx) > 40 || abs(dy) > 22 { // in sight
					t.Fatalf("spawn %d: head %v is %+d,%+d from the other head %v, want within 40,22", k, h, dx, dy, ah)
				}
				if abs(dx) < 20 && abs(dy) < 11 {
					inner++ // a random place that happened to be near
				}
				if h.X-ah.X != dx || h.Y-ah.Y != dy {
					wrapped++
				}
				ux, uy := delta(s.dir)
				for _, q := range c.body {
					ox, oy := off(q.X-h.X, w.w), off(q.Y-h.Y, w.h)
					ahead, side := ox*ux+oy*uy, abs(ox*uy+oy*ux)
					if side <= 2 && ahead <= 4 && ahead >= -(w.cfg.StartLen+1) {
						t.Fatalf("spawn %d: head %v heading %v, other body at %v is inside the clearance", k, h, s.dir, q)
					}
				}
				for j := 0; j < s.length; j++ { // take it away again
					w.set(s.at(j), 0)
				}
				s.alive, s.wantLife = false, true
			}
			if wrapped == 0 {
				t.Fatal("no spawn across an edge")
			}
			// A random place is inside the ring's hole (41x21 of a
			// 256x128 world) 1 time in 38, and tried first: about 8 of
			// 300, not the ring's share of the box.
			if inner > 30 {
				t.Fatalf("%d of 300 spawns within 20,11 of the other head: the ring is not used", inner)
			}
			t.Logf("%d of 300 spawns across an edge, %d in the ring's hole", wrapped, inner)
		})
	}
}
