package game

import (
	"fmt"
	"testing"
)

// benchWorld builds a world of n bots of length ~20 at the default density
// (about 256 pixels per snake, times area) and lets it settle.
func benchWorld(b *testing.B, n, area int) *World {
	h := n * 256 * area / 2048
	w, err := New(Config{W: 2048, H: h, MaxSnakes: n, Bots: n, Seed: 7, StartLen: 20})
	if err != nil {
		b.Fatal(err)
	}
	for t := uint64(1); t <= 200; t++ {
		w.Step(t)
	}
	return w
}

func BenchmarkStep(b *testing.B) {
	for _, c := range []struct{ n, area int }{{1000, 1}, {5000, 1}, {10000, 1}, {10000, 4}} {
		name := fmt.Sprintf("snakes=%d", c.n)
		if c.area > 1 {
			name += fmt.Sprintf("/area=x%d", c.area)
		}
		b.Run(name, func(b *testing.B) {
			w := benchWorld(b, c.n, c.area)
			t := w.tick
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuNanos()
			for i := 0; i < b.N; i++ {
				t++
				w.Step(t)
			}
			cpu = cpuNanos() - cpu
			b.StopTimer()
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			v := w.Acquire()
			alive, total := 0, 0
			for _, s := range v.Snakes {
				if s.Alive {
					alive++
					total += s.Length
				}
			}
			v.Release()
			if alive > 0 {
				b.ReportMetric(float64(total)/float64(alive), "len")
				b.ReportMetric(float64(alive), "alive")
			}
		})
	}
}

// BenchmarkAcquire measures a reader's Acquire+Release pair while nothing
// steps (the cost each renderer pays per frame, apart from reading).
func BenchmarkAcquire(b *testing.B) {
	w, err := New(Config{W: 256, H: 128, MaxSnakes: 64, Bots: 16, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w.Acquire().Release()
		}
	})
}
