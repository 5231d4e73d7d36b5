package game

import (
	"errors"
	"strings"
	"testing"
)

// bare returns a 16x16 world with no bots and no fruit.
func bare(t *testing.T) *World {
	t.Helper()
	w, err := New(Config{W: 16, H: 16, MaxSnakes: 8, Seed: 1, StartLen: 2, Fruit: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range w.grid {
		w.grid[i] = 0
	}
	w.fruit, w.cfg.Fruit = 0, 0
	return w
}

// place adds an unprotected snake with the given body (tail first, head
// last) and direction, bypassing the spawn search.
func place(t *testing.T, w *World, name string, d Dir, body ...Point) ID {
	t.Helper()
	id, err := w.Join(name)
	if err != nil {
		t.Fatal(err)
	}
	w.drain(0)
	w.spawnq = w.spawnq[:0]
	s := &w.snakes[id.Slot()]
	s.tail, s.length = 0, 0
	s.colour = Colour(1 + id.Slot())
	for k, p := range body {
		i := w.idx(p.X, p.Y)
		s.push(i, int32(int(i)%w.w), int32(int(i)/w.w))
		kind := Body
		if k == len(body)-1 {
			kind = Head
		}
		w.set(i, MakePixel(kind, id.Slot(), s.colour))
	}
	s.best = s.length
	s.alive, s.wantLife = true, false
	w.setDir(int32(id.Slot()), s, d)
	w.heading[id.Slot()] = d
	return id
}

func fruitAt(w *World, x, y int) {
	w.set(w.idx(x, y), MakePixel(Fruit, 0, 0))
	w.fruit++
}

func pt(x, y int) Point { return Point{x, y} }

func run(t *testing.T, w *World, ticks int) {
	t.Helper()
	for k := 0; k < ticks; k++ {
		w.Step(w.tick + 1)
		if err := w.check(); err != nil {
			t.Fatalf("tick %d: %v", w.tick, err)
		}
	}
}

func info(t *testing.T, w *World, id ID) snakeAt {
	t.Helper()
	v := w.Acquire()
	defer v.Release()
	s, ok := v.Snake(id)
	if !ok {
		t.Fatalf("snake %x not in view", id)
	}
	return snakeAt{*s, v.Heads[id.Slot()], w.Feed().Dir(id.Slot())}
}

// snakeAt is a snake's info and head, as a view shows them, and its dir
// (which views do not carry).
type snakeAt struct {
	SnakeInfo
	Head Point
	Dir  Dir
}

func TestMoveAndWrap(t *testing.T) {
	cases := []struct {
		name string
		d    Dir
		body []Point
		head Point
	}{
		{"right", Right, []Point{pt(1, 1), pt(2, 1), pt(3, 1)}, pt(4, 1)},
		{"right wraps", Right, []Point{pt(13, 1), pt(14, 1), pt(15, 1)}, pt(0, 1)},
		{"left wraps", Left, []Point{pt(2, 4), pt(1, 4), pt(0, 4)}, pt(15, 4)},
		{"up wraps", Up, []Point{pt(4, 2), pt(4, 1), pt(4, 0)}, pt(4, 15)},
		{"down wraps", Down, []Point{pt(4, 13), pt(4, 14), pt(4, 15)}, pt(4, 0)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := bare(t)
			id := place(t, w, "a", c.d, c.body...)
			run(t, w, 1)
			s := info(t, w, id)
			if !s.Alive || s.Head != c.head || s.Length != 3 {
				t.Fatalf("got alive=%v head=%v len=%d, want head %v len 3", s.Alive, s.Head, s.Length, c.head)
			}
			if p := w.grid[w.idx(c.body[0].X, c.body[0].Y)]; p != 0 {
				t.Fatalf("old tail pixel still %x", p)
			}
		})
	}
}

// TestCollisions covers each collision rule, in the middle and across the
// wrap edges. Snake "a" is judged; "b" is the other snake (if any).
func TestCollisions(t *testing.T) {
	type want struct {
		aAlive, bAlive bool
		aKilledBy      string
		bKills         int
	}
	cases := []struct {
		name   string
		aDir   Dir
		a      []Point
		bDir   Dir
		b      []Point
		bGrow  int
		aGrow  int
		want   want
		ticks  int
		aCheck func(t *testing.T, w *World, a snakeAt)
	}{
		{name: "into other body", aDir: Right, a: []Point{pt(2, 2), pt(3, 2), pt(4, 2)},
			bDir: Down, b: []Point{pt(5, 0), pt(5, 1), pt(5, 2), pt(5, 3), pt(5, 4)},
			want: want{false, true, "b", 1}},
		{name: "into other body across x wrap", aDir: Right, a: []Point{pt(13, 2), pt(14, 2), pt(15, 2)},
			bDir: Down, b: []Point{pt(0, 0), pt(0, 1), pt(0, 2), pt(0, 3), pt(0, 4)},
			want: want{false, true, "b", 1}},
		{name: "into other body across y wrap", aDir: Up, a: []Point{pt(7, 2), pt(7, 1), pt(7, 0)},
			bDir: Right, b: []Point{pt(5, 15), pt(6, 15), pt(7, 15), pt(8, 15), pt(9, 15)},
			want: want{false, true, "b", 1}},
		{name: "into own body", aDir: Up, a: []Point{pt(3, 3), pt(4, 3), pt(5, 3), pt(5, 4), pt(4, 4)},
			want: want{false, false, "", 0}},
		{name: "own tail leaves", aDir: Up, a: []Point{pt(3, 3), pt(4, 3), pt(4, 4), pt(3, 4)},
			want: want{true, false, "", 0}},
		{name: "own tail leaves across wrap", aDir: Up, a: []Point{pt(15, 15), pt(0, 15), pt(0, 0), pt(15, 0)},
			want: want{true, false, "", 0}},
		{name: "own tail stays while growing", aDir: Up, aGrow: 1, a: []Point{pt(3, 3), pt(4, 3), pt(4, 4), pt(3, 4)},
			want: want{false, false, "", 0}},
		{name: "other tail leaves", aDir: Right, a: []Point{pt(2, 2), pt(3, 2), pt(4, 2)},
			bDir: Down, b: []Point{pt(5, 2), pt(5, 3), pt(5, 4)},
			want: want{true, true, "", 0}},
		{name: "other tail leaves across wrap", aDir: Left, a: []Point{pt(2, 2), pt(1, 2), pt(0, 2)},
			bDir: Down, b: []Point{pt(15, 2), pt(15, 3), pt(15, 4)},
			want: want{true, true, "", 0}},
		{name: "other growing tail stays", aDir: Right, a: []Point{pt(2, 2), pt(3, 2), pt(4, 2)},
			bDir: Down, bGrow: 1, b: []Point{pt(5, 2), pt(5, 3), pt(5, 4)},
			want: want{false, true, "b", 1}},
		{name: "head-on same pixel", aDir: Right, a: []Point{pt(1, 5), pt(2, 5), pt(3, 5)},
			bDir: Left, b: []Point{pt(7, 5), pt(6, 5), pt(5, 5)},
			want: want{false, false, "b", 0}},
		{name: "head-on same pixel across wrap", aDir: Right, a: []Point{pt(13, 5), pt(14, 5), pt(15, 5)},
			bDir: Left, b: []Point{pt(3, 5), pt(2, 5), pt(1, 5)},
			want: want{false, false, "b", 0}},
		{name: "head-on perpendicular", aDir: Right, a: []Point{pt(1, 5), pt(2, 5), pt(3, 5)},
			bDir: Up, b: []Point{pt(4, 8), pt(4, 7), pt(4, 6)},
			want: want{false, false, "b", 0}},
		{name: "swap", aDir: Right, a: []Point{pt(1, 5), pt(2, 5), pt(3, 5)},
			bDir: Left, b: []Point{pt(6, 5), pt(5, 5), pt(4, 5)},
			want: want{false, false, "b", 0}},
		{name: "swap across wrap", aDir: Right, a: []Point{pt(13, 5), pt(14, 5), pt(15, 5)},
			bDir: Left, b: []Point{pt(2, 5), pt(1, 5), pt(0, 5)},
			want: want{false, false, "b", 0}},
		{name: "into head moving away", aDir: Right, a: []Point{pt(1, 5), pt(2, 5), pt(3, 5)},
			bDir: Down, b: []Point{pt(4, 3), pt(4, 4), pt(4, 5)},
			want: want{false, true, "b", 1}},
		{name: "death turns body into fruit", aDir: Right, a: []Point{pt(0, 9), pt(1, 9), pt(2, 9), pt(3, 9), pt(4, 9), pt(5, 9)},
			bDir: Down, b: []Point{pt(6, 7), pt(6, 8), pt(6, 9), pt(6, 10)},
			want: want{false, true, "b", 1},
			aCheck: func(t *testing.T, w *World, a snakeAt) {
				// tail (0,9) left; (1,9),(3,9),(5,9) fruit; (2,9),(4,9) empty.
				for x, k := range []Kind{Empty, Fruit, Empty, Fruit, Empty, Fruit, Body} {
					if got := w.grid[w.idx(x, 9)].Kind(); got != k {
						t.Errorf("pixel (%d,9) kind %d, want %d", x, got, k)
					}
				}
				if a.Length != 6 {
					t.Errorf("dead length %d, want 6", a.Length)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := bare(t)
			a := place(t, w, "a", c.aDir, c.a...)
			w.snakes[a.Slot()].grow = c.aGrow
			var b ID
			if c.b != nil {
				b = place(t, w, "b", c.bDir, c.b...)
				w.snakes[b.Slot()].grow = c.bGrow
			}
			run(t, w, 1)
			sa := info(t, w, a)
			if sa.Alive != c.want.aAlive || sa.KilledBy != c.want.aKilledBy {
				t.Errorf("a: alive=%v killedBy=%q, want %v %q", sa.Alive, sa.KilledBy, c.want.aAlive, c.want.aKilledBy)
			}
			if sa.Kills != 0 {
				t.Errorf("a: kills %d", sa.Kills)
			}
			if b != 0 {
				sb := info(t, w, b)
				if sb.Alive != c.want.bAlive || sb.Kills != c.want.bKills {
					t.Errorf("b: alive=%v kills=%d, want %v %d", sb.Alive, sb.Kills, c.want.bAlive, c.want.bKills)
				}
			}
			if c.aCheck != nil {
				c.aCheck(t, w, sa)
			}
		})
	}
}

func TestThreeHeadsOnePixel(t *testing.T) {
	w := bare(t)
	a := place(t, w, "a", Right, pt(2, 5), pt(3, 5))
	b := place(t, w, "b", Left, pt(6, 5), pt(5, 5))
	c := place(t, w, "c", Up, pt(4, 7), pt(4, 6))
	run(t, w, 1)
	for _, id := range []ID{a, b, c} {
		if s := info(t, w, id); s.Alive {
			t.Errorf("%s survived a three-way head-on", s.Name)
		}
	}
}

func TestProtection(t *testing.T) {
	t.Run("turns aside", func(t *testing.T) {
		w := bare(t)
		p := place(t, w, "p", Right, pt(1, 8), pt(2, 8), pt(3, 8))
		place(t, w, "wall", Down, pt(4, 6), pt(4, 7), pt(4, 8), pt(4, 9), pt(4, 10))
		w.snakes[p.Slot()].protectedUntil = 100
		run(t, w, 1)
		s := info(t, w, p)
		if !s.Alive || s.Head != pt(3, 7) || s.Dir != Up {
			t.Fatalf("protected: alive=%v head=%v dir=%v, want alive at (3,7) heading up", s.Alive, s.Head, s.Dir)
		}
	})
	t.Run("waits when boxed in", func(t *testing.T) {
		w := bare(t)
		p := place(t, w, "p", Right, pt(2, 8), pt(3, 8))
		place(t, w, "wall", Down, pt(4, 7), pt(4, 8), pt(4, 9), pt(4, 10))
		place(t, w, "top", Left, pt(5, 6), pt(4, 6), pt(3, 6), pt(3, 7))
		place(t, w, "bot", Left, pt(5, 11), pt(4, 11), pt(3, 11), pt(3, 10), pt(3, 9))
		w.snakes[p.Slot()].protectedUntil = 100
		w.Step(1)
		s := info(t, w, p)
		if !s.Alive || s.Head != pt(3, 8) {
			t.Fatalf("protected boxed in: alive=%v head=%v, want waiting at (3,8)", s.Alive, s.Head)
		}
	})
	t.Run("solid to others", func(t *testing.T) {
		w := bare(t)
		p := place(t, w, "p", Down, pt(5, 0), pt(5, 1), pt(5, 2), pt(5, 3), pt(5, 4))
		a := place(t, w, "a", Right, pt(2, 2), pt(3, 2), pt(4, 2))
		w.snakes[p.Slot()].protectedUntil = 100
		run(t, w, 1)
		if s := info(t, w, a); s.Alive || s.KilledBy != "p" {
			t.Fatalf("a: alive=%v killedBy=%q", s.Alive, s.KilledBy)
		}
		if s := info(t, w, p); !s.Alive || s.Kills != 1 {
			t.Fatalf("p: alive=%v kills=%d", s.Alive, s.Kills)
		}
	})
	t.Run("contested pixel yields", func(t *testing.T) {
		w := bare(t)
		p := place(t, w, "p", Right, pt(1, 5), pt(2, 5), pt(3, 5))
		a := place(t, w, "a", Left, pt(7, 5), pt(6, 5), pt(5, 5))
		w.snakes[p.Slot()].protectedUntil = 100
		run(t, w, 1)
		sp, sa := info(t, w, p), info(t, w, a)
		if !sp.Alive || sp.Head != pt(3, 5) || !sa.Alive || sa.Head != pt(4, 5) {
			t.Fatalf("p alive=%v head=%v; a alive=%v head=%v", sp.Alive, sp.Head, sa.Alive, sa.Head)
		}
	})
	t.Run("ends", func(t *testing.T) {
		w := bare(t)
		p := place(t, w, "p", Right, pt(1, 5), pt(2, 5), pt(3, 5))
		w.snakes[p.Slot()].protectedUntil = 2
		place(t, w, "wall", Down, pt(6, 1), pt(6, 2), pt(6, 3), pt(6, 4), pt(6, 5), pt(6, 6), pt(6, 7))
		run(t, w, 2) // tick 1 protected, moves to (4,5); tick 2 to (5,5)
		if s := info(t, w, p); !s.Alive || s.Head != pt(5, 5) {
			t.Fatalf("p: alive=%v head=%v", s.Alive, s.Head)
		}
		run(t, w, 1)
		if s := info(t, w, p); s.Alive {
			t.Fatal("protection did not end")
		}
	})
}

func TestEatAndGrow(t *testing.T) {
	w := bare(t)
	a := place(t, w, "a", Right, pt(1, 1), pt(2, 1), pt(3, 1))
	fruitAt(w, 4, 1)
	run(t, w, 1)
	if s := info(t, w, a); s.Length != 3 || w.fruit != 0 {
		t.Fatalf("after eating: len %d fruit %d", s.Length, w.fruit)
	}
	run(t, w, 1)
	if s := info(t, w, a); s.Length != 4 || s.Head != pt(5, 1) || s.BestLength != 4 {
		t.Fatalf("after growing: len %d head %v best %d", s.Length, s.Head, s.BestLength)
	}
	run(t, w, 1)
	if s := info(t, w, a); s.Length != 4 {
		t.Fatalf("kept growing: len %d", s.Length)
	}
}

func TestDash(t *testing.T) {
	w := bare(t)
	a := place(t, w, "a", Right, pt(1, 1), pt(2, 1), pt(3, 1))
	w.Dash(a)
	run(t, w, 1)
	s := info(t, w, a)
	if s.Head != pt(6, 1) || s.Length != 3 || s.DashReadyAt != 1+100 {
		t.Fatalf("dash: head %v len %d readyAt %d", s.Head, s.Length, s.DashReadyAt)
	}
	w.Dash(a) // cooling down: ignored
	run(t, w, 1)
	if s := info(t, w, a); s.Head != pt(7, 1) {
		t.Fatalf("dash during cooldown moved to %v", s.Head)
	}
	// crossing a body on the second pixel kills
	w = bare(t)
	a = place(t, w, "a", Right, pt(1, 1), pt(2, 1), pt(3, 1))
	place(t, w, "b", Down, pt(5, 0), pt(5, 1), pt(5, 2), pt(5, 3))
	w.Dash(a)
	run(t, w, 1)
	if s := info(t, w, a); s.Alive || s.KilledBy != "b" {
		t.Fatalf("dash through a body: alive=%v killedBy=%q", s.Alive, s.KilledBy)
	}
	// a non-dashing head is an obstacle during dash phases
	w = bare(t)
	a = place(t, w, "a", Right, pt(1, 1), pt(2, 1), pt(3, 1))
	place(t, w, "b", Up, pt(5, 3), pt(5, 2))
	w.Dash(a)
	run(t, w, 1) // phase 0: a->(4,1), b->(5,1); phase 1: a into b's head
	if s := info(t, w, a); s.Alive || s.KilledBy != "b" {
		t.Fatalf("dash into a resting head: alive=%v killedBy=%q", s.Alive, s.KilledBy)
	}
}

func TestTurns(t *testing.T) {
	w := bare(t)
	a := place(t, w, "a", Right, pt(1, 1), pt(2, 1), pt(3, 1))
	w.Turn(a, Left)  // reverse: ignored
	w.Turn(a, Right) // same: ignored
	w.Turn(a, 0)
	w.Turn(a, 9)
	w.Turn(a, Down)
	w.Turn(a, Left)
	w.Turn(a, Up) // third: dropped
	run(t, w, 1)
	if s := info(t, w, a); s.Head != pt(3, 2) || s.Dir != Down {
		t.Fatalf("tick 1: head %v dir %v", s.Head, s.Dir)
	}
	run(t, w, 1)
	if s := info(t, w, a); s.Head != pt(2, 2) || s.Dir != Left {
		t.Fatalf("tick 2: head %v dir %v", s.Head, s.Dir)
	}
	run(t, w, 1)
	if s := info(t, w, a); s.Head != pt(1, 2) || s.Dir != Left {
		t.Fatalf("tick 3: head %v dir %v", s.Head, s.Dir)
	}
}

func TestJoinLeaveRespawn(t *testing.T) {
	w, err := New(Config{W: 64, H: 64, MaxSnakes: 3, Bots: 1, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Join("BOT1"); !errors.Is(err, ErrNameTaken) {
		t.Fatalf("bot name: %v", err)
	}
	a, err := w.Join(strings.Repeat("x", 40))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Join("XXXXXXXXXXXXXXXX"); !errors.Is(err, ErrNameTaken) {
		t.Fatalf("case-insensitive dup: %v", err)
	}
	b, err := w.Join("b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Join("c"); !errors.Is(err, ErrFull) {
		t.Fatalf("full: %v", err)
	}
	run(t, w, 1)
	sa := info(t, w, a)
	if sa.Name != strings.Repeat("x", 16) || !sa.Alive || sa.Length != 5 || sa.ProtectedUntil != 1+20 {
		t.Fatalf("joined: %+v", sa)
	}
	v := w.Acquire()
	if v.Players != 2 || v.Bots != 1 {
		t.Fatalf("players %d bots %d", v.Players, v.Bots)
	}
	v.Release()
	w.Respawn(a) // alive: ignored
	w.Leave(b)
	w.Leave(b) // twice: ignored
	run(t, w, 1)
	v = w.Acquire()
	if _, ok := v.Snake(b); ok {
		t.Fatal("left snake still in the view")
	}
	v.Release()
	c, err := w.Join("b") // name and slot free again
	if err != nil {
		t.Fatal(err)
	}
	if c.Slot() != b.Slot() || c == b {
		t.Fatalf("rejoin: slot %d id %x (old %x)", c.Slot(), c, b)
	}
	w.Turn(b, Up) // stale id: ignored
	w.Leave(b)
	run(t, w, 1)
	if s := info(t, w, c); !s.Alive {
		t.Fatal("stale Leave removed the new snake")
	}
	// kill a and respawn it
	s := &w.snakes[a.Slot()]
	for k := 0; k < s.length; k++ {
		w.set(s.at(k), 0)
	}
	s.alive = false
	s.deathTick = w.tick
	w.touch(int32(a.Slot())) // as kill does: the record changed
	run(t, w, 1)
	if s := info(t, w, a); s.Alive {
		t.Fatal("respawned without asking")
	}
	w.Respawn(a)
	run(t, w, 1)
	if s := info(t, w, a); !s.Alive || s.SpawnTick != w.tick {
		t.Fatalf("respawn: %+v", s)
	}
}

func TestBadConfig(t *testing.T) {
	for _, c := range []Config{
		{W: 0, H: 64, MaxSnakes: 4},
		{W: 64, H: 64, MaxSnakes: 0},
		{W: 64, H: 64, MaxSnakes: MaxCapacity + 1},
		{W: 64, H: 64, MaxSnakes: 4, Bots: 5},
		{W: 64, H: 64, MaxSnakes: 4, Fruit: -1},
		{W: 64, H: 64, MaxSnakes: 4, StartLen: 1},
		{W: 16384, H: 16384, MaxSnakes: 4},
		{W: 64, H: 64, MaxSnakes: 4, Protect: -1},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
	if _, err := New(DefaultConfig()); err != nil {
		t.Fatal(err)
	}
}

func TestSpawnSurvey(t *testing.T) {
	w := bare(t)
	// a snake to the right of (4,8), in palette colours 1 and 2
	a := place(t, w, "a", Down, pt(7, 6), pt(7, 7), pt(7, 8))
	b := place(t, w, "b", Down, pt(9, 6), pt(9, 7), pt(9, 8))
	w.snakes[a.Slot()].colour, w.snakes[b.Slot()].colour = 1, 2
	for _, id := range []ID{a, b} {
		s := &w.snakes[id.Slot()]
		for k := 0; k < s.length; k++ {
			w.set(s.at(k), MakePixel(Body, id.Slot(), s.colour))
		}
	}
	for k := 0; k < 20; k++ {
		r := w.dice(int32(k))
		d, c := w.survey(&r, 4, 8)
		if d != Left {
			t.Fatalf("heading %v, want Left (away from the body at x=7)", d)
		}
		if c == 1 || c == 2 || c == 0 || c == 7 || c == 8 || c == 15 {
			t.Fatalf("colour %d: used nearby or not in the palette", c)
		}
	}
	// spawns never overlap anything and keep clear of bodies
	w2, err := New(Config{W: 64, H: 32, MaxSnakes: 40, Bots: 30, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := w2.check(); err != nil {
		t.Fatal(err)
	}
	v := w2.Acquire()
	defer v.Release()
	for _, s := range v.Snakes {
		if s.Alive && (s.Length != 5 || s.ProtectedUntil != 20) {
			t.Fatalf("spawned %+v", s)
		}
	}
}

func TestLeaderboard(t *testing.T) {
	w, err := New(Config{W: 64, H: 64, MaxSnakes: 16, Seed: 1, StartLen: 2, Fruit: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range w.grid {
		w.grid[i] = 0
	}
	w.fruit, w.cfg.Fruit = 0, 0
	lens := []int{3, 9, 5, 9, 2, 7, 4, 6, 8, 3, 5, 10}
	ids := make([]ID, len(lens))
	for k, n := range lens {
		body := make([]Point, n)
		for j := range body {
			body[j] = pt(j+1, 2+4*k%60)
		}
		ids[k] = place(t, w, string(rune('a'+k)), Right, body...)
	}
	run(t, w, 1)
	v := w.Acquire()
	defer v.Release()
	if len(v.Top) != TopN {
		t.Fatalf("top has %d entries", len(v.Top))
	}
	want := []int{10, 9, 9, 8, 7, 6, 5, 5, 4, 3}
	for k, e := range v.Top {
		if e.Length != want[k] {
			t.Fatalf("top %v, want lengths %v", v.Top, want)
		}
	}
	if v.Top[1].Name != "b" || v.Top[2].Name != "d" {
		t.Fatalf("ties not in slot order: %v", v.Top)
	}
	rank := map[int]int{10: 1, 9: 2, 8: 4, 7: 5, 6: 6, 5: 7, 4: 9, 3: 10, 2: 12}
	for k, id := range ids {
		if s, _ := v.Snake(id); v.Rank(id.Slot()) != rank[lens[k]] {
			t.Fatalf("%s length %d rank %d, want %d", s.Name, s.Length, v.Rank(id.Slot()), rank[lens[k]])
		}
	}
	if v.Best.Length != 10 || v.Best.Name != "l" || v.Players != 12 || v.Bots != 0 {
		t.Fatalf("best %+v players %d bots %d", v.Best, v.Players, v.Bots)
	}
}
