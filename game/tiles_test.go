package game

import (
	"math/rand/v2"
	"testing"
)

// look is what a reader draws for pixel p of v: the Pixel plus whether a
// body pixel is spawn-protected.
func look(v *View, p Pixel) uint32 {
	l := uint32(p)
	if p.Kind() == Body && v.Tick < v.Snakes[p.Slot()].ProtectedUntil {
		l |= 1 << 31
	}
	return l
}

// TestDirtyTiles checks View.Dirty against snapshots of earlier ticks: every
// tile whose look changed since tick t has Dirty > t, and View.Fresh holds
// every tile whose look changed since the tick before and only tiles with
// Dirty at the view's tick, on every view a reader gets, while readers hold views for a while (so buffers lag, skip
// publishes and get fully copied).
func TestDirtyTiles(t *testing.T) {
	cfg := DefaultConfig()
	cfg.W, cfg.H, cfg.MaxSnakes, cfg.Bots, cfg.Seed = 100, 60, 40, 12, 5 // W, H not tile multiples
	cfg.Protect, cfg.StartLen = 7, 14
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	type snap struct {
		tick  uint64
		looks []uint32
	}
	var hist []snap
	var held []*View
	tw, fw := TilesW(cfg.W), FreshWords(cfg.W)
	marked, checked, freshChecked := 0, 0, 0
	for tk := 0; tk < 1500; tk++ {
		script(t, w, uint64(tk), 1, false)
		v := w.Acquire()
		if len(v.Dirty) != tw*TilesH(cfg.H) {
			t.Fatalf("len(Dirty) %d", len(v.Dirty))
		}
		cur := make([]uint32, len(v.Pix))
		for i, p := range v.Pix {
			cur[i] = look(v, p)
		}
		for _, h := range hist {
			for i := range cur {
				if cur[i] == h.looks[i] {
					continue
				}
				checked++
				x, y := i%cfg.W, i/cfg.W
				if d := v.Dirty[y/TileH*tw+x/TileW]; d <= h.tick {
					t.Fatalf("tick %d: pixel %d,%d changed since tick %d but its tile is dirty at %d", v.Tick, x, y, h.tick, d)
				}
				if tx, ty := x/TileW, y/TileH; h.tick == v.Tick-1 && v.Fresh[ty*fw+tx/64]>>(tx%64)&1 == 0 {
					t.Fatalf("tick %d: pixel %d,%d changed since tick %d but its tile is not Fresh", v.Tick, x, y, h.tick)
				}
				if h.tick == v.Tick-1 {
					freshChecked++
				}
			}
		}
		for i, d := range v.Dirty {
			if d > v.Tick {
				t.Fatalf("tick %d: a tile is dirty in the future (%d)", v.Tick, d)
			}
			if d == v.Tick {
				marked++
			}
			tx, ty := i%tw, i/tw
			if v.Fresh[ty*fw+tx/64]>>(tx%64)&1 == 1 && d != v.Tick {
				t.Fatalf("tick %d: tile %d,%d is Fresh but has Dirty %d", v.Tick, tx, ty, d)
			}
		}
		for i := range v.Snakes {
			if v.Shielded(i) != (v.Tick < v.Snakes[i].ProtectedUntil) {
				t.Fatalf("tick %d: slot %d protected until %d, Shielded %v", v.Tick, i, v.Snakes[i].ProtectedUntil, v.Shielded(i))
			}
		}
		for ty := range TilesH(cfg.H) {
			if pad := v.Fresh[ty*fw+fw-1] >> (tw % 64); tw%64 != 0 && pad != 0 {
				t.Fatalf("tick %d: Fresh has bits past row %d's last tile: %b", v.Tick, ty, pad)
			}
		}
		hist = append(hist, snap{v.Tick, cur})
		if len(hist) > 20 {
			hist = hist[1:]
		}
		if rng.IntN(3) == 0 {
			held = append(held, v)
		} else {
			v.Release()
		}
		for len(held) > 0 && (len(held) > 9 || rng.IntN(8) == 0) {
			held[0].Release()
			held = held[1:]
		}
	}
	if checked == 0 || marked == 0 || freshChecked == 0 {
		t.Fatalf("nothing checked (%d changes, %d marks, %d against the tick before)", checked, marked, freshChecked)
	}
	// Not everything is dirty every tick: the marks follow the changes.
	v := w.Acquire()
	defer v.Release()
	n := 0
	for _, d := range v.Dirty {
		if d == v.Tick {
			n++
		}
	}
	if n == len(v.Dirty) {
		t.Fatalf("every tile dirty at tick %d", v.Tick)
	}
}

// TestRecip checks the division-free i/w of View.apply at every width
// Config allows, on the indices where rounding would first go wrong: the
// ends of rows, the first pixels of rows, and the largest index.
func TestRecip(t *testing.T) {
	for w := 16; w <= 1<<14; w++ {
		inv := recip(w)
		h := min(1<<14, (1<<26)/w)
		for _, y := range []int{0, 1, h / 2, h - 1} {
			for _, i := range []int{y * w, y*w + w - 1} {
				if got := int(uint64(i) * inv >> recipShift); got != i/w {
					t.Fatalf("w=%d i=%d: got %d, want %d", w, i, got, i/w)
				}
			}
		}
	}
}
