package render

import "testing"

// TestTrim: a big first frame's buffer is given back once frames are small,
// and a later big frame still comes out whole.
func TestTrim(t *testing.T) {
	s, h := scenario()
	r := New(ANSI16, 200, 60)
	if c := cap(r.buf); c <= trimMin {
		t.Fatalf("buffer %d B: the test wants one above %d", c, trimMin)
	}
	for i := 0; i < trimAfter+2; i++ {
		s.step()
		r.Frame(&s.v, h)
	}
	if c := cap(r.buf); c > trimTo {
		t.Fatalf("buffer still %d B after %d small frames", c, trimAfter+2)
	}
	r.Invalidate()
	if n := len(r.Frame(&s.v, h)); n <= trimTo {
		t.Fatalf("full repaint of %d B: want more than %d", n, trimTo)
	}
}

// TestMarkSpan: the mask bits cover exactly the spans of the cells marked,
// up to the widest terminal.
func TestMarkSpan(t *testing.T) {
	r := New(ANSI16, MaxCols, 3)
	if r.allMask != 1<<32-1 {
		t.Fatalf("allMask %x for %d columns", r.allMask, MaxCols)
	}
	for _, c := range []struct {
		x0, x1 int
		want   uint32
	}{{0, 1, 1}, {15, 17, 3}, {16, 32, 2}, {3, 3, 0}, {490, 500, 3 << 30}, {496, 500, 1 << 31}, {0, MaxCols, 1<<32 - 1}, {480, 500, 3 << 30}} {
		r.mask[1] = 0
		r.markSpan(1, c.x0, c.x1)
		if r.mask[1] != c.want {
			t.Errorf("markSpan(%d, %d) = %x, want %x", c.x0, c.x1, r.mask[1], c.want)
		}
	}
}
