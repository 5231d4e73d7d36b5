package render

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"snaked/game"
	"snaked/internal/cpuclock"
)

// BenchmarkRadar prices the radar where it costs most: 2,500 snakes
// spread over a 2,048 x 512 world and sessions that see nobody, so every
// session's radar is on and scans all 2,500. The view lists 2,500 live
// snakes, but only the sessions' own (one per session, 5 pixels, on a
// grid a screen apart) are drawn, so no session has another head in
// sight. Each op is one tick: every session's own snake moves a pixel
// and every session draws a frame twice, once with the radar and once
// without (noRadar), the two sets taking turns as in BenchmarkFrameMix;
// the us/frame metrics are each set's thread CPU time per frame
// (cpuclock.ThreadOrWall: wall time off Linux), "radar-us"
// their difference, "scans/frame" how often a session looked at every
// snake.
func BenchmarkRadar(b *testing.B) {
	b.Run("80x24-256", func(b *testing.B) { radarBench(b, 256) })
}

func radarBench(b *testing.B, n int) {
	const w, hgt, total = 2048, 512, 2500
	v := &game.View{W: w, H: hgt, Pix: make([]game.Pixel, w*hgt), Snakes: make([]game.SnakeInfo, total), Heads: make([]game.Point, total)}
	v.Dirty = make([]uint64, game.TilesW(w)*game.TilesH(hgt))
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range v.Snakes {
		v.Snakes[i] = game.SnakeInfo{ID: game.ID(i) | 1<<16, Name: "s", Used: true, Alive: true, Length: 5}
		v.Heads[i] = game.Point{X: rng.IntN(w), Y: rng.IntN(hgt)}
	}
	// The sessions' snakes: 25 x 11 grid points, 82 x 46 pixels apart (an
	// 80x24 screen is 80 x 44), the first n of them.
	put := func(i int, on bool) {
		hd := v.Heads[i]
		for k := 0; k < 5; k++ {
			px := game.Pixel(0)
			if on {
				kind := game.Body
				if k == 0 {
					kind = game.Head
				}
				px = game.MakePixel(kind, i, 1)
			}
			x := mod(hd.X-k, w)
			v.Pix[hd.Y*w+x] = px
			v.Dirty[hd.Y/game.TileH*game.TilesW(w)+x/game.TileW] = v.Tick
		}
	}
	for i := 0; i < n; i++ {
		v.Heads[i] = game.Point{X: i % 25 * 82, Y: i / 25 * 46}
		put(i, true)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	rs := [2][]*Renderer{make([]*Renderer, n), make([]*Renderer, n)} // radar, none
	hs := make([]HUD, n)
	for i := range hs {
		id := v.Snakes[i].ID
		hs[i] = HUD{You: id, Follow: id, ShutdownIn: -1, Players: n}
		for k := range rs {
			rs[k][i] = newRenderer(ANSI16, 80, 24, 0, options{keepNext: true, noRadar: k == 1})
		}
	}
	step := func() {
		v.Tick++
		for i := 0; i < n; i++ {
			put(i, false)
			v.Heads[i].X = mod(v.Heads[i].X+1, w)
			put(i, true)
		}
	}
	var d [2]time.Duration
	draw := func() {
		for j := range 2 {
			k := (j + int(v.Tick)) % 2
			t0 := cpuclock.ThreadOrWall()
			for i := range hs {
				rs[k][i].Frame(v, &hs[i])
			}
			d[k] += time.Duration(cpuclock.ThreadOrWall() - t0)
		}
	}
	for i := 0; i < 2*trimAfter; i++ {
		step()
		draw()
	}
	scans := 0
	for _, r := range rs[0] {
		if !r.rad.on {
			b.Fatal("a session's radar is off: it sees somebody")
		}
		scans -= r.rad.scans
	}
	d = [2]time.Duration{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		step()
		b.StartTimer()
		draw()
	}
	b.StopTimer()
	for _, r := range rs[0] {
		scans += r.rad.scans
	}
	frames := float64(b.N * n)
	b.ReportMetric(float64(d[0].Nanoseconds())/1e3/frames, "radar-us/frame")
	b.ReportMetric(float64(d[1].Nanoseconds())/1e3/frames, "none-us/frame")
	b.ReportMetric(float64((d[0]-d[1]).Nanoseconds())/1e3/frames, "radar-us")
	b.ReportMetric(float64(scans)/frames, "scans/frame")
}

// BenchmarkRadarScan times one scan of 2,500 snakes alone.
func BenchmarkRadarScan(b *testing.B) {
	v, h := alone()
	rng := rand.New(rand.NewPCG(6, 6))
	for len(v.Snakes) < 2500 {
		v.Snakes = append(v.Snakes, game.SnakeInfo{ID: game.ID(len(v.Snakes)) | 1<<16, Used: true, Alive: true})
		v.Heads = append(v.Heads, game.Point{X: rng.IntN(v.W), Y: rng.IntN(v.H)})
	}
	r := newKept(ANSI16, 80, 24)
	r.Frame(v, h)
	o := v.Heads[0]
	for b.Loop() {
		r.scanRadar(v, 0, o)
	}
}
