package game

import (
	"slices"
	"testing"
)

// TestCopyPix: copyPix copies as copy does, whole chunks, a part of one
// and none, into a destination longer, shorter or as long as the source.
func TestCopyPix(t *testing.T) {
	for _, n := range []int{0, 1, copyChunk - 1, copyChunk, copyChunk + 1, 3*copyChunk + 17} {
		src := make([]Pixel, n)
		for i := range src {
			src[i] = Pixel(i*2654435761) | 1
		}
		for _, m := range []int{n, n + 5, max(n-3, 0)} {
			got, want := make([]Pixel, m), make([]Pixel, m)
			copyPix(got, src)
			copy(want, src)
			if !slices.Equal(got, want) {
				t.Fatalf("copyPix of %d pixels into %d: differs from copy", n, m)
			}
		}
	}
}
