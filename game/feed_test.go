package game

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// churn is a world stepped with bots and scripted players, some leaving
// and others joining.
type churn struct {
	w   *World
	p   *players
	rng *rand.Rand
}

func newChurn(t testing.TB, seed uint64, w, h, people int) *churn {
	t.Helper()
	world, err := New(Config{W: w, H: h, MaxSnakes: people + 40, Bots: 8, BotTarget: people/2 + 20, Seed: seed, StartLen: 6})
	if err != nil {
		t.Fatal(err)
	}
	c := &churn{w: world, p: &players{rng: rand.New(rand.NewPCG(seed, 3))}, rng: rand.New(rand.NewPCG(seed, 4))}
	for k := 0; k < people; k++ {
		id, err := world.Join(fmt.Sprintf("p%d", k))
		if err != nil {
			t.Fatal(err)
		}
		c.p.ids = append(c.p.ids, id)
	}
	return c
}

// step steps the world once, with the script and some leaves and joins.
func (c *churn) step() {
	c.p.act(c.w)
	if len(c.p.ids) > 0 && c.rng.IntN(20) == 0 {
		k := c.rng.IntN(len(c.p.ids))
		c.w.Leave(c.p.ids[k])
		c.p.ids = slices.Delete(c.p.ids, k, k+1)
	}
	if c.rng.IntN(20) == 0 {
		if id, err := c.w.Join(fmt.Sprintf("n%d", c.rng.IntN(1000))); err == nil {
			c.p.ids = append(c.p.ids, id)
		}
	}
	c.w.Step(c.w.tick + 1)
}

// recordField names the group of a SnakeInfo field, as a change of it
// must be marked: "quick" for Dir, Length and BestLength, "" for what no
// mark covers (the head, which moves with the writes, and the rank, which
// is a view's).
func recordField(name string) string {
	switch name {
	case "Dir", "Length", "BestLength":
		return "quick"
	case "Head", "Rank":
		return ""
	case "Colour", "Used", "Alive", "Bot":
		return "flags"
	}
	return name
}

