package render

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"snaked/game"
	"snaked/internal/cpuclock"
)

// mixSizes is the daemon's mix of terminal sizes: 80x24 half the time.
var mixSizes = [][2]int{{80, 24}, {100, 30}, {80, 24}, {120, 40}, {80, 24}, {160, 48}, {80, 24}, {200, 60}}

// BenchmarkFrameMix is a daemon-like load: one real world of 2,048 x 512
// pixels with 2,500 snakes (bots, spread over it like a full server), and
// 256 sessions of mixed sizes, each following its own snake and drawing
// every tick (the camera-order variants: see frameMix). Each session has two renderers, timed side by side on the
// same views: "whole" composes and diffs whole frames (the code before
// View.Dirty), "tiles" only the dirty tiles when the camera stayed. The two
// sets take turns (order alternating by tick), so each finds its grids cold
// in cache as in the daemon and both see the same machine load. One op is
// one tick: both sets' frames (and, in the camera-order variants, the
// sort); the world's step, Acquire and Release are not timed. The us/frame
// metrics are each set's thread CPU time per frame (cpuclock.ThreadOrWall:
// wall time off Linux).
func BenchmarkFrameMix(b *testing.B) {
	b.Run("mix", func(b *testing.B) { frameMix(b, mixSizes, 256, false) })
	b.Run("80x24", func(b *testing.B) { frameMix(b, [][2]int{{80, 24}}, 256, false) })
	b.Run("200x60", func(b *testing.B) { frameMix(b, [][2]int{{200, 60}}, 256, false) })
	b.Run("mix-2500", func(b *testing.B) { frameMix(b, mixSizes, 2500, false) })
	b.Run("mix-camera-order", func(b *testing.B) { frameMix(b, mixSizes, 256, true) })
	b.Run("mix-camera-order-2500", func(b *testing.B) { frameMix(b, mixSizes, 2500, true) })
}

// frameMix runs BenchmarkFrameMix. With byCam, both sets take the dirty
// tiles and the second renders its sessions in camera order (top to
// bottom, left to right, as of their last frame) instead of slot order:
// "speedup" then says what neighbours sharing the view's cache lines
// gains.
func frameMix(b *testing.B, sizes [][2]int, n int, byCam bool) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w, rs, hs := mixCrowd(b, sizes, n, !byCam)
	tick := uint64(1)
	var v *game.View
	var d [2]time.Duration
	var bytes [2]int
	incs := 0
	var ords [2][]int // the order each set renders its sessions in
	for k := range ords {
		ords[k] = make([]int, n)
		for i := range ords[k] {
			ords[k][i] = i
		}
	}
	// advance steps the world and acquires its view (not timed); draw
	// draws that view in both sets.
	advance := func() {
		tick++
		w.Step(tick)
		v = w.Acquire()
	}
	draw := func() {
		for j := range 2 {
			k := (j + int(tick)) % 2
			if k == 1 && byCam {
				slices.SortFunc(ords[1], func(a, b int) int {
					ra, rb := rs[1][a], rs[1][b]
					return cmp.Or(cmp.Compare(ra.camY, rb.camY), cmp.Compare(ra.camX, rb.camX))
				})
			}
			t0 := cpuclock.ThreadOrWall()
			for _, i := range ords[k] {
				bytes[k] += len(rs[k][i].Frame(v, &hs[i]))
			}
			d[k] += time.Duration(cpuclock.ThreadOrWall() - t0)
		}
	}
	// finish releases the view and counts the incremental frames (not
	// timed).
	finish := func() {
		v.Release()
		for _, r := range rs[1] {
			if r.inc {
				incs++
			}
		}
	}
	for i := 0; i < 2*trimAfter; i++ {
		advance()
		draw()
		finish()
	}
	d, bytes, incs = [2]time.Duration{}, [2]int{}, 0
	advance()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		draw()
		b.StopTimer()
		finish()
		advance()
		b.StartTimer()
	}
	b.StopTimer()
	v.Release()
	frames := float64(b.N * n)
	names := [2]string{"whole-us/frame", "tiles-us/frame"}
	if byCam {
		names = [2]string{"slot-order-us/frame", "camera-order-us/frame"}
	}
	b.ReportMetric(float64(d[0].Nanoseconds())/1e3/frames, names[0])
	b.ReportMetric(float64(d[1].Nanoseconds())/1e3/frames, names[1])
	b.ReportMetric(float64(d[0])/float64(d[1]), "speedup")
	b.ReportMetric(float64(bytes[1])/frames, "B/frame")
	b.ReportMetric(float64(incs)/frames, "inc-share")

	if bytes[0] != bytes[1] {
		b.Errorf("whole and tiles sent %d and %d bytes", bytes[0], bytes[1])
	}
}

