package game

// This file is the contract between the world and its readers (render,
// sshserver). Its exported names and meanings are stable; the world's
// internals may change freely around it.

// TicksPerSecond is the rate the rules are tuned for. The loop that calls
// Step lives with the daemon; durations inside the rules are counted in ticks.
const TicksPerSecond = 10

// Colour is a snake's palette index, 0..15. The renderer maps it to a terminal
// colour; the world only guarantees that nearby snakes differ.
type Colour uint8

// Kind says what occupies a pixel.
type Kind uint8

// Pixel kinds.
const (
	Empty Kind = iota
	Fruit
	Body
	Head
)

// Pixel packs what occupies one world pixel: bits 0-15 the low 16 bits of
// the snake's slot, bits 16-19 its colour, bits 20-21 the Kind, bits 22-23
// the slot's top 2 bits. The zero Pixel is Empty.
type Pixel uint32

// MakePixel builds a Pixel. For Empty and Fruit, slot and colour are 0.
func MakePixel(k Kind, slot int, c Colour) Pixel {
	return Pixel(uint32(k&3)<<20 | uint32(c&15)<<16 | uint32(slot)&0xffff | uint32(slot)>>16&3<<22)
}

// Kind reports what occupies the pixel.
func (p Pixel) Kind() Kind { return Kind(p >> 20 & 3) }

// Slot is the occupying snake's slot (meaningful for Body and Head).
func (p Pixel) Slot() int { return int(p&0xffff | p>>22&3<<16) }

// Colour is the occupying snake's colour (meaningful for Body and Head).
func (p Pixel) Colour() Colour { return Colour(p >> 16 & 15) }

// Dir is a heading. The zero value is None (no turn).
type Dir uint8

// Headings.
const (
	None Dir = iota
	Up
	Right
	Down
	Left
)

// Point is a pixel position; X grows right, Y grows down. Both wrap.
type Point struct{ X, Y int }

// ID names a snake for the whole run: the low 16 bits of its slot in bits
// 0-15, a generation (counting from Config.IDBase) in bits 16-47 and the
// slot's top 2 bits in bits 48-49, so a stale ID never reaches a newer
// snake in the same slot.
type ID uint64

// makeID returns the ID of generation gen in slot.
func makeID(gen uint32, slot int32) ID {
	return ID(uint64(gen)<<16 | uint64(slot)&0xffff | uint64(slot)>>16<<48)
}

// Slot is the index of the snake in View.Snakes.
func (id ID) Slot() int { return int(id&0xffff | id>>48&3<<16) }

// SnakeInfo is what a HUD or camera needs to know about one snake.
type SnakeInfo struct {
	ID     ID
	Name   string
	Colour Colour
	Bot    bool
	Used   bool // the slot holds a snake (alive or dead, not yet left)
	Alive  bool
	Length int
	Kills  int

	SpawnTick      uint64 // tick of the last (re)spawn
	DeathTick      uint64 // tick of the last death (valid when !Alive)
	ProtectedUntil uint64 // spawn protection lasts while Tick < ProtectedUntil
	DashReadyAt    uint64 // a dash is allowed once Tick >= DashReadyAt
	KilledBy       string // killer's name; "" for self or head-on with unnamed
	BestLength     int    // longest this snake has been, over all its lives
}

// Kill is one death of the recent past, for kill feeds.
type Kill struct {
	Tick       uint64 // the tick of the death
	Victim     string // the snake that died
	VictimSlot int
	VictimBot  bool
	Length     int    // the victim's length when it died
	Killer     string // who gets the kill; "" when nobody does (its own body, or a head-on)
	KillerSlot int    // -1 when nobody gets the kill
	KillerBot  bool
	HeadOn     bool   // a head-on: Killer is "" and Other names the other snake
	Other      string // head-on: the other snake's name
	At         Point  // where the victim's head was
}

// Kill feed bounds: View.Kills holds the deaths of the last KillTicks ticks,
// at most MaxKills of them (the newest when there were more).
const (
	KillTicks = 5 * TicksPerSecond
	MaxKills  = 64
)

