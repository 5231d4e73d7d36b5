package game

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"snaked/internal/cpuclock"
)

// benchCase is one row of BenchmarkStep: n snakes, all bots or all players,
// on area times the default density's area (about 256 pixels per snake),
// or on the world AutoSize(n) sizes (about 350) when area is 0; or, when
// w > 0, n players on a w x h world with bots (floor) and target
// (Config.BotTarget). A sim row's world is built as a simulation builds
// its own: its views carry pixels only when asked for, and no render index
// (Config.LazyPixels), so its Step publishes the records alone.
type benchCase struct {
	bots    bool
	sim     bool
	n, area int

	w, h, floor, target int
}

func (c benchCase) name() string {
	kind := "players"
	if c.bots {
		kind = "bots"
	}
	// one level of the name (commas, not slashes): -bench's pattern for
	// a row then matches that row alone
	s := fmt.Sprintf("%s=%d", kind, c.n)
	if c.w > 0 {
		return s + fmt.Sprintf(",%dx%d,bots=%d,target=%d", c.w, c.h, c.floor, c.target)
	}
	if c.area > 1 {
		s += fmt.Sprintf(",area=x%d", c.area)
	}
	if c.sim {
		s += ",sim"
	}
	return s
}

// Start lengths chosen so the measured average length (the len metric)
// settles near 20: bots seek fruit and grow, scripted players rarely eat.
const (
	benchBotLen    = 16
	benchPlayerLen = 15
)

// players is a seeded script standing in for people. Each tick a player
// presses a random arrow key with probability 1/10 (about one key a second;
// not into a snake next to its head)
// and dashes with probability 1/150. Half the time it turns towards fruit
// within 3 pixels to its left or right. When the pixel ahead of its head holds a
// body it sidesteps (to a free side if there is one) with probability 0.95:
// people see what is coming, but not always in time. It asks to respawn 2 s
// after dying.
type players struct {
	ids []ID
	rng *rand.Rand
}

func (p *players) act(w *World) {
	v := w.Acquire()
	g := grid{w.Feed().Pixels(), v.W, v.H} // the world's pixels: a sim row's views carry none
	for _, id := range p.ids {
		s, ok := v.Snake(id)
		if !ok {
			continue
		}
		head, dir := v.Heads[id.Slot()], w.Feed().Dir(id.Slot())
		if !s.Alive {
			if v.Tick >= s.DeathTick+2*TicksPerSecond {
				w.Respawn(id)
			}
			continue
		}
		r := p.rng.IntN(1200)
		if blocked(g, head, dir) && r < 1140 {
			d := left(dir)
			if r&1 == 0 {
				d = right(dir)
			}
			if blocked(g, head, d) {
				d = reverse(d)
			}
			w.Turn(id, d)
			continue
		}
		if r < 600 {
			// people go for the fruit they see beside them
			if d := fruitSide(g, head, dir); d != None {
				w.Turn(id, d)
				continue
			}
		}
		switch {
		case r < 120:
			if d := Dir(1 + r%4); !blocked(g, head, d) {
				w.Turn(id, d)
			}
		case r < 128:
			w.Dash(id)
		}
	}
	v.Release()
}

// grid is a world's pixels, as the players script reads them.
type grid struct {
	pix  []Pixel
	w, h int
}

// At returns the pixel at (x, y), both wrapped onto the world.
func (g grid) At(x, y int) Pixel { return g.pix[wrap(y, g.h)*g.w+wrap(x, g.w)] }

// fruitSide returns the side (left or right of d) with fruit within 3
// pixels of h, or None.
func fruitSide(v grid, h Point, d Dir) Dir {
	for k := 1; k <= 3; k++ {
		for _, t := range [2]Dir{left(d), right(d)} {
			dx, dy := delta(t)
			if v.At(h.X+k*dx, h.Y+k*dy).Kind() == Fruit {
				return t
			}
		}
	}
	return None
}

// blocked reports whether the pixel next to h in direction d holds a snake.
func blocked(v grid, h Point, d Dir) bool {
	dx, dy := delta(d)
	return v.At(h.X+dx, h.Y+dy).Kind() >= Body
}

