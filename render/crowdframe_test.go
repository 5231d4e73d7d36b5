package render

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"snaked/game"
	"snaked/internal/cpuclock"
)

// crowdSizes is the swarm's mix of terminal sizes (loadtest's ptySizes):
// half 80x24, then 100x30, 120x40, 160x48 and 200x60.
var crowdSizes = [...][2]int{
	{80, 24}, {80, 24}, {80, 24}, {80, 24}, {80, 24}, {80, 24}, {80, 24}, {80, 24}, {80, 24}, {80, 24},
	{100, 30}, {100, 30}, {100, 30}, {100, 30},
	{120, 40}, {120, 40}, {120, 40},
	{160, 48}, {160, 48},
	{200, 60},
}

// loadCrowd is the world of a production load run: the daemon's default world
// (2048x512, 16 bots, bots to its target of 512) with 2,500 players who
// play as the swarm does (a turn every 0.3-3 s, a dash now and then, space
// 1-4 s after a death), and sessions drawn for some of them at the swarm's
// mix of terminal sizes, each drawing every tick as a live session does.
type loadCrowd struct {
	w      *game.World
	rng    *rand.Rand
	ids    []game.ID
	next   []int // tick of each player's next key
	rs     []*Renderer
	hs     []HUD
	tick   uint64
	frames int
	bytes  int
}

// newLoadCrowd builds the loadCrowd, joins every player and steps warm ticks with
// every session drawing.
func newLoadCrowd(tb testing.TB, players, drawn, warm int) *loadCrowd {
	tb.Helper()
	return newLoadCrowdWith(tb, players, drawn, warm, options{})
}

// newLoadCrowdWith is newLoadCrowd with the sessions' renderers built
// with options o.
func newLoadCrowdWith(tb testing.TB, players, drawn, warm int, o options) *loadCrowd {
	tb.Helper()
	cfg := game.DefaultConfig()
	cfg.W, cfg.H = 2048, 512
	cfg.MaxSnakes = players + 600
	cfg.Bots, cfg.BotTarget = 16, game.AutoBotTarget(2048, 512)
	cfg.Seed = 11
	w, err := game.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	c := &loadCrowd{w: w, rng: rand.New(rand.NewPCG(11, 12))}
	for i := range players {
		id, err := w.Join("p" + strconv.Itoa(i))
		if err != nil {
			tb.Fatal(err)
		}
		c.ids = append(c.ids, id)
		c.next = append(c.next, c.rng.IntN(30))
		if i < drawn {
			sz := crowdSizes[i%len(crowdSizes)]
			c.rs = append(c.rs, newRenderer(ANSI16, sz[0], sz[1], 0, o))
			c.hs = append(c.hs, HUD{You: id, Follow: id, ShutdownIn: -1, Players: players, Spectators: players / 20,
				Join: "ssh -p 2222 snaked.example"})
		}
	}
	for range warm {
		c.step()
		c.draw()
	}
	c.frames, c.bytes = 0, 0
	return c
}

// step plays the players' keys due and steps the world.
func (c *loadCrowd) step() {
	c.tick++
	v := c.w.Acquire()
	for i, id := range c.ids {
		if int(c.tick) < c.next[i] {
			continue
		}
		s, ok := v.Snake(id)
		switch {
		case !ok:
		case !s.Alive:
			c.w.Respawn(id)
			c.next[i] = int(c.tick) + 10 + c.rng.IntN(30)
			continue
		case c.rng.IntN(10) == 0:
			c.w.Dash(id)
		default:
			d, _ := c.w.Heading(id)
			c.w.Turn(id, turn(d, c.rng.IntN(2) == 0))
		}
		c.next[i] = int(c.tick) + 3 + c.rng.IntN(27)
	}
	v.Release()
	c.w.Step(c.tick)
	// The view's scene, which a daemon makes once for its 2,500 sessions
	// (BenchmarkScene), is made here, not in the first of the 200
	// sessions drawn, which would count it 12 times over.
	v = c.w.Acquire()
	sceneFor(v)
	v.Release()
}