// Entry is one leaderboard line.
type Entry struct {
	Slot   int
	Name   string
	Length int
}

// View is a read-only picture of the world after one tick. Readers obtain it
// with World.Acquire and must call Release when done; they must not modify
// any field. The world reuses released views for later ticks.
type View struct {
	Tick  uint64
	World uint64 // the world instance shown (Seat.World; Views.SetWorld); 0 for a local world

	// Serial is this publish's own number, never the same for two
	// publishes in the process (a view's buffer is filled again for later
	// ticks, of this world or, once free, of another): what a reader keeps
	// derived from a view, for other readers of the same one, is keyed by
	// it. Zero for a view that was never published.
	Serial uint64

	W, H    int
	Pix     []Pixel     // row-major, len W*H: Pix[y*W+x]; stale or nil when NoPixels
	Snakes  []SnakeInfo // indexed by slot; Used says whether a slot is live
	Heads   []Point     // indexed by slot: where each snake's head is (the origin for a snake of no length)
	Top     []Entry     // leaderboard, longest first, at most TopN
	Players int         // snakes driven by people (alive or dead)
	Bots    int         // server-side snakes
	Best    Entry       // the longest snake seen this run (Slot may be stale)
	Kills   []Kill      // recent deaths, oldest first (see KillTicks, MaxKills)

	// Dirty is, per tile of TileW x TileH pixels (row-major, TilesW(W)
	// tiles a row, TilesH(H) rows; the last tile of a row or column may be
	// partial), a tick at or after the last change of how any pixel of the
	// tile looks: its Pixel value, or the spawn protection of the snake
	// occupying it ending. A reader that drew tick t only needs to redraw
	// the tiles with Dirty > t (it may find more than changed, never fewer).
	// Dirty, Fresh and the cell index below are empty in the views of a
	// world built with Config.Unindexed or Config.LazyPixels.
	Dirty []uint64

	// Fresh holds one bit a tile, set for every tile whose look may differ
	// from tick Tick-1's (the last step's changes, protections that
	// ended; every tile after a whole copy): what a reader that drew tick
	// Tick-1 must redraw. Each is a tile with Dirty == Tick. Tile row r's
	// bits are the FreshWords(W) words from r*FreshWords(W), tile column
	// c at bit c%64 of its word c/64.
	Fresh []uint64

	// FreshX and FreshAt are Fresh to the cell: the world columns x,
	// ascending and each once, where a pixel of tile row r (pixel rows
	// r*TileH to r*TileH+TileH-1) may look different from tick Tick-1's
	// are FreshX[FreshAt[r]:FreshAt[r+1]]. FreshAt is empty when the view
	// was copied whole rather than brought up to date (every pixel may
	// differ; Fresh has every bit set then).
	FreshX  []uint16
	FreshAt []int32

	// FreshBlk finds a column in FreshX without a search: entry
	// r*FreshBlocks(W)+b is the index in FreshX of tile row r's first
	// column at or right of b*FreshBlock (FreshAt[r+1] when there is
	// none). Empty when FreshAt is.
	FreshBlk []int32

	// FreshPix holds the pixels of FreshX's cells, two an entry:
	// FreshPix[2i] is Pix at column FreshX[i] in its tile row's first
	// pixel row, FreshPix[2i+1] in its second (0 below the last row of a
	// world of odd height). A reader walking the index reads them here,
	// a few kilobytes every reader shares, instead of from Pix, where each
	// is a cache miss of its own.
	FreshPix []Pixel

	// NoPixels is set when Pix is not the world's pixels at Tick: the
	// views of a world built with Config.LazyPixels carry them only when
	// asked for (World.WantPixels). Pix is then nil, or the pixels of an
	// earlier tick.
	NoPixels bool

	// Shield holds one bit a slot (slot s at bit s%64 of word s/64), set
	// when Snakes[s] is spawn-protected at Tick (Tick < ProtectedUntil):
	// what a reader needs of a body pixel's snake, in a few cache lines.
	Shield []uint64

	// ranks[l] is the number of live snakes longer than l, for l up to
	// the longest length plus one (see Rank).
	ranks []int32

	st viewState // reference count and update bookkeeping (publish.go)
}