// benchWorld builds the world of c and lets it settle for 200 ticks (2,000
// for a world with a bot target, so the bots New put in for the target
// have stepped aside for the players). For players it returns the script
// driving them (nil for bots).
func benchWorld(b testing.TB, c benchCase) (*World, *players) {
	h := c.n * 256 * c.area / 2048
	cfg := Config{W: 2048, H: h, MaxSnakes: c.n, Seed: 7}
	if c.area == 0 {
		cfg.W, cfg.H = AutoSize(c.n)
	}
	if c.w > 0 {
		cfg = Config{W: c.w, H: c.h, MaxSnakes: c.n + max(c.floor, c.target), Bots: c.floor, BotTarget: c.target, Seed: 7}
	}
	cfg.LazyPixels = c.sim
	var p *players
	if c.bots {
		cfg.Bots, cfg.StartLen = c.n, benchBotLen
	} else {
		cfg.StartLen = benchPlayerLen
		p = &players{rng: rand.New(rand.NewPCG(7, 8))}
	}
	w, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if p != nil {
		for k := 0; k < c.n; k++ {
			id, err := w.Join(fmt.Sprintf("p%d", k))
			if err != nil {
				b.Fatal(err)
			}
			p.ids = append(p.ids, id)
		}
	}
	warm := uint64(200)
	if c.w > 0 {
		warm = 2000
	}
	for t := uint64(1); t <= warm; t++ {
		if p != nil {
			p.act(w)
		}
		w.Step(t)
	}
	return w, p
}

// The players=2500 row is the daemon's default world (AutoSize(3000) is
// 2048x512, AutoBotTarget(2048, 512) is 512, the floor is 16): at 2,500
// players the target asks for no bots beyond the floor. TestAutoDefaults
// keeps these numbers equal to AutoSize and AutoBotTarget.
var benchCases = []benchCase{
	{n: 1000, area: 1}, {n: 5000, area: 1}, {n: 10000, area: 1}, {n: 10000, area: 4},
	{n: 2500, w: 2048, h: 512, floor: 16, target: 512},
	{bots: true, n: 1000, area: 1}, {bots: true, n: 2500, area: 1}, {bots: true, n: 5000, area: 1},
	{bots: true, n: 10000, area: 1}, {bots: true, n: 10000, area: 4},
	{n: 100000}, {bots: true, n: 100000},
	{n: 10000, area: 1, sim: true}, {bots: true, n: 10000, area: 1, sim: true},
	{n: 100000, sim: true}, {bots: true, n: 100000, sim: true},
}

// benchKept holds the worlds of the rows of at least keepN snakes from
// one run of their row to the next (a -count or -cpu repeat), so that each
// warms up once.
var benchKept = map[string]struct {
	w *World
	p *players
}{}

const keepN = 100000

// setWorkers gives w n workers (see Config.Workers).
func setWorkers(w *World, n int) {
	w.Close()
	w.closed = false
	w.setWorkers(n)
}

// BenchmarkStep times Step alone, on as many workers as -cpu sets
// GOMAXPROCS to. For players, the script's Turn/Dash/Respawn calls run
// between Steps with the timer stopped (their cost to Step, draining the
// queue, is timed).
// cpu-ns/op is the process's CPU time around each Step (Unix only).
func BenchmarkStep(b *testing.B) {
	for _, c := range benchCases {
		b.Run(c.name(), func(b *testing.B) {
			var w *World
			var p *players
			if k, ok := benchKept[c.name()]; ok {
				w, p = k.w, k.p
			} else if w, p = benchWorld(b, c); c.n >= keepN {
				benchKept[c.name()] = struct {
					w *World
					p *players
				}{w, p}
			}
			setWorkers(w, runtime.GOMAXPROCS(0))
			// The workers start, and the new parts' lists (deaths,
			// dashers, conflicts) grow to what the world needs, untimed.
			for range 20 {
				if p != nil {
					p.act(w)
				}
				w.Step(w.tick + 1)
			}
			t := w.tick
			b.ReportAllocs()
			b.ResetTimer()
			var cpu int64
			for i := 0; i < b.N; i++ {
				if p != nil {
					b.StopTimer()
					p.act(w)
					b.StartTimer()
				}
				t++
				c0 := cpuclock.Process()
				w.Step(t)
				cpu += cpuclock.Process() - c0
			}
			b.StopTimer()
			if cpuclock.Process() >= 0 {
				b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			}
			v := w.Acquire()
			alive, total := 0, 0
			for _, s := range v.Snakes {
				if s.Alive {
					alive++
					total += s.Length
				}
			}
			bots := v.Bots
			v.Release()
			if alive > 0 {
				b.ReportMetric(float64(total)/float64(alive), "len")
				b.ReportMetric(float64(alive), "alive")
			}
			if !c.bots {
				b.ReportMetric(float64(bots), "bots")
			}
		})
	}
}