// BenchmarkRendererMem reports the heap a Renderer holds after a session's
// first 200 frames at 80x24 and 200x60 (the world's memory is not counted).
func BenchmarkRendererMem(b *testing.B) {
	for _, sz := range [][2]int{{80, 24}, {200, 60}} {
		b.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(b *testing.B) {
			const n = 50
			var per, held float64
			for b.Loop() {
				s, h := scenario()
				var m0, m1 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m0)
				rs := make([]*Renderer, n)
				for i := range rs {
					rs[i] = New(ANSI16, sz[0], sz[1])
				}
				for f := 0; f < 200; f++ {
					s.step()
					for _, r := range rs {
						r.Frame(&s.v, h)
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&m1)
				per = float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / n
				held = float64(budgetHeld(rs[0]))
				runtime.KeepAlive(rs)
			}
			b.ReportMetric(per, "heap-B/renderer")
			b.ReportMetric(held, "buffers-B/renderer")
		})
	}
}

// TestWholeSameBytes: in a crowd of the game's own (BenchmarkFrameMix's
// world), renderers that compose every frame whole send the very bytes
// incremental ones do, frame by frame: camera steps composed from the
// last frame, the heads they note and the tags they place included. (The
// oracle sessions check the composed grids in a stand-in world; this
// found a step frame running out of room for heads.)
func TestWholeSameBytes(t *testing.T) {
	w, rs, hs := mixCrowd(t, mixSizes, 250, true)
	whole, inc := rs[0], rs[1]
	tick := uint64(1)
	steps := 0
	for f := range 100 {
		tick++
		w.Step(tick)
		v := w.Acquire()
		for i := range hs {
			a, b := whole[i].Frame(v, &hs[i]), inc[i].Frame(v, &hs[i])
			if string(a) != string(b) {
				t.Fatalf("frame %d, session %d (%dx%d, camera step %v): whole %q, incremental %q", f, i, inc[i].cols, inc[i].rows, inc[i].step, a, b)
			}
			if inc[i].step {
				steps++
			}
		}
		v.Release()
	}
	if steps == 0 {
		t.Fatal("no camera step was composed from the last frame")
	}
	t.Logf("%d camera steps composed from the last frame", steps)
}

// mixCrowd makes BenchmarkFrameMix's world (2,500 bots on 2,048 x 512,
// stepped once, at tick 1) and two sets of n renderers at the given
// terminal sizes, each following the same n snakes spread over the
// slots; the first set composes every frame whole when whole is set.
func mixCrowd(tb testing.TB, sizes [][2]int, n int, whole bool) (*game.World, [2][]*Renderer, []HUD) {
	tb.Helper()
	w, err := game.New(game.Config{W: 2048, H: 512, MaxSnakes: 2600, Bots: 2500, Seed: 11})
	if err != nil {
		tb.Fatal(err)
	}
	rs := [2][]*Renderer{make([]*Renderer, n), make([]*Renderer, n)}
	hs := make([]HUD, n)
	w.Step(1)
	v := w.Acquire()
	defer v.Release()
	for i := range hs {
		sz := sizes[i%len(sizes)]
		for k := range rs {
			rs[k][i] = newRenderer(ANSI256, sz[0], sz[1], 0, options{keepNext: true, whole: k == 0 && whole})
		}
		id := v.Snakes[i*len(v.Snakes)/n].ID
		hs[i] = HUD{You: id, Follow: id, ShutdownIn: -1, Players: 2500, Spectators: 10, Join: "ssh -p 2222 snaked.example"}
	}
	return w, rs, hs
}
