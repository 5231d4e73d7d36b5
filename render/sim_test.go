package render

import (
	"math/rand/v2"
	"slices"

	"snaked/game"
)

// sim is a small deterministic stand-in world for tests and benchmarks: the
// followed snake wanders and turns every few ticks, the others stay near it,
// fruit is scattered evenly. Snakes pass through each other; no rules.
type sim struct {
	rng    *rand.Rand
	v      game.View
	snakes []simSnake
	dirty  []uint64     // View.Dirty, kept even while hidden
	fresh  []uint64     // View.Fresh, likewise
	freshX []uint16     // View.FreshX, likewise
	freshA []int32      // View.FreshAt, likewise
	freshB []int32      // View.FreshBlk, built from freshX and freshA
	freshP []game.Pixel // View.FreshPix, made from freshX as it is shown
	hidden bool         // hide: the view shows no Dirty, Fresh or FreshX
	coarse bool         // the view shows Dirty and Fresh but not FreshX
	every  int          // feedKills
	kills  int          // made-up kills so far
}

type simSnake struct {
	body  []game.Point // head first
	dir   game.Dir
	next  int // ticks until the next turn
	alive bool
}

var steps = [...]game.Point{game.Up: {X: 0, Y: -1}, game.Right: {X: 1}, game.Down: {Y: 1}, game.Left: {X: -1}}

// newSim returns a w x h world with n snakes of length l and the given
// number of fruit; snake 0 is the one to follow.
func newSim(seed uint64, w, h, n, l, fruit int) *sim {
	s := &sim{rng: rand.New(rand.NewPCG(seed, 7))}
	s.v = game.View{W: w, H: h, Pix: make([]game.Pixel, w*h), Snakes: make([]game.SnakeInfo, n), Heads: make([]game.Point, n)}
	s.dirty = make([]uint64, game.TilesW(w)*game.TilesH(h))
	s.fresh = make([]uint64, game.FreshWords(w)*game.TilesH(h))
	s.freshA = make([]int32, game.TilesH(h)+1)
	s.expose()
	c := game.Point{X: w / 2, Y: h / 2}
	for i := 0; i < n; i++ {
		p := c
		if i > 0 {
			p = game.Point{X: c.X + s.rng.IntN(60) - 30, Y: c.Y + s.rng.IntN(30) - 15}
		}
		sn := simSnake{dir: game.Right, alive: true, next: 3}
		for k := 0; k < l; k++ {
			sn.body = append(sn.body, game.Point{X: mod(p.X-k, w), Y: mod(p.Y, h)})
		}
		s.snakes = append(s.snakes, sn)
		s.v.Snakes[i] = game.SnakeInfo{
			ID: game.ID(i) | 1<<16, Name: "snake" + string(rune('a'+i%26)), Colour: game.Colour(i % 16),
			Used: true, Alive: true, Length: l,
		}
		s.v.Heads[i] = sn.body[0]
	}
	for k := 0; k < fruit; k++ {
		s.put(s.rng.IntN(w*h), game.MakePixel(game.Fruit, 0, 0))
	}
	s.draw()
	return s
}

func (s *sim) set(p game.Point, px game.Pixel) { s.put(p.Y*s.v.W+p.X, px) }

// put writes pixel i and marks its tile and cell changed at this tick.
func (s *sim) put(i int, px game.Pixel) {
	s.v.Pix[i] = px
	w := s.v.W
	x, y := i%w, i/w
	tx, ty := x/game.TileW, y/game.TileH
	s.dirty[ty*game.TilesW(w)+tx] = s.v.Tick
	s.fresh[ty*game.FreshWords(w)+tx/64] |= 1 << (tx % 64)
	at := s.freshA
	if k, ok := slices.BinarySearch(s.freshX[at[ty]:at[ty+1]], uint16(x)); !ok {
		s.freshX = slices.Insert(s.freshX, int(at[ty])+k, uint16(x))
		for r := ty + 1; r < len(at); r++ {
			at[r]++
		}
	}
	s.expose()
}

