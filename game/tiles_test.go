package game

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
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
	cfg.W, cfg.H, cfg.MaxSnakes, cfg.Bots, cfg.Seed = 100, 61, 40, 12, 5 // W, H not tile multiples
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
	marked, checked, freshChecked, cellChecked, indexed := 0, 0, 0, 0, 0
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
					if len(v.FreshAt) > 0 {
						if !inFreshX(v, x, y) {
							t.Fatalf("tick %d: pixel %d,%d changed since tick %d but is not in FreshX", v.Tick, x, y, h.tick)
						}
						cellChecked++
					}
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
		if len(v.FreshAt) > 0 {
			indexed++
			if err := freshXShape(v); err != nil {
				t.Fatal(err)
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
	if checked == 0 || marked == 0 || freshChecked == 0 || cellChecked == 0 || indexed < 100 {
		t.Fatalf("nothing checked (%d changes, %d marks, %d against the tick before, %d of them against FreshX; %d of 1500 views indexed)",
			checked, marked, freshChecked, cellChecked, indexed)
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

// TestRecip checks the division-free i/w of View.apply and Rows.XY at
// every width Config allows, and every narrower width of a rectangle as
// tall as a world may be (a region's), on the indices where rounding would
// first go wrong: the ends of rows, the first pixels of rows, and the
// largest index.
func TestRecip(t *testing.T) {
	for w := 1; w <= MaxSide; w++ {
		inv, rows := recip(w), NewRows(w)
		h := min(MaxSide, MaxPixels/w)
		for _, y := range []int{0, 1, h / 2, h - 1} {
			for _, i := range []int{y * w, y*w + w - 1} {
				if got := int(uint64(i) * inv >> recipShift); got != i/w {
					t.Fatalf("w=%d i=%d: got %d, want %d", w, i, got, i/w)
				}
				if x, y := rows.XY(i); x != i%w || y != i/w {
					t.Fatalf("w=%d i=%d: XY gives %d, %d, want %d, %d", w, i, x, y, i%w, i/w)
				}
			}
		}
	}
}

// freshXShape checks the shape of v's cell index: one offset a tile row
// and one more, ascending; each row's columns ascending, unique, within the
// world, each in a Fresh tile, with its pixels in FreshPix; FreshBlk's
// entries the first column of each block.
func freshXShape(v *View) error {
	th, fw, nb := TilesH(v.H), FreshWords(v.W), FreshBlocks(v.W)
	if len(v.FreshAt) != th+1 || v.FreshAt[0] != 0 || int(v.FreshAt[th]) != len(v.FreshX) || len(v.FreshPix) != 2*len(v.FreshX) {
		return fmt.Errorf("tick %d: FreshAt has %d offsets (want %d), first %d, last %d of %d columns",
			v.Tick, len(v.FreshAt), th+1, v.FreshAt[0], v.FreshAt[len(v.FreshAt)-1], len(v.FreshX))
	}
	if len(v.FreshBlk) != th*nb {
		return fmt.Errorf("tick %d: FreshBlk has %d entries, want %d", v.Tick, len(v.FreshBlk), th*nb)
	}
	for ty := range th {
		row := v.FreshX[v.FreshAt[ty]:v.FreshAt[ty+1]]
		for b := range nb {
			want := int(v.FreshAt[ty]) + sort.Search(len(row), func(i int) bool { return int(row[i]) >= b*FreshBlock })
			if got := int(v.FreshBlk[ty*nb+b]); got != want {
				return fmt.Errorf("tick %d: tile row %d block %d starts at %d in FreshX, want %d (columns %v)", v.Tick, ty, b, got, want, row)
			}
		}
		for i, x := range row {
			if i > 0 && x <= row[i-1] || int(x) >= v.W {
				return fmt.Errorf("tick %d: tile row %d columns %v not ascending and within the world", v.Tick, ty, row)
			}
			if tx := int(x) / TileW; v.Fresh[ty*fw+tx/64]>>(tx%64)&1 == 0 {
				return fmt.Errorf("tick %d: column %d of tile row %d is in FreshX but its tile is not Fresh", v.Tick, x, ty)
			}
			k := int(v.FreshAt[ty]) + i
			var bot Pixel
			if y := ty*TileH + 1; y < v.H {
				bot = v.Pix[y*v.W+int(x)]
			}
			if top := v.Pix[ty*TileH*v.W+int(x)]; v.FreshPix[2*k] != top || v.FreshPix[2*k+1] != bot {
				return fmt.Errorf("tick %d: column %d of tile row %d: FreshPix %x/%x, Pix %x/%x", v.Tick, x, ty, v.FreshPix[2*k], v.FreshPix[2*k+1], top, bot)
			}
		}
	}
	return nil
}

// inFreshX reports whether pixel (x, y) is in v's cell index.
func inFreshX(v *View, x, y int) bool {
	_, ok := slices.BinarySearch(v.FreshX[v.FreshAt[y/TileH]:v.FreshAt[y/TileH+1]], uint16(x))
	return ok
}
