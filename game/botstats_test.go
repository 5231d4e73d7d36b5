package game

import (
	"flag"
	"testing"
)

// botStats turns TestBotStats into the measurement of the bots' deaths and
// lengths in docs/BENCHMARKS.md (the file uses only Config, New, Step
// and the view, so it runs unchanged against older trees).
var botStats = flag.Bool("botstats", false, "log bot deaths and lengths in bot-only worlds (TestBotStats)")

// TestBotStats steps bot-only worlds of 2,500 and 10,000 bots at the
// benchmarks' density (BenchmarkStep's bots rows, 200 ticks of warm-up) for
// 300 ticks and logs deaths per tick (snakes alive in one view and dead in
// the next), dashes per tick and the mean length of the live bots.
func TestBotStats(t *testing.T) {
	if !*botStats {
		t.Skip("measurement: run with -botstats")
	}
	for _, n := range []int{2500, 10000} {
		w, _ := benchWorld(t, benchCase{bots: true, n: n, area: 1})
		was := make([]bool, n)
		dashAt := make([]uint64, n)
		var deaths, dashes, alive, total int
		const ticks = 300
		for k := 0; k < ticks; k++ {
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
		t.Logf("bots=%d: deaths %.2f/tick, dashes %.2f/tick, alive %.0f, mean length %.1f",
			n, float64(deaths)/ticks, float64(dashes)/ticks, float64(alive)/ticks, float64(total)/float64(alive))
	}
}