// hide hides View.Dirty, View.Fresh and View.FreshX (the renderer then
// composes whole frames) or shows them again.
func (s *sim) hide(on bool) {
	s.hidden = on
	s.expose()
}

// expose points the view at what the sim keeps, as hidden and coarse say.
func (s *sim) expose() {
	s.v.Dirty, s.v.Fresh, s.v.FreshX, s.v.FreshAt = s.dirty, s.fresh, s.freshX, s.freshA
	s.freshP, s.freshB = s.freshP[:0], s.freshB[:0]
	for t := range len(s.freshA) - 1 {
		row := s.freshX[s.freshA[t]:s.freshA[t+1]]
		for _, x := range row {
			var bot game.Pixel
			if y := t*game.TileH + 1; y < s.v.H {
				bot = s.v.Pix[y*s.v.W+int(x)]
			}
			s.freshP = append(s.freshP, s.v.Pix[t*game.TileH*s.v.W+int(x)], bot)
		}
		for b := range game.FreshBlocks(s.v.W) {
			k, _ := slices.BinarySearch(row, uint16(b*game.FreshBlock))
			s.freshB = append(s.freshB, s.freshA[t]+int32(k))
		}
	}
	s.v.FreshPix, s.v.FreshBlk = s.freshP, s.freshB
	if s.hidden {
		s.v.Dirty, s.v.Fresh = nil, nil
	}
	if s.hidden || s.coarse {
		s.v.FreshX, s.v.FreshAt, s.v.FreshPix, s.v.FreshBlk = nil, nil, nil, nil
	}
}

// tick advances the clock; a snake whose spawn protection ends now changes
// colour without a pixel write, so its tiles are marked.
func (s *sim) tick() {
	s.v.Tick++
	clear(s.fresh)
	clear(s.freshA)
	s.freshX = s.freshX[:0]
	s.expose()
	for i, sn := range s.snakes {
		if sn.alive && s.v.Snakes[i].ProtectedUntil == s.v.Tick {
			for _, p := range sn.body {
				s.set(p, s.v.Pix[p.Y*s.v.W+p.X])
			}
		}
	}
	s.v.MarkShields()
	s.v.MarkRanks()
}

func (s *sim) draw() {
	for i, sn := range s.snakes {
		if !sn.alive {
			continue
		}
		for k, p := range sn.body {
			kind := game.Body
			if k == 0 {
				kind = game.Head
			}
			s.set(p, game.MakePixel(kind, i, game.Colour(i%16)))
		}
	}
	s.v.MarkShields()
	s.v.MarkRanks()
}

func turn(d game.Dir, right bool) game.Dir {
	if right {
		return d%4 + 1
	}
	return (d+2)%4 + 1
}

// feedKills makes step report a made-up death near snake 0 every n ticks
// in View.Kills (nobody dies: the kill feed gets lines to show), cycling
// through cut-offs, self-kills and head-ons (two entries) among the other
// snakes' names.
func (s *sim) feedKills(n int) { s.every = n }

// addKill appends the next made-up kill and forgets those older than
// game.KillTicks.
func (s *sim) addKill() {
	k := s.kills
	s.kills++
	n := len(s.snakes)
	a, b := 1+k%(n-1), 1+(k+1)%(n-1)
	at := s.snakes[0].body[0]
	at.X = mod(at.X+k*17%41-20, s.v.W) // not from s.rng: the world stays the same
	kl := game.Kill{Tick: s.v.Tick, Victim: s.v.Snakes[a].Name, VictimSlot: a, Length: 25, KillerSlot: -1, At: at}
	switch k % 3 {
	case 0:
		kl.Killer, kl.KillerSlot = s.v.Snakes[b].Name, b
		s.v.Kills = append(s.v.Kills, kl)
	case 1:
		s.v.Kills = append(s.v.Kills, kl)
	default:
		kl.HeadOn, kl.Other = true, s.v.Snakes[b].Name
		s.v.Kills = append(s.v.Kills, kl)
		kl.Victim, kl.VictimSlot, kl.Other = kl.Other, b, kl.Victim
		s.v.Kills = append(s.v.Kills, kl)
	}
	i := 0
	for i < len(s.v.Kills) && s.v.Kills[i].Tick+game.KillTicks <= s.v.Tick {
		i++
	}
	s.v.Kills = append(s.v.Kills[:0], s.v.Kills[i:]...)
}

