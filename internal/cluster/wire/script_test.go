package wire

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"snaked/game"
)

// players is a seeded script standing in for people, the same as game's
// tests use (the worlds the wire's tests and benchmarks encode are theirs,
// step for step). Each tick a player presses a random arrow key with
// probability 1/10 (about one key a second; not into a snake next to its
// head) and dashes with probability 1/150. Half the time it turns towards
// fruit within 3 pixels to its left or right. When the pixel ahead of its
// head holds a body it sidesteps (to a free side if there is one) with
// probability 0.95. It asks to respawn 2 s after dying.
type players struct {
	ids []game.ID
	rng *rand.Rand
}

func (p *players) act(w *game.World) {
	v := w.Acquire()
	g := grid{w.Feed().Pixels(), v.W, v.H} // the world's pixels: a lazy world's views may carry none
	for _, id := range p.ids {
		s, ok := v.Snake(id)
		if !ok {
			continue
		}
		head, dir := v.Heads[id.Slot()], w.Feed().Dir(id.Slot())
		if !s.Alive {
			if v.Tick >= s.DeathTick+2*game.TicksPerSecond {
				w.Respawn(id)
			}
			continue
		}
		r := p.rng.IntN(1200)
		if blocked(g, head, dir) && r < 1140 {
			d := left(dir)
			if r&1 == 0 {
				d = right(dir)
			}
			if blocked(g, head, d) {
				d = reverse(d)
			}
			w.Turn(id, d)
			continue
		}
		if r < 600 {
			if d := fruitSide(g, head, dir); d != game.None {
				w.Turn(id, d)
				continue
			}
		}
		switch {
		case r < 120:
			if d := game.Dir(1 + r%4); !blocked(g, head, d) {
				w.Turn(id, d)
			}
		case r < 128:
			w.Dash(id)
		}
	}
	v.Release()
}

func reverse(d game.Dir) game.Dir {
	switch d {
	case game.Up:
		return game.Down
	case game.Down:
		return game.Up
	case game.Left:
		return game.Right
	case game.Right:
		return game.Left
	}
	return game.None
}

func left(d game.Dir) game.Dir {
	switch d {
	case game.Up:
		return game.Left
	case game.Left:
		return game.Down
	case game.Down:
		return game.Right
	}
	return game.Up
}

func right(d game.Dir) game.Dir { return reverse(left(d)) }

func delta(d game.Dir) (int, int) {
	switch d {
	case game.Up:
		return 0, -1
	case game.Down:
		return 0, 1
	case game.Left:
		return -1, 0
	}
	return 1, 0
}

// fruitSide returns the side (left or right of d) with fruit within 3
// pixels of h, or None.
func fruitSide(v grid, h game.Point, d game.Dir) game.Dir {
	for k := 1; k <= 3; k++ {
		for _, t := range [2]game.Dir{left(d), right(d)} {
			dx, dy := delta(t)
			if v.At(h.X+k*dx, h.Y+k*dy).Kind() == game.Fruit {
				return t
			}
		}
	}
	return game.None
}

// blocked reports whether the pixel next to h in direction d holds a snake.
func blocked(v grid, h game.Point, d game.Dir) bool {
	dx, dy := delta(d)
	return v.At(h.X+dx, h.Y+dy).Kind() >= game.Body
}

// benchCase is one of the worlds of game's BenchmarkStep: n snakes, all
// bots or all players, on area times the default density's area (about
// 256 pixels per snake); or, when w > 0, n players on a w x h world with
// bots (floor) and target (Config.BotTarget).
type benchCase struct {
	bots    bool
	n, area int

	w, h, floor, target int
}

func (c benchCase) name() string {
	kind := "players"
	if c.bots {
		kind = "bots"
	}
	s := fmt.Sprintf("%s=%d", kind, c.n)
	if c.w > 0 {
		return s + fmt.Sprintf("/%dx%d/bots=%d/target=%d", c.w, c.h, c.floor, c.target)
	}
	if c.area > 1 {
		s += fmt.Sprintf("/area=x%d", c.area)
	}
	return s
}

