package game

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestNearIndex compares nearIndex.has and scan with a look at every head, on
// worlds from smaller than one cell to many cells, with heads and queries
// on and around the wrap edges.
func TestNearIndex(t *testing.T) {
	for _, sz := range [][2]int{{16, 16}, {61, 34}, {100, 50}, {122, 68}, {150, 90}, {183, 102}, {256, 128}, {2048, 512}, {3744, 936}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			w, h := sz[0], sz[1]
			rng := rand.New(rand.NewPCG(uint64(w), uint64(h)))
			var n nearIndex
			n.init(w, h, 400)
			for round := 0; round < 20; round++ {
				heads := make([]int32, rng.IntN(40))
				for k := range heads {
					heads[k] = int32(rng.IntN(w * h))
				}
				n.index(heads)
				for q := 0; q < 500; q++ {
					x, y := rng.IntN(w), rng.IntN(h)
					if q%5 == 0 && len(heads) > 0 { // just inside or outside a head's box
						a := heads[rng.IntN(len(heads))]
						x = wrap(int(a)%w+nearFarX+rng.IntN(3)-1, w)
						y = wrap(int(a)/w-nearFarY+rng.IntN(3)-1, h)
					}
					count := 0
					for _, i := range heads {
						if abs(off(int(i)%w-x, w)) <= nearFarX && abs(off(int(i)/w-y, h)) <= nearFarY {
							count++
						}
					}
					if got := n.has(x, y, nearFarX, nearFarY); got != (count > 0) {
						t.Fatalf("round %d: has(%d, %d) = %v with heads %v, want %v", round, x, y, got, heads, count > 0)
					}
					if got := n.scan(x, y, nearFarX, nearFarY, true); got != count {
						t.Fatalf("round %d: scan(%d, %d) counts %d with heads %v, want %d", round, x, y, got, heads, count)
					}
				}
			}
		})
	}
}

