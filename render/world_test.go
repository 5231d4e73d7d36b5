package render

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"snaked/game"
	"snaked/internal/vtmodel"
)

// worldRun plays the standard scenario's shape on a real game.World: five
// scripted players (the followed one turning every 2-7 ticks, the others
// steering to stay near it), length 25 at spawn, fruit at a density that
// puts ~40 in an 80x24 view, 3,000 ticks; dead snakes respawn at once. It
// returns frame sizes after the first, the mean length of live snakes and
// the mean fruit in view.
func worldRun(tb testing.TB, enc strategy, term *vtmodel.Term) (sizes []int, length, fruit, inView float64) {
	return worldRunWith(tb, enc, term, hudCut{})
}

// worldRunWith is worldRun with the HUD cut as cut says
// (nil: nothing).
func worldRunWith(tb testing.TB, enc strategy, term *vtmodel.Term, cut hudCut) (sizes []int, length, fruit, inView float64) {
	w, err := game.New(game.Config{W: 400, H: 220, MaxSnakes: 16, Seed: scenSeed, Fruit: 1000, StartLen: 25})
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(scenSeed, 3))
	var ids [5]game.ID
	for i := range ids {
		if ids[i], err = w.Join("p" + strconv.Itoa(i)); err != nil {
			tb.Fatal(err)
		}
	}
	w.Step(1)
	h := &HUD{You: ids[0], Follow: ids[0], ShutdownIn: -1, Players: 5, Spectators: 2, Join: "ssh -p 2222 snaked.example"}
	r := cut.renderer(ANSI16, 80, 24, h)
	next := [5]int{}
	var lsum, lnum, fsum, vsum int
	for t := 0; t < scenTicks; t++ {
		v := w.Acquire()
		out := drawFrame(tb, r, v, h, enc, t, term)
		if t > 0 {
			sizes = append(sizes, len(out))
		}
		fsum += fruitInView(r)
		lead, _ := v.Snake(ids[0])
		for i, id := range ids {
			s, ok := v.Snake(id)
			if !ok {
				continue
			}
			if !s.Alive {
				w.Respawn(id)
				continue
			}
			lsum += s.Length
			lnum++
			if onScreen(r, v, v.Heads[id.Slot()]) {
				vsum++
			}
			if next[i]--; next[i] > 0 {
				continue
			}
			next[i] = 2 + rng.IntN(6)
			dir, _ := w.Heading(id)
			d := turn(dir, rng.IntN(2) == 0)
			if i > 0 && lead != nil && lead.Alive {
				lh, sh := v.Heads[ids[0].Slot()], v.Heads[id.Slot()]
				dx, dy := wrapDelta(lh.X-sh.X, v.W), wrapDelta(lh.Y-sh.Y, v.H)
				switch {
				case dx > 20 && dir != game.Left:
					d = game.Right
				case dx < -20 && dir != game.Right:
					d = game.Left
				case dy > 10 && dir != game.Up:
					d = game.Down
				case dy < -10 && dir != game.Down:
					d = game.Up
				}
			}
			w.Turn(id, d)
		}
		v.Release()
		w.Step(uint64(t + 2))
	}
	return sizes, float64(lsum) / float64(lnum), float64(fsum) / scenTicks, float64(vsum) / scenTicks
}

// BenchmarkWorld is BenchmarkScenario on a real game.World.
func BenchmarkWorld(b *testing.B) {
	for _, c := range []struct {
		name string
		enc  strategy
		cut  hudCut
	}{{"full", fullEnc, hudCut{}}, {"linediff", lineEnc, hudCut{}}, {"snaked", nil, hudCut{}},
		{"snaked-notags", nil, hudVariants[0].cut}, {"snaked-nohud", nil, hudVariants[1].cut}} {
		b.Run(c.name, func(b *testing.B) {
			var sizes []int
			var l, f, n float64
			for b.Loop() {
				sizes, l, f, n = worldRunWith(b, c.enc, nil, c.cut)
			}
			mean, p50, p95 := stats(sizes)
			b.ReportMetric(mean, "B/frame")
			b.ReportMetric(float64(p50), "p50-B/frame")
			b.ReportMetric(float64(p95), "p95-B/frame")
			b.ReportMetric(l, "snake-len")
			b.ReportMetric(f, "fruit-in-view")
			b.ReportMetric(n, "heads-in-view")
		})
	}
}

func TestWorldOracle(t *testing.T) {
	sizes, l, f, n := worldRun(t, nil, vtmodel.New(80, 24))
	mean, p50, p95 := stats(sizes)
	t.Logf("real world: snaked %.1f B/frame (p50 %d, p95 %d), mean length %.1f, fruit in view %.1f, heads in view %.1f", mean, p50, p95, l, f, n)
}
