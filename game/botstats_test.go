package game

import "testing"

// BenchmarkBotStats measures how the bots live in bot-only worlds of
// 2,500 and 10,000 bots at the benchmarks' density (BenchmarkStep's bots
// rows, after its 200 ticks of warm-up). One op is a tick: Step, then a
// pass over the view's snakes (ns/op is the two). The metrics are per
// tick: deaths (snakes alive in one view and dead in the next), dashes
// (a live snake whose dash timer moved), the bots alive, and the mean
// length of the live bots; -benchtime 300x measures 300 ticks.
func BenchmarkBotStats(b *testing.B) {
	for _, n := range []int{2500, 10000} {
		c := benchCase{bots: true, n: n, area: 1}
		b.Run(c.name(), func(b *testing.B) {
			w, _ := benchWorld(b, c)
			was := make([]bool, n)
			dashAt := make([]uint64, n)
			var deaths, dashes, alive, total int
			for b.Loop() {
				w.Step(w.tick + 1)
				v := w.Acquire()
				for i, s := range v.Snakes {
					if was[i] && !s.Alive {
						deaths++
					}
					if s.Alive && was[i] && s.DashReadyAt != dashAt[i] {
						dashes++
					}
					was[i], dashAt[i] = s.Alive, s.DashReadyAt
					if s.Alive {
						alive++
						total += s.Length
					}
				}
				v.Release()
			}
			ticks := float64(b.N)
			b.ReportMetric(float64(deaths)/ticks, "deaths/tick")
			b.ReportMetric(float64(dashes)/ticks, "dashes/tick")
			b.ReportMetric(float64(alive)/ticks, "alive")
			if alive > 0 {
				b.ReportMetric(float64(total)/float64(alive), "len")
			}
		})
	}
}