// TestSpawnSpot checks the rule for where a spawn goes: a random place
// when a live head is within sight of it, the ring around a random head
// when none is (a person's ring, on the newcomer's first screen, or a
// bot's, reaching a screen and a half). With heads on a lattice close
// enough that every place has one in sight, no try uses a ring; with one
// head, the tries that do are those whose random place was out of its
// sight, and only the first nearTries tries.
func TestSpawnSpot(t *testing.T) {
	w, err := New(Config{W: 512, H: 128, MaxSnakes: 200, Seed: 3, Fruit: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.heads = w.heads[:0]
	for y := 0; y < w.h; y += 2 * sightY {
		for x := 0; x < w.w; x += 2 * sightX {
			w.heads = append(w.heads, int32(w.idx(x, y)))
		}
	}
	w.near.index(w.heads)
	r := w.dice(1)
	for k := 0; k < 1000; k++ {
		if _, _, ring := w.spawnSpot(&r, k%nearTries, k&1 == 0); ring {
			t.Fatalf("try %d: every place has a head in sight, but the spawn went to a ring", k)
		}
	}
	hx, hy := 300, 70
	w.heads = append(w.heads[:0], int32(w.idx(hx, hy)))
	w.near.index(w.heads)
	for _, bot := range []bool{false, true} {
		farX, farY := peopleFarX, peopleFarY
		if bot {
			farX, farY = nearFarX, nearFarY
		}
		rings, wide := 0, 0
		for k := 0; k < 1000; k++ {
			try := k % spawnTries
			x, y, ring := w.spawnSpot(&r, try, bot)
			dx, dy := abs(off(x-hx, w.w)), abs(off(y-hy, w.h))
			switch {
			case ring && try >= nearTries:
				t.Fatalf("bot %v: try %d went to the ring", bot, try)
			case ring && (dx > farX || dy > farY || dx < nearX && dy < nearY):
				t.Fatalf("bot %v: ring place %d,%d is %d,%d from the head, want within %d,%d and not %d,%d", bot, x, y, dx, dy, farX, farY, nearX, nearY)
			case !ring && try < nearTries && (dx > sightX || dy > sightY):
				t.Fatalf("bot %v: try %d: random place %d,%d is out of the head's sight (%d,%d) and was kept", bot, try, x, y, dx, dy)
			}
			if ring {
				rings++
				if dx > peopleFarX || dy > peopleFarY {
					wide++
				}
			}
		}
		// Out of sight: 1 - 81*45/(512*128) = 94 % of the first nearTries tries.
		if rings < 400 || rings > 500 {
			t.Fatalf("bot %v: %d of 500 near tries went to the ring, want about 470", bot, rings)
		}
		if bot && wide < rings/2 {
			t.Fatalf("%d of %d bots' ring places beyond a person's ring: the bots' ring is not used", wide, rings)
		}
	}
}

// TestSpawnsSpread: in a world at the automatic density, spawning near the
// action does not pile people onto each other for long. 500 scripted
// players join the default world (2048x512, 16 bots, no target: the
// population is the players) over 10 s, then play, die and respawn; from
// 80 to 120 s the mean number of other heads on a player's 80x24 screen
// stays within 25 % of what snakes spread evenly would put there
// (measured over seeds 1, 2, 3, 5, 7, 9: 1.05-1.22x; 1.4-1.8x from 20 to
// 60 s, while the snakes that joined a near-empty world next to each other
// drift apart). A coarse guard: TestSpawnSpot checks the rule itself.
func TestSpawnsSpread(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	w, err := New(Config{W: 2048, H: 512, MaxSnakes: 600, Bots: 16, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	p := &players{rng: rand.New(rand.NewPCG(5, 99))}
	var seen, alive, samples float64
	for k := 0; k < 1200; k++ {
		if len(p.ids) < 500 {
			for j := 0; j < 5; j++ {
				id, err := w.Join(fmt.Sprintf("p%d", len(p.ids)))
				if err != nil {
					t.Fatal(err)
				}
				p.ids = append(p.ids, id)
			}
		}
		p.act(w)
		w.Step(w.tick + 1)
		if k < 800 || k%10 != 0 {
			continue
		}
		v := w.Acquire()
		n := 0
		for i := range v.Snakes {
			if v.Snakes[i].Alive {
				n++
			}
		}
		for _, id := range p.ids {
			me, ok := v.Snake(id)
			if !ok || !me.Alive {
				continue
			}
			for i := range v.Snakes {
				if s := &v.Snakes[i]; s.Alive && i != id.Slot() && onScreen(v, v.Heads[id.Slot()], v.Heads[i]) {
					seen++
				}
			}
			alive += float64(n - 1)
			samples++
		}
		v.Release()
	}
	got := seen / samples
	even := alive / samples * screenW * screenH / float64(w.w*w.h)
	t.Logf("other heads on a player's screen: %.2f; spread evenly: %.2f (%.2fx)", got, even, got/even)
	if got > 1.25*even {
		t.Fatalf("%.2f other heads on a player's screen, %.2fx the even spread's %.2f: spawns pile up", got, got/even, even)
	}
}

// TestJoinNear checks that a JoinNear player's lives start on the screen
// of a live snake of its group (within a person's ring of its head, a
// start length back), far more often than a player of no group's do,
// that a try finds the one live mate among dead ones, and that leaving
// takes a snake out of its group.
func TestJoinNear(t *testing.T) {
	w, err := New(Config{W: 2048, H: 1024, MaxSnakes: 400, Bots: 100, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	// byGroup reports whether snake id is alive, and whether its head is
	// within a person's ring (a start length more) of a live snake of
	// group 7 other than itself.
	byGroup := func(id ID) (alive, near bool) {
		me := &w.snakes[id.Slot()]
		if !me.alive {
			return false, false
		}
		for _, o := range w.groups[7] {
			if s := &w.snakes[o]; int(o) != id.Slot() && s.alive &&
				abs(off(int(me.headX-s.headX), w.w)) <= peopleFarX+w.cfg.StartLen &&
				abs(off(int(me.headY-s.headY), w.h)) <= peopleFarY+w.cfg.StartLen {
				return true, true
			}
		}
		return true, false
	}
	first, _, err := w.JoinNear("first", 7)
	if err != nil {
		t.Fatal(err)
	}
	w.Step(w.tick + 1)
	if alive, _ := byGroup(first); !alive {
		t.Fatal("the group's first player did not spawn")
	}
	grouped, loose := 0, 0
	const n = 40
	for k := 0; k < n; k++ {
		id, _, err := w.JoinNear("", 7)
		if err != nil {
			t.Fatal(err)
		}
		other, _, err := w.JoinNear("", 0)
		if err != nil {
			t.Fatal(err)
		}
		w.Step(w.tick + 1)
		if _, near := byGroup(id); near {
			grouped++
		}
		if _, near := byGroup(other); near {
			loose++
		}
		w.Step(w.tick + 1)
	}
	t.Logf("by a group mate at their first spawn: %d of %d of the group, %d of %d of no group", grouped, n, loose, n)
	if grouped < n*9/10 || loose > n/2 {
		t.Fatalf("%d of %d group players and %d of %d players of no group spawned by a group mate; want at least 90 %% and at most half", grouped, n, loose, n)
	}
	if m := len(w.groups[7]); m != n+1 {
		t.Fatalf("group 7 has %d snakes, want %d", m, n+1)
	}
	w.Leave(first)
	w.Step(w.tick + 1)
	if m := len(w.groups[7]); m != n || slices.Contains(w.groups[7], int32(first.Slot())) {
		t.Fatalf("after a leave group 7 has %d snakes (want %d), the leaver among them: %v", m, n, slices.Contains(w.groups[7], int32(first.Slot())))
	}
	for k, o := range w.groups[7] {
		if w.groupAt[o] != int32(k) {
			t.Fatalf("slot %d is at %d of its group, its groupAt says %d", o, k, w.groupAt[o])
		}
	}
	// one live mate among dead ones: every grouped try finds it
	ids := make([]int32, 0, 10)
	for k := 0; k < 10; k++ {
		id, _, err := w.JoinNear("", 9)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, int32(id.Slot()))
	}
	w.Step(w.tick + 1)
	live := ids[9]
	if !w.snakes[live].alive {
		t.Fatal("group 9's last player did not spawn")
	}
	for _, o := range ids[:9] {
		w.snakes[o].alive = false // as if dead (no Step follows)
	}
	for k := 0; k < 20; k++ {
		r := w.dice(int32(k))
		x, y, ok := w.groupSpot(&r, 0, ids[k%9])
		if !ok || abs(off(x-int(w.snakes[live].headX), w.w)) > peopleFarX || abs(off(y-int(w.snakes[live].headY), w.h)) > peopleFarY {
			t.Fatalf("a grouped try with one live mate of ten: (%d, %d) ok %v, the mate's head at (%d, %d)", x, y, ok, w.snakes[live].headX, w.snakes[live].headY)
		}
	}
	if id, _, err := w.JoinNear("", MaxGroups+1); err != nil || w.box[id.Slot()].group != 0 {
		t.Fatalf("a group past MaxGroups: err %v, group %d; want no group", err, w.box[id.Slot()].group)
	}
}
