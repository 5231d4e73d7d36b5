package game

import (
	"fmt"
	"testing"
)

// bareBot returns a 16x16 world like bare's with one bot (the floor), not
// placed anywhere yet (see placeBot).
func bareBot(t *testing.T) (*World, ID) {
	t.Helper()
	w, err := New(Config{W: 16, H: 16, MaxSnakes: 8, Bots: 1, Seed: 1, StartLen: 2, Fruit: 1})
	if err != nil {
		t.Fatal(err)
	}
	clear(w.grid)
	w.fruit, w.cfg.Fruit = 0, 0
	return w, w.snakes[w.botList[0]].id
}

// placeBot gives bot id the body given (tail first) and direction, like
// place.
func placeBot(t *testing.T, w *World, id ID, d Dir, body ...Point) {
	t.Helper()
	s := &w.snakes[id.Slot()]
	if !s.bot || !s.alive {
		t.Fatalf("slot %d holds no live bot", id.Slot())
	}
	s.tail, s.length = 0, 0
	for k, p := range body {
		i := w.idx(p.X, p.Y)
		s.push(i, int32(int(i)%w.w), int32(int(i)/w.w))
		kind := Body
		if k == len(body)-1 {
			kind = Head
		}
		w.set(i, MakePixel(kind, id.Slot(), s.colour))
	}
	w.setDir(int32(id.Slot()), s, d)
	s.protectedUntil = 0
}

// kills returns a copy of the newest view's Kills.
func kills(w *World) []Kill {
	v := w.Acquire()
	defer v.Release()
	return append([]Kill(nil), v.Kills...)
}

// TestKills checks View.Kills for a credited kill, a death against one's
// own body and a head-on, and how long a death stays in the feed.
func TestKills(t *testing.T) {
	t.Run("credited", func(t *testing.T) {
		w := bare(t)
		a := place(t, w, "a", Right, pt(2, 2), pt(3, 2), pt(4, 2))
		b := place(t, w, "b", Down, pt(5, 0), pt(5, 1), pt(5, 2), pt(5, 3), pt(5, 4))
		run(t, w, 1)
		want := Kill{Tick: w.tick, Victim: "a", VictimSlot: a.Slot(), Length: 3,
			Killer: "b", KillerSlot: b.Slot(), At: pt(4, 2)}
		if got := kills(w); len(got) != 1 || got[0] != want {
			t.Fatalf("kills %+v, want [%+v]", got, want)
		}
	})
	t.Run("own body", func(t *testing.T) {
		w := bare(t)
		a := place(t, w, "a", Up, pt(3, 3), pt(4, 3), pt(5, 3), pt(5, 4), pt(4, 4))
		run(t, w, 1)
		want := Kill{Tick: w.tick, Victim: "a", VictimSlot: a.Slot(), Length: 5, KillerSlot: -1, At: pt(4, 4)}
		if got := kills(w); len(got) != 1 || got[0] != want {
			t.Fatalf("kills %+v, want [%+v]", got, want)
		}
	})
	t.Run("head-on", func(t *testing.T) {
		w := bare(t)
		a := place(t, w, "a", Right, pt(1, 5), pt(2, 5), pt(3, 5))
		b := place(t, w, "b", Left, pt(7, 5), pt(6, 5), pt(5, 5))
		run(t, w, 1)
		want := []Kill{
			{Tick: w.tick, Victim: "a", VictimSlot: a.Slot(), Length: 3, KillerSlot: -1, HeadOn: true, Other: "b", At: pt(3, 5)},
			{Tick: w.tick, Victim: "b", VictimSlot: b.Slot(), Length: 3, KillerSlot: -1, HeadOn: true, Other: "a", At: pt(5, 5)},
		}
		if got := kills(w); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("kills %+v, want %+v", got, want)
		}
	})
	t.Run("bot killer, window", func(t *testing.T) {
		w, b := bareBot(t)
		a := place(t, w, "a", Right, pt(2, 2), pt(3, 2), pt(4, 2))
		placeBot(t, w, b, Down, pt(5, 0), pt(5, 1), pt(5, 2), pt(5, 3), pt(5, 4))
		run(t, w, 1)
		died := w.tick
		mine := func() []Kill { // the bot may die later too
			var ks []Kill
			for _, k := range kills(w) {
				if k.VictimSlot == a.Slot() {
					ks = append(ks, k)
				}
			}
			return ks
		}
		if got := mine(); len(got) != 1 || !got[0].KillerBot || got[0].Killer != "bot1" || got[0].KillerSlot != b.Slot() {
			t.Fatalf("kills %+v, want a killed by bot1", got)
		}
		for w.tick < died+KillTicks-1 {
			run(t, w, 1)
			if got := mine(); len(got) != 1 || got[0].Tick != died {
				t.Fatalf("tick %d (death at %d): kills %+v", w.tick, died, got)
			}
		}
		run(t, w, 1) // KillTicks after the death
		if got := mine(); len(got) != 0 {
			t.Fatalf("tick %d (death at %d): kills %+v, want none", w.tick, died, got)
		}
	})
}

// TestKillsBound has MaxKills+6 snakes run into one wall in one tick, and
// then one more die a tick later: the feed keeps the newest MaxKills,
// oldest first.
func TestKillsBound(t *testing.T) {
	const n = MaxKills + 6
	w, err := New(Config{W: 128, H: 128, MaxSnakes: n + 2, Seed: 1, StartLen: 2, Fruit: 1})
	if err != nil {
		t.Fatal(err)
	}
	clear(w.grid)
	w.fruit, w.cfg.Fruit = 0, 0
	wall := make([]Point, n+2)
	for y := range wall {
		wall[y] = pt(10, y)
	}
	wl := place(t, w, "wall", Down, wall...)
	w.snakes[wl.Slot()].grow = 5 // its tail stays put
	for k := 0; k < n; k++ {
		place(t, w, fmt.Sprint("v", k), Right, pt(8, k), pt(9, k))
	}
	late := place(t, w, "late", Right, pt(7, n), pt(8, n))
	run(t, w, 1)
	got := kills(w)
	if len(got) != MaxKills {
		t.Fatalf("%d kills in the feed, want %d", len(got), MaxKills)
	}
	for k, x := range got {
		if want := fmt.Sprint("v", k+n-MaxKills); x.Victim != want || x.Killer != "wall" {
			t.Fatalf("kill %d: %+v, want %s killed by wall", k, x, want)
		}
	}
	run(t, w, 1)
	got = kills(w)
	if len(got) != MaxKills || got[MaxKills-1].VictimSlot != late.Slot() || got[0].Victim != fmt.Sprint("v", n-MaxKills+1) {
		t.Fatalf("after one more death: %d kills, first %+v, last %+v", len(got), got[0], got[len(got)-1])
	}
	for k := 1; k < len(got); k++ {
		if got[k].Tick < got[k-1].Tick {
			t.Fatalf("kills not oldest first: %+v", got)
		}
	}
}
