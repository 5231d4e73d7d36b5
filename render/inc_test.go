package render

import "testing"

// TestTrim: a big first frame's buffer is given back once frames are small,
// and a later big frame still comes out whole.
func TestTrim(t *testing.T) {
	s, h := scenario()
	r := newKept(ANSI16, 200, 60)
	s.step()
	r.Frame(&s.v, h) // a full repaint: the buffer is sized for one
	if c := cap(r.vt.buf); c <= trimMin {
		t.Fatalf("buffer %d B: the test wants one above %d", c, trimMin)
	}
	for i := 0; i < trimAfter+2; i++ {
		s.step()
		r.Frame(&s.v, h)
	}
	if c := cap(r.vt.buf); c > trimTo {
		t.Fatalf("buffer still %d B after %d small frames", c, trimAfter+2)
	}
	r.Invalidate()
	if n := len(r.Frame(&s.v, h)); n <= trimTo {
		t.Fatalf("full repaint of %d B: want more than %d", n, trimTo)
	}
}

// TestMarkSpan: at the widest terminal and at every width next to a
// multiple of span, allMask has one bit per span of a row and markSpan sets
// exactly the bits of the spans that cells [x0, x1) fall in, for every
// 0 <= x0 <= x1 <= width, in that row only. The masks wanted are built cell
// by cell (a width whose spans do not all fit the 64-bit mask does not
// compile: inc.go).
func TestMarkSpan(t *testing.T) {
	if n := (MaxCols + span - 1) / span; n > 64 {
		t.Fatalf("%d spans at %d columns: the reference below holds 64", n, MaxCols)
	}
	widths := []int{MaxCols}
	for m := span; m <= MaxCols+1; m += span {
		for _, w := range []int{m - 1, m, m + 1} {
			if w >= 1 && w < MaxCols {
				widths = append(widths, w)
			}
		}
	}
	for _, w := range widths {
		r := newKept(ANSI16, w, 3)
		if r.cols != w || len(r.mask) != 3 {
			t.Fatalf("newKept(%d, 3): %d columns, %d mask rows", w, r.cols, len(r.mask))
		}
		var all uint64
		for x := 0; x < w; x++ {
			all |= 1 << (x / span)
		}
		if uint64(r.allMask()) != all {
			t.Errorf("width %d: allMask %#x, want %#x", w, r.allMask(), all)
		}
		bad := 0
		for x0 := 0; x0 <= w; x0++ {
			var want uint64 // spans of cells [x0, x1)
			for x1 := x0; x1 <= w; x1++ {
				if x1 > x0 {
					want |= 1 << ((x1 - 1) / span)
				}
				r.mask[0], r.mask[1], r.mask[2] = 0, 0, 0
				r.markSpan(1, x0, x1)
				if uint64(r.mask[1]) != want || r.mask[0] != 0 || r.mask[2] != 0 {
					if bad++; bad <= 3 {
						t.Errorf("width %d: markSpan(1, %d, %d): rows %#x %#x %#x, want 0 %#x 0",
							w, x0, x1, r.mask[0], r.mask[1], r.mask[2], want)
					}
				}
			}
		}
		if bad > 3 {
			t.Errorf("width %d: %d spans wrong in all", w, bad)
		}
		// markSpan adds to what a row holds.
		r.mask[1] = 1
		r.markSpan(1, w-1, w)
		if want := 1 | uint64(1)<<((w-1)/span); uint64(r.mask[1]) != want {
			t.Errorf("width %d: markSpan(1, %d, %d) on mask 1: %#x, want %#x", w, w-1, w, r.mask[1], want)
		}
	}
}