// draw renders the newest view for every session.
func (c *loadCrowd) draw() {
	v := c.w.Acquire()
	for j, r := range c.rs {
		c.bytes += len(r.Frame(v, &c.hs[j]))
		c.frames++
	}
	v.Release()
}

// measure draws one tick for every session: the benchmark's timed part,
// in a function of its own so that `make grind` counts it alone (not the
// warm-up's draws, whose first frames are whole repaints).
//
//go:noinline
func (c *loadCrowd) measure() { c.draw() }

// BenchmarkCrowdFrame is the renderer's cost where it matters: a frame for
// one session of a 2,500-player load run on the default world. Each op
// steps the world once (timer stopped) and draws 200 sessions at the
// swarm's mix of terminal sizes; ns/frame and B/frame are per session
// frame.
func BenchmarkCrowdFrame(b *testing.B) {
	c := newLoadCrowd(b, 2500, 200, 300)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		c.step()
		b.StartTimer()
		c.measure()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(c.frames), "ns/frame")
	b.ReportMetric(float64(c.bytes)/float64(c.frames), "B/frame")
}

// BenchmarkCrowdCold is BenchmarkCrowdFrame where a daemon's sessions
// find their state: cold. 2,500 sessions draw every tick (as in a load
// run at 2,500), and with "neighbour" a goroutine streams through 64 MiB
// meanwhile, as the swarm, the kernel's TCP path and a second process do
// to the shared cache in a load run (their render CPU a frame is ~1.5x
// this benchmark's quiet figure). Two sets of renderers draw the same
// views, taking turns by tick, so both find the same machine: "warm"
// warms each renderer's state first (Renderer.warm), "plain" does not;
// the us/frame metrics are each set's thread CPU time a frame
// (cpuclock.ThreadOrWall: wall time off Linux), ratio is warm/plain.
func BenchmarkCrowdCold(b *testing.B) {
	for _, nb := range []bool{false, true} {
		name := map[bool]string{false: "quiet", true: "neighbour"}[nb]
		b.Run(name, func(b *testing.B) { crowdCold(b, nb) })
	}
}

func crowdCold(b *testing.B, neighbour bool) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c := newLoadCrowdWith(b, 2500, 2500, 0, options{noWarm: true})
	sets := [2][]*Renderer{c.rs, nil}
	for _, r := range c.rs {
		sets[1] = append(sets[1], New(ANSI16, r.tcols, r.trows))
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	if neighbour {
		wg.Go(func() {
			buf := make([]uint64, 64<<20/8)
			for {
				select {
				case <-stop:
					return
				default:
				}
				for i := 0; i < len(buf); i += 8 {
					buf[i]++
				}
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()
	var d [2]time.Duration
	var bytes [2]int
	draw := func() {
		v := c.w.Acquire()
		for j := range 2 {
			k := (j + int(c.tick)) % 2
			t0 := cpuclock.ThreadOrWall()
			for i, r := range sets[k] {
				bytes[k] += len(r.Frame(v, &c.hs[i]))
			}
			d[k] += time.Duration(cpuclock.ThreadOrWall() - t0)
		}
		v.Release()
	}
	for range 40 { // past the first frames, whole repaints
		c.step()
		draw()
	}
	d, bytes = [2]time.Duration{}, [2]int{}
	frames := 0
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		c.step()
		b.StartTimer()
		draw()
		frames += len(c.rs)
	}
	b.StopTimer()
	b.ReportMetric(float64(d[0].Nanoseconds())/1e3/float64(frames), "plain-us/frame")
	b.ReportMetric(float64(d[1].Nanoseconds())/1e3/float64(frames), "warm-us/frame")
	b.ReportMetric(float64(d[1])/float64(d[0]), "ratio")
	if bytes[0] != bytes[1] {
		b.Errorf("plain and warm sent %d and %d bytes", bytes[0], bytes[1])
	}
}
