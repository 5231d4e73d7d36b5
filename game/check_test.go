package game

import "fmt"

// check verifies the world's invariants: the occupancy grid equals the union
// of the live bodies and the fruit, bodies are disjoint and contiguous, the
// counters agree, and the newest view's pixels equal the grid.
func (w *World) check() error {
	want := make([]Pixel, len(w.grid))
	fruit := 0
	for i, p := range w.grid {
		switch p.Kind() {
		case Fruit:
			if p != MakePixel(Fruit, 0, 0) {
				return fmt.Errorf("pixel %d: fruit with payload %x", i, p)
			}
			want[i] = p
			fruit++
		case Body, Head:
			s := &w.snakes[p.Slot()]
			if p.Slot() >= w.nslots || !s.used || !s.alive {
				return fmt.Errorf("pixel %d: %x belongs to no live snake", i, p)
			}
		}
	}
	if fruit != w.fruit {
		return fmt.Errorf("fruit count %d, grid has %d", w.fruit, fruit)
	}
	players, bots := 0, 0
	for i := 0; i < w.nslots; i++ {
		s := &w.snakes[i]
		if !s.used {
			continue
		}
		if s.bot {
			bots++
		} else {
			players++
		}
		if !s.alive {
			continue
		}
		if s.n < 1 || s.n > len(s.body) {
			return fmt.Errorf("snake %d: length %d", i, s.n)
		}
		for k := 0; k < s.n; k++ {
			j := s.at(k)
			if want[j] != 0 {
				return fmt.Errorf("snake %d: pixel %d already taken by %x", i, j, want[j])
			}
			kind := Body
			if k == s.n-1 {
				kind = Head
			}
			want[j] = MakePixel(kind, i, s.colour)
			if a := s.at(k - 1); k > 0 && w.dist(a%int32(w.w), a/int32(w.w), j%int32(w.w), j/int32(w.w)) != 1 {
				return fmt.Errorf("snake %d: body not contiguous at %d", i, k)
			}
		}
		if h := s.head(); h != s.hy*int32(w.w)+s.hx || h != s.at(s.n-1) {
			return fmt.Errorf("snake %d: head %d at (%d,%d)", i, h, s.hx, s.hy)
		}
	}
	if players != w.players || bots != w.bots {
		return fmt.Errorf("counts players %d/%d bots %d/%d", players, w.players, bots, w.bots)
	}
	for i := range want {
		if want[i] != w.grid[i] {
			return fmt.Errorf("pixel %v: grid %x, bodies+fruit %x", w.point(int32(i)), w.grid[i], want[i])
		}
	}
	if v := w.newest.Load(); v.st.seq == w.seq || w.seq == 0 {
		for i := range v.Pix {
			if v.Pix[i] != w.grid[i] {
				return fmt.Errorf("view pixel %d: %x, grid %x", i, v.Pix[i], w.grid[i])
			}
		}
	}
	return nil
}
