package game

// Feed is what a world's steps changed, for a reader that keeps a copy of
// the world elsewhere (a follower's encoder) and so must not scan the
// whole world each tick. Read it on the goroutine that calls Step,
// between Steps; what it returns is the world's and valid until the next
// Step. It allocates nothing.
//
// Steps are numbered from 0 (New) up by one a Step (Steps). For each of
// the last 16 steps (Kept) the feed holds:
//
//   - Writes: every grid write of the step, in order. Replayed in order
//     from the grid before the step, they give the grid after it. A
//     snake's head moves only with a write of a Head pixel (a spawn, a
//     move); a death leaves it where it was, a leave or a join empties
//     the slot (length 0).
//   - Marked: two bitsets by slot (bit s%64 of word s/64). Quick marks a
//     slot whose record the step changed only in its dir, length or best
//     length (a snake that grew, or waited instead of moving); full marks
//     one whose record it changed in any other field. A turn needs no mark
//     when the snake then moved that way: the move's Write carries the
//     direction. A slot marked in neither changed at most in what its
//     writes tell: its head, and with a move its dir and last move
//     (Record.Dir, MoveDir, MoveStep).
//
// Record and Shape read a slot's record now. The leaderboard (Top) and the
// best snake (Best) are those of the last published view: after a step
// whose publish was skipped (every view buffer held) they are the step
// before's. Deaths counts the deaths so far, and Death returns one of the
// last MaxKills of them.
type Feed struct{ w *World }

// Feed returns the world's feed.
func (w *World) Feed() Feed { return Feed{w} }

// Steps is the number of Steps taken: the number of the last step.
func (f Feed) Steps() uint64 { return f.w.seq }

// Tick is the world's tick.
func (f Feed) Tick() uint64 { return f.w.tick }

// Size returns the world's width and height in pixels.
func (f Feed) Size() (w, h int) { return f.w.w, f.w.h }

// Capacity is the most snakes the world holds (Config.MaxSnakes).
func (f Feed) Capacity() int { return f.w.cfg.MaxSnakes }

// Slots is the number of slots in use: every slot at or above it is empty.
func (f Feed) Slots() int { return f.w.nslots }

// Kept reports whether step is one of the last 16 steps, whose Writes and
// marks the feed still holds.
func (f Feed) Kept(step uint64) bool { return step <= f.w.seq && f.w.seq-step < logN }

// Writes returns the grid writes of step, a kept step.
func (f Feed) Writes(step uint64) []Write { return f.w.views.Writes(step) }

// Marked returns the full and quick marks of step, a kept step, one bit a
// slot of the world's capacity.
func (f Feed) Marked(step uint64) (full, quick []uint64) {
	return f.w.marks[step%logN], f.w.quick[step%logN]
}

// Pixels returns the grid, row-major like View.Pix. Between Steps it holds
// plain Pixels (no bits above a Pixel's).
func (f Feed) Pixels() []Pixel { return f.w.grid }

// Record is a slot's snake as a copy of the world rebuilds it: what its
// SnakeInfo and head show, its dir (which no view carries: no screen
// shows it), and the direction and step of its last move, which outlive
// the snake in its slot. An empty slot's SnakeInfo, head and dir are the
// zero ones.
type Record struct {
	SnakeInfo
	Head     Point  // View.Heads
	Dir      Dir    // where it moves next
	MoveDir  Dir    // the direction of its last move; None before the slot's first
	MoveStep uint32 // the low 32 bits of the step of its last move
}

// Record returns slot's record.
func (f Feed) Record(slot int) Record {
	s := &f.w.snakes[slot]
	var h Point
	if s.used {
		h = s.headPoint()
	}
	return Record{f.w.info(slot), h, f.Dir(slot), s.moveDir, s.moveStep}
}

// Dir returns slot's dir (Record's), None for an empty slot.
func (f Feed) Dir(slot int) Dir {
	if s := &f.w.snakes[slot]; s.used {
		return s.dir
	}
	return None
}

// Shape is the part of a slot's Record that turns and growth change.
type Shape struct {
	Length   int
	Dir      Dir
	MoveDir  Dir
	MoveStep uint32
}

// Shape returns slot's shape: Record's Length, Dir, MoveDir and MoveStep,
// at the cost of a few loads.
func (f Feed) Shape(slot int) Shape {
	s := &f.w.snakes[slot]
	return Shape{s.length, s.dir, s.moveDir, s.moveStep}
}

// Top returns the leaderboard, longest first (View.Top).
func (f Feed) Top() []Entry { return f.w.top[:f.w.ntop] }

// Players is the number of snakes people drive (View.Players).
func (f Feed) Players() int { return f.w.players }

// Bots is the number of bots (View.Bots).
func (f Feed) Bots() int { return f.w.bots }

// Best is the longest snake of the run (View.Best).
func (f Feed) Best() Entry { return f.w.best }

// Deaths is the number of deaths so far.
func (f Feed) Deaths() uint64 { return f.w.views.nkills }

// Death returns death k (counting from 0), one of the last MaxKills.
func (f Feed) Death(k uint64) Kill { return f.w.views.kills[k%MaxKills] }

// info is slot i's SnakeInfo as rank fills it.
func (w *World) info(i int) SnakeInfo {
	s := &w.snakes[i]
	if !s.used {
		return SnakeInfo{}
	}
	return SnakeInfo{
		ID: s.id, Name: s.name, Colour: s.colour, Bot: s.bot, Used: true,
		Alive: s.alive, Length: s.length, Kills: s.kills,
		SpawnTick: s.spawnTick, DeathTick: s.deathTick, ProtectedUntil: s.protectedUntil,
		DashReadyAt: s.dashReadyAt, KilledBy: s.killedBy, BestLength: s.best,
	}
}

// headPoint is the head's position; the origin for a snake without length.
func (s *snake) headPoint() Point {
	if s.length == 0 {
		return Point{}
	}
	return Point{int(s.headX), int(s.headY)}
}
