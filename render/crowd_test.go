package render

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"snaked/game"
)

// BenchmarkCrowdHUD prices the HUD's pieces in a crowd: 500 players join
// the default world (2048x512, 16 bots, no bot target) over 10 s and play
// by a seeded script (a random turn one tick in eight, respawn at once), as
// the load test's swarm does; 100 of them are drawn at 80x24 in each
// variant (all of the HUD, no tags, no feed, none of tags, radar and feed),
// and the bytes of the frames from 80 to 120 s are counted. One op is the
// whole run; B/frame is the metric.
func BenchmarkCrowdHUD(b *testing.B) {
	for _, c := range []struct {
		name string
		cut  hudCut
	}{
		{"all", hudCut{}},
		{"notags", hudCut{noTags: true}},
		{"nofeed", hudCut{opt: options{noFeed: true}}},
		{"nohud", hudCut{opt: options{noRadar: true, noFeed: true}, noTags: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var perFrame float64
			for b.Loop() {
				perFrame = crowdRun(b, c.cut)
			}
			b.ReportMetric(perFrame, "B/frame")
		})
	}
}

// crowdRun plays BenchmarkCrowdHUD's crowd once and returns the mean
// bytes per frame of the sessions drawn.
func crowdRun(tb testing.TB, cut hudCut) float64 {
	const players, drawn, ticks, from = 500, 100, 1200, 800
	w, err := game.New(game.Config{W: 2048, H: 512, MaxSnakes: players + 16, Bots: 16, Seed: 7})
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	ids := make([]game.ID, 0, players)
	rs := make([]*Renderer, 0, drawn)
	hs := make([]HUD, drawn)
	var bytes, frames int
	for k := 0; k < ticks; k++ {
		for j := 0; j < 5 && len(ids) < players; j++ {
			id, err := w.Join("p" + strconv.Itoa(len(ids)))
			if err != nil {
				tb.Fatal(err)
			}
			ids = append(ids, id)
			if len(rs) < drawn {
				hs[len(rs)] = HUD{You: id, Follow: id, ShutdownIn: -1, Players: players}
				rs = append(rs, cut.renderer(ANSI256, 80, 24, &hs[len(rs)]))
			}
		}
		for _, id := range ids {
			if rng.IntN(8) == 0 {
				w.Turn(id, game.Dir(1+rng.IntN(4)))
			}
		}
		w.Step(uint64(k + 1))
		v := w.Acquire()
		for _, id := range ids {
			if s, ok := v.Snake(id); ok && !s.Alive && s.DeathTick != 0 {
				w.Respawn(id)
			}
		}
		for j, r := range rs {
			out := r.Frame(v, &hs[j])
			if k >= from {
				bytes += len(out)
				frames++
			}
		}
		v.Release()
	}
	return float64(bytes) / float64(frames)
}
