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
		s.targetX, s.targetY = -1, -1
		return s
	}
	t.Run("body ahead: turns to the free side", func(t *testing.T) {
		for seed := uint64(1); seed <= 20; seed++ {
			w := bare(t)
			w.rng, w.cfg.Seed = rand.New(rand.NewPCG(seed, seed)), seed
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
		s.targetX, s.targetY = 3, 2
		fruitAt(w, 3, 2)
		w.Step(w.tick + 1)
		if si := info(t, w, b); si.Head != pt(3, 7) || si.Dir != Up {
			t.Fatalf("head=%v dir=%v, want (3,7) heading up", si.Head, si.Dir)
		}
	})
	t.Run("two bots never reserve one pixel", func(t *testing.T) {
		for seed := uint64(1); seed <= 20; seed++ {
			w := bare(t)
			w.rng, w.cfg.Seed = rand.New(rand.NewPCG(seed, seed)), seed
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

// wallAt puts body pixels of an absent snake at ps (bots see bodies, not
// owners); the world no longer passes check afterwards.
func wallAt(w *World, ps ...Point) {
	for _, p := range ps {
		w.set(w.idx(p.X, p.Y), MakePixel(Body, 7, 1))
	}
}

// botStep steps the world once and returns the bot's new head, direction
// and whether it dashed.
func botStep(t *testing.T, w *World, id ID) (Point, Dir, bool) {
	t.Helper()
	s := &w.snakes[id.Slot()]
	at := s.dashReadyAt
	w.Step(w.tick + 1)
	if !s.alive {
		t.Fatalf("the bot died")
	}
	return w.point(s.head), s.dir, s.dashReadyAt != at
}

// TestBotLooksAhead checks the parts of the policy beyond the next pixel:
// a body 3 pixels ahead turns a bot now; a pixel another head heads for
// this tick is avoided; cornered, a bot takes the way with more room; a
// bold bot cuts a rival off and dashes towards fruit straight ahead.
func TestBotLooksAhead(t *testing.T) {
	t.Run("wall 3 ahead", func(t *testing.T) {
		w, b := bareBot(t)
		placeBot(t, w, b, Right, pt(1, 8), pt(2, 8), pt(3, 8))
		wallAt(w, pt(6, 6), pt(6, 7), pt(6, 8), pt(6, 9), pt(6, 10))
		if h, d, _ := botStep(t, w, b); d == Right {
			t.Fatalf("head %v heading %v: went on towards the wall 3 pixels ahead", h, d)
		}
	})
	t.Run("another head's pixel", func(t *testing.T) {
		// the player's slot comes before the bot's, so it aims first
		w, b := bareBot(t)
		w.mu.Lock()
		w.retire(int32(b.Slot()))
		w.mu.Unlock()
		p := place(t, w, "p", Down, pt(5, 5), pt(5, 6), pt(5, 7))
		w.mu.Lock()
		w.addBot()
		w.mu.Unlock()
		w.spawnq = w.spawnq[:0]
		b = w.snakes[w.botList[0]].id
		if b.Slot() <= p.Slot() {
			t.Fatalf("bot slot %d, player slot %d", b.Slot(), p.Slot())
		}
		s := &w.snakes[b.Slot()]
		s.alive = true
		placeBot(t, w, b, Right, pt(2, 8), pt(3, 8), pt(4, 8))
		if h, d, _ := botStep(t, w, b); h == pt(5, 8) {
			t.Fatalf("head %v heading %v: went for the pixel the player's head entered", h, d)
		}
	})
	t.Run("cornered: more room", func(t *testing.T) {
		w, b := bareBot(t)
		placeBot(t, w, b, Right, pt(3, 8), pt(4, 8), pt(5, 8))
		// straight: blocked 2 ahead; up: 2 free, then a way out into a
		// pocket of 1; down: 2 free, then a way out into open space.
		wallAt(w, pt(7, 8), pt(4, 7), pt(6, 7), pt(5, 5), pt(6, 6), pt(3, 6), pt(4, 5), pt(6, 9), pt(5, 11), pt(6, 10))
		if h, d, _ := botStep(t, w, b); d != Down {
			t.Fatalf("head %v heading %v, want down, where there is room", h, d)
		}
	})
	t.Run("cut-off", func(t *testing.T) {
		w, b := bareBot(t)
		placeBot(t, w, b, Right, pt(4, 8), pt(5, 8), pt(6, 8))
		r := place(t, w, "r", Right, pt(1, 9), pt(2, 9), pt(3, 9)) // 3 behind, 1 lane below
		s := &w.snakes[b.Slot()]
		s.bold, s.rival, s.dashReadyAt = true, int32(r.Slot()), 1<<40
		if h, d, _ := botStep(t, w, b); d != Down || h != pt(6, 9) {
			t.Fatalf("head %v heading %v, want (6,9) heading down across the rival's lane", h, d)
		}
		for k := 0; k < 4 && info(t, w, r).Alive; k++ {
			w.Step(w.tick + 1) // the rival runs on into the bot's body
		}
		if si := info(t, w, r); si.Alive || si.KilledBy != "bot1" {
			t.Fatalf("rival alive=%v killed by %q, want cut off by bot1", si.Alive, si.KilledBy)
		}
	})
	t.Run("dash to fruit", func(t *testing.T) {
		dashed := 0
		for seed := uint64(1); seed <= 20; seed++ {
			w, b := bareBot(t)
			w.rng, w.cfg.Seed = rand.New(rand.NewPCG(seed, seed)), seed
			placeBot(t, w, b, Right, pt(1, 8), pt(2, 8), pt(3, 8))
			fruitAt(w, 7, 8)
			s := &w.snakes[b.Slot()]
			s.bold, s.targetX, s.targetY = true, 7, 8
			if h, _, dash := botStep(t, w, b); dash {
				dashed++
				if h != pt(6, 8) {
					t.Fatalf("seed %d: dashed to %v, want (6,8)", seed, h)
				}
			}
		}
		if dashed == 0 || dashed == 20 {
			t.Fatalf("dashed towards fruit in %d of 20 seeds: want sometimes", dashed)
		}
		w, b := bareBot(t) // never into a body
		placeBot(t, w, b, Right, pt(1, 8), pt(2, 8), pt(3, 8))
		wallAt(w, pt(7, 7), pt(7, 8), pt(7, 9))
		fruitAt(w, 6, 8)
		s := &w.snakes[b.Slot()]
		s.bold, s.targetX, s.targetY = true, 6, 8
		for k := 0; k < 20; k++ {
			if _, _, dash := botStep(t, w, b); dash {
				t.Fatal("dashed with a body 4 pixels ahead")
			}
			if s.dashReadyAt > 0 || s.headX > 4 {
				break
			}
		}
	})
}