// TestMarksCover: after every Step, each slot whose record changed other
// than in its head is marked in that step's bitsets (a reader of the feed
// visits only those; quick when only dir, length and best length changed;
// a turn needs none when the snake then moved that way, as the move's
// write says), through turns, dashes, growth, kills, deaths, respawns,
// joins, leaves and bots coming and going; Shape agrees with Record; the
// feed keeps the last logN steps; and a snake's head index, column and
// row agree with the end of its body.
func TestMarksCover(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		c := newChurn(t, seed, 128, 64, 40)
		w, f := c.w, c.w.Feed()
		prev := make([]Record, f.Capacity())
		for i := range prev {
			prev[i] = f.Record(i)
			prev[i].Head = Point{}
		}
		changed := map[string]int{}
		for k := 0; k < 600; k++ {
			c.step()
			step := f.Steps()
			if !f.Kept(step) || f.Kept(step+1) || step >= logN && (!f.Kept(step-logN+1) || f.Kept(step-logN)) {
				t.Fatalf("step %d: kept %v %v %v %v", step, f.Kept(step), f.Kept(step+1), f.Kept(step-logN+1), f.Kept(step-logN))
			}
			full, quick := f.Marked(step)
			marked := func(set []uint64, i int) bool { return set[i>>6]>>(i&63)&1 != 0 }
			for i := 0; i < f.Slots(); i++ {
				if s := &w.snakes[i]; s.length > 0 && (s.head != s.at(s.length-1) || w.point(s.head) != (Point{int(s.headX), int(s.headY)})) {
					t.Fatalf("seed %d tick %d: slot %d: head %d at (%d,%d), body ends at %d", seed, w.tick, i, s.head, s.headX, s.headY, s.at(s.length-1))
				}
				cur := f.Record(i)
				if sh := f.Shape(i); sh != (Shape{cur.Length, cur.Dir, cur.MoveDir, cur.MoveStep}) {
					t.Fatalf("seed %d tick %d: slot %d: shape %+v, record %+v", seed, w.tick, i, sh, cur)
				}
				cur.Head = Point{}
				groups := map[string]bool{}
				a, b := reflect.ValueOf(prev[i].SnakeInfo), reflect.ValueOf(cur.SnakeInfo)
				for j := range a.NumField() {
					if g := recordField(a.Type().Field(j).Name); g != "" && a.Field(j).Interface() != b.Field(j).Interface() {
						groups[g] = true
						changed[a.Type().Field(j).Name]++
					}
				}
				if cur.Dir != prev[i].Dir { // the record's, beside its SnakeInfo
					groups[recordField("Dir")] = true
					changed["Dir"]++
				}
				if cur.Dir != prev[i].Dir && cur.MoveStep == uint32(step) && cur.MoveDir == cur.Dir &&
					cur.Length == prev[i].Length && cur.BestLength == prev[i].BestLength {
					delete(groups, "quick") // the move's write carries the turn
				}
				slow := len(groups) > 1 || len(groups) == 1 && !groups["quick"]
				if len(groups) > 0 && !marked(full, i) && (slow || !marked(quick, i)) {
					t.Fatalf("seed %d tick %d: slot %d changed (%v) unmarked: %+v -> %+v", seed, w.tick, i, groups, prev[i], cur)
				}
				prev[i] = cur
			}
			for k, x := range full {
				if x|quick[k] != 0 && k*64+63-bits.LeadingZeros64(x|quick[k]) >= f.Slots() {
					t.Fatalf("seed %d tick %d: a slot at or past %d marked", seed, w.tick, f.Slots())
				}
			}
		}
		for _, name := range []string{"ID", "Name", "Colour", "Used", "Alive", "Bot", "Dir", "Length", "Kills",
			"SpawnTick", "DeathTick", "ProtectedUntil", "DashReadyAt", "KilledBy", "BestLength"} {
			if changed[name] == 0 {
				t.Errorf("seed %d: %s never changed: the test does not cover it", seed, name)
			}
		}
	}
}

// TestFeedWrites: replaying each step's writes, in order, on the grid
// before it gives the grid after it; a move is a Body write with the
// move's direction at the snake's old head, then its Head one pixel on;
// the deaths the feed counts are the world's kill feed.
func TestFeedWrites(t *testing.T) {
	c := newChurn(t, 4, 128, 64, 30)
	f := c.w.Feed()
	grid := slices.Clone(f.Pixels())
	moves := 0
	for range 300 {
		before := f.Deaths()
		c.step()
		log := f.Writes(f.Steps())
		for k, x := range log {
			grid[x.Index()] = x.Pixel()
			if d := x.Dir(); d != None {
				moves++
				if x.Pixel().Kind() != Body || k+1 == len(log) {
					t.Fatalf("tick %d: write %d with dir %d: %x", f.Tick(), k, d, x.Pixel())
				}
				h := log[k+1]
				dx, dy := delta(d)
				want := c.w.idx(x.Index()%c.w.w+dx, x.Index()/c.w.w+dy)
				if h.Pixel() != MakePixel(Head, x.Pixel().Slot(), x.Pixel().Colour()) || h.Index() != int(want) || h.Dir() != None {
					t.Fatalf("tick %d: move of slot %d to %d: head write %d %x", f.Tick(), x.Pixel().Slot(), want, h.Index(), h.Pixel())
				}
			}
		}
		if !slices.Equal(grid, f.Pixels()) {
			t.Fatalf("tick %d: the writes replayed differ from the grid", f.Tick())
		}
		v := c.w.Acquire()
		for k := before; k < f.Deaths(); k++ {
			if d := f.Death(k); d.Tick != f.Tick() || !slices.Contains(v.Kills, d) {
				t.Fatalf("tick %d: death %d %+v not in the view's kills", f.Tick(), k, d)
			}
		}
		v.Release()
	}
	if moves == 0 {
		t.Fatal("no moves")
	}
}