// Start lengths as game's BenchmarkStep has them.
const (
	benchBotLen    = 16
	benchPlayerLen = 15
)

// benchWorld builds the world of c and lets it settle as game's
// BenchmarkStep does. For players it returns the script driving them (nil
// for bots).
func benchWorld(b testing.TB, c benchCase) (*game.World, *players) {
	h := c.n * 256 * c.area / 2048
	cfg := game.Config{W: 2048, H: h, MaxSnakes: c.n, Seed: 7}
	if c.w > 0 {
		cfg = game.Config{W: c.w, H: c.h, MaxSnakes: c.n + max(c.floor, c.target), Bots: c.floor, BotTarget: c.target, Seed: 7}
	}
	var p *players
	if c.bots {
		cfg.Bots, cfg.StartLen = c.n, benchBotLen
	} else {
		cfg.StartLen = benchPlayerLen
		p = &players{rng: rand.New(rand.NewPCG(7, 8))}
	}
	w, err := game.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if p != nil {
		for k := 0; k < c.n; k++ {
			id, err := w.Join(fmt.Sprintf("p%d", k))
			if err != nil {
				b.Fatal(err)
			}
			p.ids = append(p.ids, id)
		}
	}
	warm := uint64(200)
	if c.w > 0 {
		warm = 2000
	}
	for t := uint64(1); t <= warm; t++ {
		if p != nil {
			p.act(w)
		}
		w.Step(t)
	}
	return w, p
}

// freshXShape checks the shape of v's cell index: one offset a tile row
// and one more, ascending; each row's columns ascending, unique, within the
// world, each in a Fresh tile, with its pixels in FreshPix; FreshBlk's
// entries the first column of each block.
func freshXShape(v *game.View) error {
	th, fw, nb := game.TilesH(v.H), game.FreshWords(v.W), game.FreshBlocks(v.W)
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
			want := int(v.FreshAt[ty]) + sort.Search(len(row), func(i int) bool { return int(row[i]) >= b*game.FreshBlock })
			if got := int(v.FreshBlk[ty*nb+b]); got != want {
				return fmt.Errorf("tick %d: tile row %d block %d starts at %d in FreshX, want %d (columns %v)", v.Tick, ty, b, got, want, row)
			}
		}
		for i, x := range row {
			if i > 0 && x <= row[i-1] || int(x) >= v.W {
				return fmt.Errorf("tick %d: tile row %d columns %v not ascending and within the world", v.Tick, ty, row)
			}
			if tx := int(x) / game.TileW; v.Fresh[ty*fw+tx/64]>>(tx%64)&1 == 0 {
				return fmt.Errorf("tick %d: column %d of tile row %d is in FreshX but its tile is not Fresh", v.Tick, x, ty)
			}
			k := int(v.FreshAt[ty]) + i
			var bot game.Pixel
			if y := ty*game.TileH + 1; y < v.H {
				bot = v.Pix[y*v.W+int(x)]
			}
			if top := v.Pix[ty*game.TileH*v.W+int(x)]; v.FreshPix[2*k] != top || v.FreshPix[2*k+1] != bot {
				return fmt.Errorf("tick %d: column %d of tile row %d: FreshPix %x/%x, Pix %x/%x", v.Tick, x, ty, v.FreshPix[2*k], v.FreshPix[2*k+1], top, bot)
			}
		}
	}
	return nil
}

// inFreshX reports whether pixel (x, y) is in v's cell index.
func inFreshX(v *game.View, x, y int) bool {
	_, ok := slices.BinarySearch(v.FreshX[v.FreshAt[y/game.TileH]:v.FreshAt[y/game.TileH+1]], uint16(x))
	return ok
}

// grid is a world's pixels, as the players script reads them.
type grid struct {
	pix  []game.Pixel
	w, h int
}

// At returns the pixel at (x, y), both wrapped onto the world.
func (g grid) At(x, y int) game.Pixel {
	return g.pix[((y%g.h+g.h)%g.h)*g.w+(x%g.w+g.w)%g.w]
}