// Tile size in pixels for View.Dirty.
const (
	TileW = 8
	TileH = 2
)

// TopN is the leaderboard's length.
const TopN = 10

// At returns the pixel at (x, y), wrapping both coordinates.
func (v *View) At(x, y int) Pixel {
	return v.Pix[wrap(y, v.H)*v.W+wrap(x, v.W)]
}

// Row returns row y (wrapped) of the pixel grid, W pixels long.
func (v *View) Row(y int) []Pixel {
	y = wrap(y, v.H)
	return v.Pix[y*v.W : (y+1)*v.W]
}

// wrap maps a onto 0..n-1 on the torus.
func wrap(a, n int) int {
	a %= n
	if a < 0 {
		a += n
	}
	return a
}

// MarkShields sets Shield from Snakes and Tick. Publishers call it; code
// that builds a View by hand (tests) calls it after changing either.
func (v *View) MarkShields() {
	n := (len(v.Snakes) + 63) / 64
	if cap(v.Shield) < n {
		v.Shield = make([]uint64, n)
	}
	v.Shield = v.Shield[:n]
	clear(v.Shield)
	for i := range v.Snakes {
		if v.Tick < v.Snakes[i].ProtectedUntil {
			v.Shield[i/64] |= 1 << (i % 64)
		}
	}
}

// Rank returns the rank by length of the snake in slot s among the live
// snakes: 1 + the number of live snakes longer (equal lengths share a
// rank); 0 when it is dead or s holds no snake.
func (v *View) Rank(s int) int {
	if s < 0 || s >= len(v.Snakes) || !v.Snakes[s].Alive {
		return 0
	}
	if l := v.Snakes[s].Length; l < len(v.ranks) {
		return int(v.ranks[l]) + 1
	}
	return 1
}

// MarkRanks sets what Rank reads from Snakes. Publishers keep it as they
// publish; code that builds a View by hand (tests) calls it after
// changing Snakes.
func (v *View) MarkRanks() {
	r := ranker{longer: v.ranks[:cap(v.ranks)]} // counts in the view's own ranks
	if len(r.longer) < 2 {
		r.grow(0) // room for sum with no live snake
	}
	r.reset()
	for i := range v.Snakes {
		if v.Snakes[i].Alive {
			r.count(v.Snakes[i].Length)
		}
	}
	r.sum()
	v.ranks = r.longer[:r.longest+2]
}

// SetRanks sets what Rank reads from c, the count of the live snakes of
// v.Snakes by length: O(the longest length), whatever the number of
// snakes.
func (v *View) SetRanks(c *Lengths) {
	r := &c.r
	v.ranks = append(v.ranks[:0], r.longer[:min(r.longest+2, len(r.longer))]...)
	suffix(v.ranks)
}

// Lengths counts live snakes by length, for a publisher that keeps the
// count as its snakes change (Add) and gives it to each view it publishes
// (View.SetRanks). The zero value counts none.
type Lengths struct{ r ranker }

// Add adds d (-1 or 1) snakes of the given length. The longest length
// counted follows the snakes down as well as up, so what SetRanks copies
// is as long as the longest snake now.
func (c *Lengths) Add(length, d int) {
	r := &c.r
	if length+2 > len(r.longer) {
		r.grow(length)
	}
	r.longer[length] += int32(d)
	r.longest = max(r.longest, length)
	for r.longest > 0 && r.longer[r.longest] == 0 {
		r.longest--
	}
}

// Shielded reports whether the snake in slot s is spawn-protected (see
// Shield).
func (v *View) Shielded(s int) bool {
	return s/64 < len(v.Shield) && v.Shield[s/64]>>(s%64)&1 != 0
}

// Snake returns the info for id, and false when id no longer names a snake.
func (v *View) Snake(id ID) (*SnakeInfo, bool) {
	s := id.Slot()
	if s < 0 || s >= len(v.Snakes) || !v.Snakes[s].Used || v.Snakes[s].ID != id {
		return nil, false
	}
	return &v.Snakes[s], true
}
