package game

// nearIndex buckets the live heads of the last publish by area, so that a
// spawn can ask "is any head within so many columns and rows of this
// place?" without looking at every snake. The world is cut into gw x gh
// cells, each at least nearFarX+1 pixels wide and nearFarY+1 tall, so the
// heads within nearFarX columns and nearFarY rows of a place lie in its
// cell or the eight around it (on the torus). Rebuilt at every publish in
// O(heads + cells), without allocating or dividing.
type nearIndex struct {
	w, h   int     // the world's size
	gw, gh int     // cells across and down
	colOf  []int32 // colOf[x]: the cell column of pixel column x
	rowOf  []int32 // rowOf[y]: gw times the cell row of pixel row y
	start  []int32 // cell c's heads are at[start[c]:start[c+1]] (after build)
	cells  []int32 // the cell of each head added, in order
	pts    []headPt
	at     []headPt // heads by cell
}

// headPt is a head's pixel.
type headPt struct{ x, y int32 }

func (n *nearIndex) init(w, h, maxSnakes int) {
	n.w, n.h = w, h
	n.gw, n.gh = max(1, w/(nearFarX+1)), max(1, h/(nearFarY+1))
	n.colOf, n.rowOf = make([]int32, w), make([]int32, h)
	for x := range n.colOf {
		n.colOf[x] = int32(x * n.gw / w)
	}
	for y := range n.rowOf {
		n.rowOf[y] = int32(y * n.gh / h * n.gw)
	}
	n.start = make([]int32, n.gw*n.gh+1)
	n.cells = make([]int32, 0, maxSnakes)
	n.pts = make([]headPt, 0, maxSnakes)
	n.at = make([]headPt, maxSnakes)
}

// reset empties the index before heads are added (add; index, for
// tests). A publish fills it with size and put instead.
func (n *nearIndex) reset() {
	clear(n.start)
	n.cells, n.pts = n.cells[:0], n.pts[:0]
}

// add notes a live head at pixel (x, y), after the heads added before it.
func (n *nearIndex) add(x, y int32) {
	n.cells = append(n.cells, n.rowOf[y]+n.colOf[x])
	n.pts = append(n.pts, headPt{x, y})
}

// size empties the index for k heads, which put then notes at places 0
// to k-1 (from several goroutines at once, each its own places) before
// build.
func (n *nearIndex) size(k int) {
	clear(n.start)
	n.cells, n.pts = n.cells[:k], n.pts[:k]
}

// put notes the live head at pixel (x, y) as head k (see size).
func (n *nearIndex) put(k int, x, y int32) {
	n.cells[k] = n.rowOf[y] + n.colOf[x]
	n.pts[k] = headPt{x, y}
}

// build sorts the heads added by cell (a counting sort).
func (n *nearIndex) build() {
	for _, c := range n.cells {
		n.start[c+1]++
	}
	for c := 1; c < len(n.start); c++ {
		n.start[c] += n.start[c-1]
	}
	// start[c+1] is now the end of cell c; filling each cell from its end
	// leaves it at the cell's start, i.e. start[c+1] = cell c's start.
	for k := len(n.pts) - 1; k >= 0; k-- {
		c := n.cells[k] + 1
		n.start[c]--
		n.at[n.start[c]] = n.pts[k]
	}
	copy(n.start, n.start[1:])
	n.start[len(n.start)-1] = int32(len(n.pts))
}

// index rebuilds the index from head pixel indices (tests).
func (n *nearIndex) index(heads []int32) {
	n.reset()
	for _, i := range heads {
		n.add(i%int32(n.w), i/int32(n.w))
	}
	n.build()
}

// has reports whether a head of the last publish lies within bx columns
// and by rows of (x, y) on the torus (bx <= nearFarX, by <= nearFarY).
func (n *nearIndex) has(x, y, bx, by int) bool { return n.scan(x, y, bx, by, false) > 0 }

// scan counts the heads of the last publish within bx columns and by rows
// of (x, y) on the torus (bx <= nearFarX, by <= nearFarY), stopping at the
// first unless all is set.
func (n *nearIndex) scan(x, y, bx, by int, all bool) int {
	cx, cy := int(n.colOf[x]), int(n.rowOf[y])/n.gw
	count := 0
	for dy := -1; dy <= 1; dy++ {
		if n.gh < 3 && dy != 0 && (n.gh == 1 || dy > 0) {
			continue // fewer than three rows of cells: visit each once
		}
		row := wrap(cy+dy, n.gh) * n.gw
		for dx := -1; dx <= 1; dx++ {
			if n.gw < 3 && dx != 0 && (n.gw == 1 || dx > 0) {
				continue
			}
			c := row + wrap(cx+dx, n.gw)
			for _, p := range n.at[n.start[c]:n.start[c+1]] {
				if abs(off(int(p.x)-x, n.w)) <= bx && abs(off(int(p.y)-y, n.h)) <= by {
					if count++; !all {
						return count
					}
				}
			}
		}
	}
	return count
}
