package game

// This file keeps View.Dirty: per-tile ticks of the last visible change,
// maintained in O(changes) per publish.

// TilesW is the number of tile columns of a world w pixels wide.
func TilesW(w int) int { return (w + TileW - 1) / TileW }

// TilesH is the number of tile rows of a world h pixels high.
func TilesH(h int) int { return (h + TileH - 1) / TileH }

// tile returns the index in View.Dirty of pixel i of a w-wide world.
func tile(i int32, w int) int {
	return (int(i)/w/TileH)*TilesW(w) + int(i)%w/TileW
}

// markAll marks every tile of v changed at tick t.
func (v *View) markAll(t uint64) {
	for i := range v.Dirty {
		v.Dirty[i] = t
	}
}

// markLog marks the tiles of the pixels in log changed at tick t.
func (v *View) markLog(log []change, t uint64) {
	w, tw, d := v.W, TilesW(v.W), v.Dirty
	for _, c := range log {
		y := int(c.i) / w // the one division; TileW and TileH are powers of two
		x := int(c.i) - y*w
		d[(y/TileH)*tw+x/TileW] = t
	}
}

// markExpired marks, at tick t, the tiles of every live snake whose spawn
// protection ended after tick from and at or before t: its body turns from
// the protected look to its colour without a grid write.
func (w *World) markExpired(v *View, from, t uint64) {
	for i := 0; i < w.nslots; i++ {
		s := &w.snakes[i]
		if !s.used || !s.alive || s.protUntil <= from || s.protUntil > t {
			continue
		}
		for k := 0; k < s.n; k++ {
			v.Dirty[tile(s.at(k), w.w)] = t
		}
	}
}
