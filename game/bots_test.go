package game

import (
	"math/rand/v2"
	"testing"
)

// TestBotDecide checks the bot policy on hand-built scenes: it never turns
// into a body, steers towards its fruit, and two bots never reserve the
// same pixel.
func TestBotDecide(t *testing.T) {
	bot := func(w *World, id ID) *snake {
		s := &w.snakes[id.Slot()]
		s.bot = true
		s.tx, s.ty = -1, -1
		return s
	}
	t.Run("body ahead: turns to the free side", func(t *testing.T) {
		for seed := uint64(1); seed <= 20; seed++ {
			w := bare(t)
			w.rng = rand.New(rand.NewPCG(seed, seed))
			b := place(t, w, "b", Right, pt(1, 8), pt(2, 8), pt(3, 8))
			place(t, w, "wall", Down, pt(4, 6), pt(4, 7), pt(4, 8), pt(4, 9), pt(4, 10))
			place(t, w, "up", Right, pt(2, 7), pt(3, 7)) // blocks the left turn
			bot(w, b)
			w.Step(w.tick + 1)
			if s := info(t, w, b); !s.Alive || s.Head != pt(3, 9) || s.Dir != Down {
				t.Fatalf("seed %d: alive=%v head=%v dir=%v, want alive at (3,9) heading down", seed, s.Alive, s.Head, s.Dir)
			}
		}
	})
	t.Run("steers to its fruit", func(t *testing.T) {
		w := bare(t)
		b := place(t, w, "b", Right, pt(1, 8), pt(2, 8), pt(3, 8))
		s := bot(w, b)
		s.tx, s.ty = 3, 2
		fruitAt(w, 3, 2)
		w.Step(w.tick + 1)
		if si := info(t, w, b); si.Head != pt(3, 7) || si.Dir != Up {
			t.Fatalf("head=%v dir=%v, want (3,7) heading up", si.Head, si.Dir)
		}
	})
	t.Run("two bots never reserve one pixel", func(t *testing.T) {
		for seed := uint64(1); seed <= 20; seed++ {
			w := bare(t)
			w.rng = rand.New(rand.NewPCG(seed, seed))
			a := place(t, w, "a", Right, pt(1, 8), pt(2, 8), pt(3, 8))
			c := place(t, w, "c", Left, pt(7, 8), pt(6, 8), pt(5, 8))
			bot(w, a)
			bot(w, c)
			w.Step(w.tick + 1)
			sa, sc := info(t, w, a), info(t, w, c)
			if !sa.Alive || !sc.Alive || sa.Head == sc.Head {
				t.Fatalf("seed %d: a %v %v, c %v %v: want both alive on different pixels", seed, sa.Alive, sa.Head, sc.Alive, sc.Head)
			}
		}
	})
}