// step advances one tick.
func (s *sim) step() {
	s.tick()
	if s.every > 0 && s.v.Tick%uint64(s.every) == 0 {
		s.addKill()
	}
	w, h := s.v.W, s.v.H
	lead := s.snakes[0].body[0]
	for i := range s.snakes {
		sn := &s.snakes[i]
		if !sn.alive {
			continue
		}
		if sn.next--; sn.next <= 0 {
			sn.dir = turn(sn.dir, s.rng.IntN(2) == 0)
			sn.next = 2 + s.rng.IntN(6)
			if i > 0 {
				// stay near the leader
				hd := sn.body[0]
				dx, dy := wrapDelta(lead.X-hd.X, w), wrapDelta(lead.Y-hd.Y, h)
				switch {
				case dx > 20 && sn.dir != game.Left:
					sn.dir = game.Right
				case dx < -20 && sn.dir != game.Right:
					sn.dir = game.Left
				case dy > 10 && sn.dir != game.Up:
					sn.dir = game.Down
				case dy < -10 && sn.dir != game.Down:
					sn.dir = game.Up
				}
			}
		}
		st := steps[sn.dir]
		hd := sn.body[0]
		nh := game.Point{X: mod(hd.X+st.X, w), Y: mod(hd.Y+st.Y, h)}
		if s.v.Pix[nh.Y*w+nh.X].Kind() == game.Fruit {
			// eaten: a new fruit appears somewhere else
			s.put(s.rng.IntN(w*h), game.MakePixel(game.Fruit, 0, 0))
		}
		tail := sn.body[len(sn.body)-1]
		s.set(tail, 0)
		copy(sn.body[1:], sn.body)
		sn.body[0] = nh
		s.set(hd, game.MakePixel(game.Body, i, game.Colour(i%16)))
		s.set(nh, game.MakePixel(game.Head, i, game.Colour(i%16)))
		s.v.Heads[i] = nh
	}
}

// kill removes snake i from the field, in a tick of its own.
func (s *sim) kill(i int, by string) {
	sn := &s.snakes[i]
	if !sn.alive {
		return
	}
	s.tick()
	for _, p := range sn.body {
		s.set(p, 0)
	}
	sn.alive = false
	in := &s.v.Snakes[i]
	in.Alive, in.DeathTick, in.KilledBy = false, s.v.Tick, by
}

// respawn puts snake i back, in a tick of its own, at a random place (half
// the time near snake 0), protected for 30 ticks.
func (s *sim) respawn(i int) {
	sn := &s.snakes[i]
	if sn.alive {
		return
	}
	s.tick()
	p := game.Point{X: s.rng.IntN(s.v.W), Y: s.rng.IntN(s.v.H)}
	if l := s.snakes[0]; l.alive && s.rng.IntN(2) == 0 {
		p = game.Point{X: mod(l.body[0].X+s.rng.IntN(41)-20, s.v.W), Y: mod(l.body[0].Y+s.rng.IntN(21)-10, s.v.H)}
	}
	for k := range sn.body {
		sn.body[k] = game.Point{X: mod(p.X-k, s.v.W), Y: p.Y}
	}
	sn.dir, sn.alive = game.Right, true
	in := &s.v.Snakes[i]
	in.Alive, in.SpawnTick, in.ProtectedUntil = true, s.v.Tick, s.v.Tick+30
	s.v.Heads[i] = sn.body[0]
	s.draw()
}
