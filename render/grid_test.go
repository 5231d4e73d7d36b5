package render

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

// newKept and newKeptBudget are New and NewBudget for the tests that
// read the frame a renderer meant (r.next) after Frame returns: their
// renderers keep a next grid of their own (options.keepNext).
// TestBorrowedGrid checks that renderers that borrow one per frame, as
// New's do, send the same bytes.
func newKept(p Profile, cols, rows int) *Renderer { return newKeptBudget(p, cols, rows, 0) }

func newKeptBudget(p Profile, cols, rows, budget int) *Renderer {
	return newRenderer(p, cols, rows, budget, options{keepNext: true})
}

// hand gives r's encoder the frame r composed, as Frame does, for the
// tests that call the encoder's parts themselves.
func hand(r *Renderer) {
	r.vt.next, r.vt.mask, r.vt.stepped = r.next, r.mask, r.stepped
	r.vt.pfTop, r.vt.pfRows = r.pfTop, r.pfRows
}

// TestBorrowedGrid: renderers that borrow their next grid for each frame
// and release their output buffer after it (both from pools shared by
// renderers of every size, drawing at the same time) send the same bytes,
// frame after frame, as twins that keep their own, through resizes,
// repaints and the "please enlarge" screen, and hold neither between
// frames.
func TestBorrowedGrid(t *testing.T) {
	c := newLoadCrowd(t, 400, 0, 5)
	type twin struct {
		kept, lean *Renderer
		hud        HUD
	}
	sizes := [][2]int{{80, 24}, {200, 100}, {45, 13}, {120, 40}, {80, 24}, {160, 48}}
	var ts []*twin
	for i, sz := range sizes {
		id := c.ids[i*37]
		ts = append(ts, &twin{
			kept: newKept(ANSI16, sz[0], sz[1]),
			lean: New(ANSI16, sz[0], sz[1]),
			hud:  HUD{You: id, Follow: id, ShutdownIn: -1, Players: 400},
		})
	}
	for tick := range 120 {
		c.step()
		v := c.w.Acquire()
		errs := make([]error, len(ts))
		var wg sync.WaitGroup
		for i, tw := range ts {
			wg.Go(func() {
				switch {
				case tick == 40 && i == 1:
					tw.kept.Resize(30, 10) // "please enlarge"
					tw.lean.Resize(30, 10)
				case tick == 50 && i == 1:
					tw.kept.Resize(90, 30)
					tw.lean.Resize(90, 30)
				case tick == 70 && i%2 == 0:
					tw.kept.Invalidate()
					tw.lean.Invalidate()
				}
				a := tw.kept.Frame(v, &tw.hud)
				b := tw.lean.Frame(v, &tw.hud)
				same := bytes.Equal(a, b)
				tw.lean.Release()
				switch {
				case !same:
					errs[i] = fmt.Errorf("tick %d, renderer %d: %d bytes, kept grid %d", tick, i, len(b), len(a))
				case tw.lean.next != nil || tw.lean.grid != nil || tw.lean.vt.buf != nil:
					errs[i] = fmt.Errorf("tick %d, renderer %d holds a next grid or a buffer between frames", tick, i)
				}
			})
		}
		wg.Wait()
		v.Release()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestEndian: the build's bigEndian constant says where quad puts a
// quad's first cell, and firstCell and laneOf find each cell.
func TestEndian(t *testing.T) {
	c := [4]cell{1}
	if got := quad(c[:], 0) != 1; got != bigEndian {
		t.Fatalf("bigEndian is %v, memory says %v", bigEndian, got)
	}
	for i := range 4 {
		var a, b [4]cell
		b[i] = 0x1234
		d := quad(a[:], 0) ^ quad(b[:], 0)
		if got := firstCell(d); got != i {
			t.Errorf("firstCell of a difference in cell %d: %d", i, got)
		}
		if d&^laneOf(i) != 0 || d&laneOf(i) == 0 {
			t.Errorf("laneOf(%d) = %#x does not hold cell %d's bits %#x", i, laneOf(i), i, d)
		}
	}
}