// BenchmarkWorkers steps four worlds in turns in one process: 100,000
// snakes (the simulation's world, BenchmarkStep's ,sim row) on one worker,
// the same world (the same seed and script, so the same steps) on -cpu
// workers, the 10,000-snake ,sim world on one worker, and that world
// again (the same steps) on one worker stepped cold: before each of its
// timed steps the benchmark reads evictBytes of its own (reads, so that
// the step does not also pay for writing back what the eviction
// dirtied), so the step
// finds none of its data in the caches, as the 100,000-snake world finds
// little of its own (its step touches more than the last-level cache
// holds). Each takes workersRun ticks in a row, then the next (the first
// of the four rotating), so that the machine's ups and downs fall on the
// four alike: separate runs of BenchmarkStep's rows differ more than the
// rows do on this machine. An op is a tick of each. The first tick of a
// run comes after the other worlds' steps have been through the caches
// and is not timed; the others find their own last step's data there, as
// a world stepped alone does, but for the cold world's. one-ms,
// workers-ms, 10k-ms and 10k-cold-ms are the mean timed steps (wall
// clock); speedup is one-ms over workers-ms (the target: at least 1.6 on
// 2 workers), x10k workers-ms over 10k-ms (the target: at most 6),
// x10k-cold workers-ms over 10k-cold-ms and cold 10k-cold-ms over 10k-ms
// (what the caches give the small world); alive and 10k-alive are the
// mean live snakes of the big and the small world. ns/op counts
// everything an op does (the players' script, the untimed ticks, the
// evictions): read the metrics. The two 100,000 worlds' grids must be
// the same at the end, and so must the two 10,000 worlds'.
func BenchmarkWorkers(b *testing.B) {
	for _, bots := range []bool{false, true} {
		big := benchCase{bots: bots, n: 100000, sim: true}
		small := benchCase{bots: bots, n: 10000, area: 1, sim: true}
		b.Run(big.name(), func(b *testing.B) {
			type turn struct {
				w     *World
				p     *players
				cold  bool
				d     time.Duration
				n     int
				alive int
			}
			var ts [4]turn
			kept, ok := workersKept[big.name()]
			for k, c := range [4]benchCase{big, big, small, small} {
				if !ok {
					kept[k].w, kept[k].p = benchWorld(b, c)
				}
				ts[k].w, ts[k].p = kept[k].w, kept[k].p
			}
			workersKept[big.name()] = kept
			ts[3].cold = true
			setWorkers(ts[0].w, 1)
			setWorkers(ts[1].w, runtime.GOMAXPROCS(0))
			setWorkers(ts[2].w, 1)
			setWorkers(ts[3].w, 1)
			evict := make([]uint64, evictBytes/8)
			for i := range evict {
				evict[i] = uint64(i) // every page written: none is the zero page
			}
			step := func(t *turn, timed bool) {
				if t.p != nil {
					t.p.act(t.w)
				}
				if t.cold && timed {
					var sum uint64
					for _, x := range evict {
						sum += x
					}
					evictSum += sum
				}
				t0 := time.Now()
				t.w.Step(t.w.tick + 1)
				if timed {
					t.d += time.Since(t0)
					t.n++
					t.alive += len(t.w.heads)
				}
			}
			// the workers start and the parts' lists grow, untimed
			for range 20 {
				for k := range ts {
					step(&ts[k], false)
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i += workersRun {
				for k := range ts {
					t := &ts[(i/workersRun+k)%len(ts)]
					for j := range min(workersRun, b.N-i) + 1 {
						step(t, j > 0)
					}
				}
			}
			b.StopTimer()
			for k := range ts {
				ts[k].w.Close()
			}
			if ts[0].w.tick != ts[1].w.tick || !slices.Equal(ts[0].w.grid, ts[1].w.grid) {
				b.Fatalf("the worlds of one seed on 1 and %d workers went apart by tick %d", runtime.GOMAXPROCS(0), ts[1].w.tick)
			}
			if ts[2].w.tick != ts[3].w.tick || !slices.Equal(ts[2].w.grid, ts[3].w.grid) {
				b.Fatalf("the small worlds of one seed went apart by tick %d", ts[3].w.tick)
			}
			ms := func(t turn) float64 { return float64(t.d) / float64(t.n) / 1e6 }
			b.ReportMetric(ms(ts[0]), "one-ms")
			b.ReportMetric(ms(ts[1]), "workers-ms")
			b.ReportMetric(ms(ts[2]), "10k-ms")
			b.ReportMetric(ms(ts[3]), "10k-cold-ms")
			b.ReportMetric(ms(ts[0])/ms(ts[1]), "speedup")
			b.ReportMetric(ms(ts[1])/ms(ts[2]), "x10k")
			b.ReportMetric(ms(ts[1])/ms(ts[3]), "x10k-cold")
			b.ReportMetric(ms(ts[3])/ms(ts[2]), "cold")
			b.ReportMetric(float64(ts[0].alive)/float64(ts[0].n), "alive")
			b.ReportMetric(float64(ts[2].alive)/float64(ts[2].n), "10k-alive")
		})
	}
}

// workersKept holds BenchmarkWorkers' worlds, by row, from one run of the
// row to the next (a -count or -cpu repeat), as benchKept does.
var workersKept = map[string][4]struct {
	w *World
	p *players
}{}

// workersRun is how many timed ticks in a row each world takes in
// BenchmarkWorkers.
const workersRun = 10

// evictBytes is how much BenchmarkWorkers writes before each timed step of
// its cold world: four times the 32 MB last-level cache of the machines
// the figures come from, so that little of the world's data survives it.
const evictBytes = 128 << 20

// evictSum keeps BenchmarkWorkers' eviction reads from being optimized
// away.
var evictSum uint64

// BenchmarkGridLoads measures what this machine gives the step's kind of
// work, apart from the rules: random 4-byte loads from a grid the size of
// BenchmarkWorkers' two worlds (2048x1250 for 10,000 snakes, AutoSize's
// 11840x2960 for 100,000), each load's place drawn independently of the
// others (so their misses may overlap, as the step's loads of different
// snakes' pixels may), on one goroutine and on GOMAXPROCS at once. An op
// times four runs of gridLoads loads a goroutine, by turns in one process
// (the first rotating): the small grid on one goroutine and on all, the
// big one on one and on all. small-ns and big-ns are a load's mean time on
// one goroutine; big-all-ns the wall time of the big grid's run on all
// goroutines over the loads they made together; gain is big-ns over
// big-all-ns (how much more the goroutines load together than one alone;
// small-gain the same for the small grid) and xsmall big-ns over small-ns
// (what a load costs from the big grid against the small).
func BenchmarkGridLoads(b *testing.B) {
	n := runtime.GOMAXPROCS(0)
	bw, bh := AutoSize(100000)
	grids := [2][]Pixel{make([]Pixel, 2048*1250), make([]Pixel, bw*bh)}
	for _, g := range grids {
		for i := range g {
			g[i] = Pixel(i) // every page written: none is the zero page
		}
	}
	sink := make([]Pixel, 16*n) // a goroutine's result a line apart from the next's
	run := func(g []Pixel, goroutines int) time.Duration {
		var wg sync.WaitGroup
		t0 := time.Now()
		for k := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				z := uint64(k+1) * 0x9e3779b97f4a7c15
				m := uint64(len(g))
				var acc Pixel
				for range gridLoads {
					z = z*6364136223846793005 + 1442695040888963407
					acc |= g[(z>>32)*m>>32]
				}
				sink[16*k] = acc
			}()
		}
		wg.Wait()
		return time.Since(t0)
	}
	var d [4]time.Duration // small on one, small on all, big on one, big on all
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range d {
			c := (i + k) % len(d)
			d[c] += run(grids[c/2], 1+c%2*(n-1))
		}
	}
	b.StopTimer()
	loads := float64(b.N) * gridLoads
	one := func(c int) float64 { return float64(d[c]) / loads }
	all := func(c int) float64 { return float64(d[c]) / loads / float64(n) }
	b.ReportMetric(one(0), "small-ns")
	b.ReportMetric(one(2), "big-ns")
	b.ReportMetric(all(3), "big-all-ns")
	b.ReportMetric(one(2)/all(3), "gain")
	b.ReportMetric(one(0)/all(1), "small-gain")
	b.ReportMetric(one(2)/one(0), "xsmall")
}

// gridLoads is how many loads a goroutine makes in each of
// BenchmarkGridLoads' runs.
const gridLoads = 1 << 20

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
