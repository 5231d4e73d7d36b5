package game

import (
	"errors"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Tuning constants that are not part of Config.
const (
	DashLen    = 3  // pixels a dash moves in one tick
	FruitGrow  = 1  // growth per fruit eaten
	BotRespawn = 20 // ticks a dead bot waits before it respawns
	MaxName    = 16 // bytes kept of a name

	// KeptSteps is how many of the last steps' writes and marks a world or
	// replica keeps (Views, Feed): a view buffer further behind is filled
	// whole, and a Filler's since is one of the last KeptSteps-1 steps.
	KeptSteps = 16

	logN     = KeptSteps
	maxViews = 8 // bound on the view pool
)

// palette is the set of colours handed out to snakes: the 16-colour palette
// without black, white and the greys, so every snake shows on a dark screen.
var palette = [...]Colour{1, 2, 3, 4, 5, 6, 9, 10, 11, 12, 13, 14}

// Limits of Config: New refuses a world outside them.
const (
	MinSide     = 16      // shortest world side in pixels
	MaxSide     = 1 << 14 // longest world side in pixels
	MaxPixels   = 1 << 26 // most W*H (the grid and each view buffer take 4 bytes a pixel)
	MaxCapacity = 1 << 18 // most MaxSnakes (a Pixel's and an ID's slot bits)
	MaxWorkers  = 256     // most Workers
	MaxGroups   = 1 << 12 // most groups of JoinNear
)

// Join errors.
var (
	ErrFull      = errors.New("game: the world is full")
	ErrNameTaken = errors.New("game: that name is taken")
)

// Config sizes and tunes a World. Zero tuning fields take their defaults.
type Config struct {
	W, H      int    // world size in pixels (see AutoSize)
	MaxSnakes int    // capacity (players + bots); see Join for when it returns ErrFull
	Bots      int    // server-side snakes kept whatever the population (the floor)
	BotTarget int    // bots fill the world up to this many snakes (people + bots); 0 = no filling beyond Bots
	Seed      uint64 // all randomness comes from this
	IDBase    uint32 // the generation every slot's first snake ID carries (see ID); a simulation picks it at random, so a restarted world's IDs are not the last one's

	Workers int // goroutines a Step runs on (see World.Close); 0 or 1 = the caller's alone. The world does not depend on it.
	// ParallelFrom is the fewest snakes a pass of Step runs on the workers
	// for (the slots in use, or after phase 0 the dashing snakes); fewer
	// run one part after the other on the caller. 0 = DefaultParallelFrom.
	ParallelFrom int

	// Unindexed views carry no render index (View.Dirty, Fresh, FreshX,
	// FreshAt, FreshBlk and FreshPix stay empty): for a world nobody
	// draws from directly, whose readers take its pixels and records and
	// never a frame.
	Unindexed bool

	// LazyPixels views carry the world's pixels only when asked for
	// (World.WantPixels; View.NoPixels says which do), and no render
	// index: for a world whose pixels are read only now and then, such as
	// a simulation's, which writes them into a snapshot when a gateway
	// asks for one. A publish then costs the records alone, not a replay
	// of the step's writes into a buffer of the world's size. One buffer
	// holds pixels, made with the world; an ask waits while a reader holds
	// it, or a tick when it is the newest view.
	LazyPixels bool

	Fruit        int // target fruit count; 0 = W*H/256
	StartLen     int // length of a new snake; 0 = 5
	Protect      int // spawn protection in ticks; 0 = 20
	DashCooldown int // ticks between dashes; 0 = 100
}

// DefaultConfig returns the configuration for a few thousand players.
func DefaultConfig() Config {
	return Config{W: 2048, H: 512, MaxSnakes: 4096, Bots: 16, Seed: 1}
}

func (c *Config) fill() error {
	if c.W < MinSide || c.H < MinSide || c.W > MaxSide || c.H > MaxSide {
		return errors.New("game: W and H must be in " + strconv.Itoa(MinSide) + ".." + strconv.Itoa(MaxSide))
	}
	if c.W*c.H > MaxPixels {
		return errors.New("game: W*H must be at most " + strconv.Itoa(MaxPixels) + " pixels")
	}
	if c.MaxSnakes < 1 || c.MaxSnakes > MaxCapacity {
		return errors.New("game: MaxSnakes must be in 1.." + strconv.Itoa(MaxCapacity))
	}
	if c.Bots < 0 || c.Bots > c.MaxSnakes {
		return errors.New("game: Bots must be in 0..MaxSnakes")
	}
	if c.BotTarget < 0 || c.BotTarget > MaxCapacity {
		return errors.New("game: BotTarget must be in 0.." + strconv.Itoa(MaxCapacity))
	}
	if c.ParallelFrom < 0 {
		return errors.New("game: ParallelFrom must not be negative")
	}
	if c.Workers < 0 || c.Workers > MaxWorkers {
		return errors.New("game: Workers must be in 0.." + strconv.Itoa(MaxWorkers))
	}
	if c.Fruit < 0 || c.StartLen < 0 || c.Protect < 0 || c.DashCooldown < 0 {
		return errors.New("game: negative tuning value")
	}
	if c.Fruit == 0 {
		c.Fruit = c.W * c.H / 256
	}
	if c.Fruit > c.W*c.H/4 {
		c.Fruit = c.W * c.H / 4
	}
	if c.StartLen == 0 {
		c.StartLen = 5
	}
	if c.StartLen < 2 || c.StartLen > c.W/4 || c.StartLen > c.H/4 {
		return errors.New("game: StartLen must be in 2..min(W,H)/4")
	}
	if c.Protect == 0 {
		c.Protect = 20
	}
	if c.DashCooldown == 0 {
		c.DashCooldown = 10 * TicksPerSecond
	}
	return nil
}

// Claim bits: while a movement phase runs, the top bits of a grid pixel
// count the heads heading into it (at most 4, one from each side, so the
// counts never overflow and may be added in any order). They are cleared
// before the phase ends, so between steps the grid holds plain Pixels.
const (
	pixBits   = 1<<24 - 1 // the Pixel proper
	nUnit     = 1 << 29   // one unprotected head heads here (3 bits)
	nMask     = 7 << 29
	pUnit     = 1 << 26 // one protected head heads here (3 bits)
	pMask     = 7 << 26
	claimBits = nMask | pMask
)

// claims returns the number of heads heading into pixel p.
func claims(p Pixel) int { return int(p&nMask/nUnit + p&pMask/pUnit) }

// snake is the world's own record of one slot. Only Step touches it. Its
// field order matters to the step's speed: it is 256 bytes, so that each
// snake in World.snakes starts a cache line (the slice of more than 128
// snakes is allocated page-aligned), its first line holds all a movement phase
// reads and writes of a mover but its body, and its second line the body,
// what a move adds to it and what think reads of every snake: the passes
// over the slots load two lines a snake of the four, but for the bots'
// decisions (TestSnakeLayout).
type snake struct {
	// the first line: a phase's fields
	moved          bool   // it moves this phase
	wait           bool   // it stays where it is this phase (protected, blocked)
	die            bool   // it dies this phase
	tailLeaves     bool   // its tail leaves its pixel this phase (it is not growing)
	headOn         bool   // it meets another head this phase
	clearNext      bool   // leave clears the claims on next (no Head or leaving tail overwrites them)
	blocked        bool   // it waits this phase for want of a free pixel, and claims none
	shared         bool   // phase 0: another head aims at next too, so contest loads the pixel's claims (see settle)
	steps          int32  // pixels to move this tick
	next           int32  // the pixel the head enters this phase
	nextPx         Pixel  // grid[next] once the phase's claims are made (see contest); collide and advance use it
	nextX, nextY   int32  // column and row of next
	tailPixel      int32  // the tail's pixel at the start of the phase
	killer         int32  // the slot whose body or head it ran into this phase, -1 none
	head           int32  // pixel index of the head (body[tail+length-1])
	headX          int32  // head column
	headY          int32  // head row
	protectedUntil uint64 // spawn protection lasts while the tick is below it
	moveStep       uint32 // the low 32 bits of the step of its last move; it and moveDir outlive the snake in its slot
	alive          bool
	colour         Colour
	dir            Dir // kept equal to World.dirs[slot] (setDir)
	moveDir        Dir // the direction of its last move

	// the second line: the body
	body     []int32 // ring of pixel indices, len a power of two
	tail     int     // ring index of the tail
	length   int     // pixels in body (kept at death for the view)
	grow     int     // pending growth
	best     int     // the longest it has been, over all its lives
	bot      bool
	used     bool
	wantDash bool // a dash is asked for this tick
	bold     bool // a bot that dashes and cuts others off

	// the rest
	id             ID
	name           string
	killedBy       string
	wantLife       bool  // waiting for a spawn (join, respawn)
	group          int32 // its JoinNear group, 0 none
	kills          int
	spawnTick      uint64
	deathTick      uint64
	dashReadyAt    uint64 // a dash is allowed once the tick is at or past it
	pref           [3]Dir // a bot's candidates this tick, best first (see pick)
	need           [3]int8
	cut            Dir // the candidate that cuts its rival off, None if none
	lanes          int8
	targetX        int32 // a bot's fruit target column; -1 none
	targetY        int32 // a bot's fruit target row; -1 none
	rival          int32 // a bot's rival (a snake whose head it saw), -1 none
	ahead2, ahead3 Pixel // the pixels 2 and 3 ahead (bots)
	_              [16]byte
}

func (s *snake) push(i, x, y int32) {
	if s.length == len(s.body) {
		nb := make([]int32, 2*len(s.body))
		for k := 0; k < s.length; k++ {
			nb[k] = s.body[(s.tail+k)&(len(s.body)-1)]
		}
		s.body, s.tail = nb, 0
	}
	s.body[(s.tail+s.length)&(len(s.body)-1)] = i
	s.length++
	s.head, s.headX, s.headY = i, x, y
}

// ring returns a free ring of length n (a power of two), allocating only
// when none is free.
func (w *World) ring(n int) []int32 {
	l := bits.Len(uint(n)) - 1
	if k := len(w.rings[l]); k > 0 {
		r := w.rings[l][k-1]
		w.rings[l] = w.rings[l][:k-1]
		return r
	}
	return make([]int32, n)
}

// unring keeps ring r for reuse.
func (w *World) unring(r []int32) {
	l := bits.Len(uint(len(r))) - 1
	if w.rings[l] == nil {
		w.rings[l] = make([][]int32, 0, len(w.snakes)) // never regrows
	}
	w.rings[l] = append(w.rings[l], r)
}

// grow moves the full ring of s into one twice as long. Parts running at
// once may call it.
func (w *World) grow(s *snake) {
	w.ringMu.Lock()
	defer w.ringMu.Unlock()
	nb := w.ring(2 * len(s.body))
	for k := 0; k < s.length; k++ {
		nb[k] = s.body[(s.tail+k)&(len(s.body)-1)]
	}
	w.unring(s.body)
	s.body, s.tail = nb, 0
}

// shrink gives a long ring back before s starts a new life.
func (w *World) shrink(s *snake) {
	if len(s.body) > w.bodyCap {
		w.unring(s.body)
		s.body = w.ring(w.bodyCap)
	}
}

func (s *snake) at(k int) int32 { return s.body[(s.tail+k)&(len(s.body)-1)] }

// inbox is the queued input of one slot, guarded by World.mu.
type inbox struct {
	id      ID
	gen     uint32
	name    string
	bot     bool
	num     int32 // a bot's number - 1
	group   int32 // the JoinNear group, 0 none
	evict   bool  // a join took this slot from a bot: remove the bot first
	turns   [2]Dir
	nt      uint8
	dash    bool
	respawn bool
	join    bool
	leave   bool
	dirty   bool
}

// World is the whole game state. Step must be called from one goroutine,
// which is also the one to read the Feed; the other methods are safe from
// any goroutine.
//
// Join, Leave, Turn, Dash and Respawn take a short mutex and only queue
// input; Step drains the queue once per tick under that mutex, so the tick
// waits on no reader. After each Step the world publishes a View of the
// tick through its Views (Acquire, View.Release).
//
// The grid is a []Pixel updated in place, and every grid write is logged
// (Write) for the views and the Feed. Snake bodies are ring buffers of
// pixel indices reused across lives. Step costs O(snakes + pixels
// written), never O(area), and allocates nothing in steady state: a snake
// outgrowing its ring trades it for a free ring twice as long, and a spawn
// gives a long ring back, so rings are allocated only while the number of
// long snakes alive at once still reaches new highs. Randomness comes only
// from Config.Seed (a PCG for fruit, a hash of seed, tick and slot for the
// bots and the spawns), and whatever depends on more than one snake is
// settled in slot order, so the same seed and the same inputs in the same
// order give the same world, whatever Config.Workers is.
//
// With Config.Workers above 1, Step runs its passes on that many
// goroutines (the caller and Workers-1 that New starts: it runs passes
// too). They hold the world only while a pass runs: a world nobody holds
// is collected and its workers end; Close ends them at once.
type World struct {
	cfg     Config
	w, h    int
	grid    []Pixel // the master occupancy grid, row-major (claim bits in phases)
	snakes  []snake
	dirs    []Dir // each slot's snake.dir, densely: every write of one is a write of both (setDir)
	dir0    []Dir // dirs as of drain, and a spawn's since: what bots see of each other while they decide (cutoff)
	rng     *rand.Rand
	seq     uint64 // Steps taken
	tick    uint64
	fruit   int
	chg     []Write      // the grid writes of this step (step seq's log)
	views   *Views       // publishes the views and keeps the last steps' writes
	prot    []protection // the snakes spawned recently enough that their protection may still expire into a view
	spawnq  []int32
	found   []spot     // spawnAll's spots, one for each of the first snakes of spawnq
	parts   []part     // the step's parts (see part, setWorkers)
	workers int        // Config.Workers, at least 1: the goroutines that run a pass's parts
	crew    *crew      // the workers beside the caller; nil when the caller runs every part
	minPar  int        // Config.ParallelFrom, or DefaultParallelFrom
	par     bool       // parts run at once: grid pixels other parts may touch are read and written atomically
	pass    pass       // the pass the parts run (see runPass)
	ph      int        // its phase
	ndash   int        // snakes dashing this tick
	repick  []int32    // bots that pick again (settle)
	ringMu  sync.Mutex // guards rings while parts run at once
	closed  bool       // Close was called: no crew
	top     [TopN]Entry
	ntop    int
	best    Entry
	nslots  int // slots in use by Step (high-water mark)

	// Body rings not in use, by log2 of their length. A snake outgrowing
	// its ring trades it for one twice as long, and a spawn trades a long
	// ring back for one of bodyCap, so rings circulate and Step stops
	// allocating once the number of long snakes at once has peaked.
	rings   [32][][]int32
	bodyCap int

	// marks[seq%logN] and quick[seq%logN] are the bitsets of the slots
	// whose records step seq may have changed other than in their heads:
	// quick when only dir, length or best length (turns and growth, see
	// touchQuick), marks for any other field (see touch). mk and qk are the
	// current step's. The Feed hands them out beside the steps' writes.
	marks, quick [logN][]uint64
	mk, qk       []uint64

	players, bots int
	want          int     // bots wanted this tick (wantBots, set by populate)
	eyes          []eye   // players' heads at the last publish
	heads         []int32 // every live head at the last publish (spawn anchors)
	near          nearIndex

	// rank's hand-over to rankPart: the view's records, heads and shield,
	// the leaderboard's threshold, and the step whose records dst holds
	// (0: none)
	rdst    []SnakeInfo
	rheads  []Point
	rshield []uint64
	rthr    int
	rsince  uint64

	mu       sync.Mutex // guards box, heading, dirty, free, names, slots, count, drained and the bot bookkeeping below
	drained  uint64     // the tick of the last drain: input queued now is applied by a later tick's
	box      []inbox
	heading  []Dir // per slot: the direction Turn checks new turns against (dirs as of drain)
	dirty    []int32
	free     []int32
	names    map[string]int32
	slots    int // slots ever handed out
	count    int // slots in use (players + bots, pending joins included)
	scratch  []int32
	botNames []string // botNames[n] is bot number n+1's name
	botNums  []uint64 // bit n: number n+1 is in use
	botList  []int32  // slots holding bots
	botPos   []int32  // per slot: its index in botList, -1 if none
	rcur     int      // populate's cursor in botList

	// The snakes of each JoinNear group (Step's, not guarded by mu):
	// groups[g] lists group g's slots, groupAt[slot] a slot's index in
	// its group's list.
	groups  [][]int32
	groupAt []int32
}

// eye is a player's head position.
type eye struct{ x, y int32 }

// New builds a world, spawns its bots and fruit and publishes tick 0.
func New(cfg Config) (*World, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	w := &World{
		cfg:     cfg,
		w:       cfg.W,
		h:       cfg.H,
		grid:    make([]Pixel, cfg.W*cfg.H),
		snakes:  make([]snake, cfg.MaxSnakes),
		dirs:    make([]Dir, cfg.MaxSnakes),
		dir0:    make([]Dir, cfg.MaxSnakes),
		box:     make([]inbox, cfg.MaxSnakes),
		heading: make([]Dir, cfg.MaxSnakes),
		names:   make(map[string]int32),
		rng:     rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
	}
	w.views = NewViews(w.grid, cfg.W, cfg.H, cfg.MaxSnakes, (*filler)(w))
	w.setWorkers(cfg.Workers)
	w.views.unindexed = cfg.Unindexed
	if cfg.LazyPixels {
		w.views.Lazy()
	}
	for i := range w.box {
		w.box[i].gen = cfg.IDBase
	}
	bodyCap := 16
	for bodyCap < 2*cfg.StartLen {
		bodyCap *= 2
	}
	w.bodyCap = bodyCap
	for i := range w.views.logs {
		w.views.logs[i] = make([]Write, 0, 4*cfg.MaxSnakes+1024)
	}
	w.chg = w.views.Log(0)
	for i := range w.marks {
		w.marks[i] = make([]uint64, (cfg.MaxSnakes+63)/64)
		w.quick[i] = make([]uint64, (cfg.MaxSnakes+63)/64)
	}
	w.mk, w.qk = w.marks[0], w.quick[0]
	// Every slot's ring comes from one slab, in slot order, and spare
	// rings wait in the free lists: a quarter of the slots' worth twice
	// as long, an eighth 4 times, a sixteenth 8 times (half a slot's ring
	// each), so the first snakes to outgrow their rings do not allocate.
	n := len(w.snakes)
	slab := make([]int32, (n+n/4*2+n/8*4+n/16*8)*bodyCap)
	off := n * bodyCap
	for _, sp := range [...]struct{ count, mul int }{{n / 4, 2}, {n / 8, 4}, {n / 16, 8}} {
		for k := 0; k < sp.count; k++ {
			l := sp.mul * bodyCap
			w.unring(slab[off : off+l : off+l])
			off += l
		}
	}
	for i := range w.snakes {
		w.snakes[i].body = slab[i*bodyCap : (i+1)*bodyCap : (i+1)*bodyCap]
		w.snakes[i].killer = -1
		w.snakes[i].targetX, w.snakes[i].targetY, w.snakes[i].rival = -1, -1, -1
	}
	w.spawnq = make([]int32, 0, cfg.MaxSnakes)
	w.found = make([]spot, 0, cfg.MaxSnakes)
	w.minPar = cfg.ParallelFrom
	if w.minPar == 0 {
		w.minPar = DefaultParallelFrom
	}
	w.repick = make([]int32, 0, 1024)
	w.prot = make([]protection, 0, 1024)
	w.dirty = make([]int32, 0, cfg.MaxSnakes)
	w.free = make([]int32, 0, cfg.MaxSnakes)
	w.scratch = make([]int32, 0, cfg.MaxSnakes)
	w.eyes = make([]eye, 0, cfg.MaxSnakes)
	w.heads = make([]int32, 0, cfg.MaxSnakes)
	w.near.init(cfg.W, cfg.H, cfg.MaxSnakes)
	nb := min(cfg.MaxSnakes, max(cfg.Bots, cfg.BotTarget))
	w.botNames = make([]string, nb)
	for n := range w.botNames {
		w.botNames[n] = botName(n + 1)
	}
	w.botNums = make([]uint64, (nb+63)/64)
	w.botList = make([]int32, 0, nb)
	w.groupAt = make([]int32, cfg.MaxSnakes)
	w.botPos = make([]int32, cfg.MaxSnakes)
	for i := range w.botPos {
		w.botPos[i] = -1
	}
	w.drain(nb) // the first bots come all at once
	w.spawnAll()
	w.topUpFruit(cfg.Fruit)
	w.publish()
	return w, nil
}

// Config returns the configuration in use, defaults filled in.
func (w *World) Config() Config { return w.cfg }

// Join adds a player named name (cut to MaxName bytes) and returns its ID.
// The snake is spawned by the next Step. Names compare case-insensitively;
// an empty name is allowed and never collides; the bots' names ("bot" and
// digits) are refused. When every slot is taken, the slot of a bot above
// the floor (Config.Bots) is taken instead; ErrFull only when there is none.
func (w *World) Join(name string) (ID, error) {
	id, _, err := w.JoinNear(name, 0)
	return id, err
}

// JoinNear is Join for a player of group g (1..MaxGroups; 0 or any other
// value is no group): while another snake of its group is alive, each of
// its lives tries first to start near one of them (the first alive of
// up to 64 from one chosen at random), where a life near the action
// starts (on the screen that snake's camera shows, not next to its
// head); where that is crowded it starts elsewhere, as any life does. A
// simulation groups the players of each gateway so that a gateway's
// cameras cover fewer regions (docs/SCALING.md). It also returns the
// first tick whose view shows the snake: every view of a tick before it
// lacks the snake, every view from it on has it until it leaves.
func (w *World) JoinNear(name string, g int) (id ID, from uint64, err error) {
	if g < 0 || g > MaxGroups {
		g = 0
	}
	if len(name) > MaxName {
		name = name[:MaxName]
		for len(name) > 0 && !utf8.ValidString(name) {
			name = name[:len(name)-1]
		}
	}
	key := strings.ToLower(name)
	w.mu.Lock()
	defer w.mu.Unlock()
	full := w.count >= w.cfg.MaxSnakes
	if full && len(w.botList) <= w.cfg.Bots {
		return 0, 0, ErrFull
	}
	if key != "" {
		if _, ok := w.names[key]; ok || isBotName(key) {
			return 0, 0, ErrNameTaken
		}
	}
	var slot int32
	switch n := len(w.free); {
	case full: // the newest bot steps aside at once (see drain)
		slot = w.botList[len(w.botList)-1]
		w.unlist(slot)
		w.count--
	case n > 0:
		slot = w.free[n-1]
		w.free = w.free[:n-1]
	default:
		slot = int32(w.slots)
		w.slots++
	}
	w.count++
	b := &w.box[slot]
	if b.gen++; b.gen == 0 {
		b.gen = 1
	}
	*b = inbox{gen: b.gen, id: makeID(b.gen, slot), name: name, join: true, evict: full, group: int32(g)}
	if key != "" {
		w.names[key] = slot
	}
	w.mark(slot, b)
	return b.id, w.drained + 1, nil
}

// mark queues slot for the next drain. w.mu must be held.
func (w *World) mark(slot int32, b *inbox) {
	if !b.dirty {
		b.dirty = true
		w.dirty = append(w.dirty, slot)
	}
}

// lookup returns the inbox of a live, non-bot id, or nil. w.mu must be held.
func (w *World) lookup(id ID) *inbox {
	s := id.Slot()
	if id == 0 || s >= w.slots {
		return nil
	}
	b := &w.box[s]
	if b.id != id || b.bot {
		return nil
	}
	return b
}

// Leave removes the snake; stale or unknown ids and bots are ignored.
func (w *World) Leave(id ID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.lookup(id)
	if b == nil {
		return
	}
	if key := strings.ToLower(b.name); key != "" {
		delete(w.names, key)
	}
	b.id = 0
	b.leave = true
	w.mark(int32(id.Slot()), b)
}

// Turn queues a turn (at most 2 pending). Reverse, repeated, unknown
// directions and unknown ids are ignored.
func (w *World) Turn(id ID, d Dir) {
	if d < Up || d > Left {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.lookup(id)
	if b == nil || b.nt >= 2 {
		return
	}
	last := w.heading[id.Slot()]
	if b.nt > 0 {
		last = b.turns[b.nt-1]
	}
	if d == last || d == reverse(last) {
		return
	}
	b.turns[b.nt] = d
	b.nt++
	w.mark(int32(id.Slot()), b)
}

// Heading returns the dir a player's snake moves in (as of the last
// step's start, with the turns taken then: what Turn checks a turn
// against), and false for an id that is not a player's snake. Views do
// not carry dirs (no screen shows one); it may be called from any
// goroutine.
func (w *World) Heading(id ID) (Dir, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lookup(id) == nil {
		return None, false
	}
	return w.heading[id.Slot()], true
}

// Dash requests a dash for the next tick; Step ignores it during cooldown.
func (w *World) Dash(id ID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if b := w.lookup(id); b != nil {
		b.dash = true
		w.mark(int32(id.Slot()), b)
	}
}

// Respawn asks for a new life; Step ignores it unless the snake is dead.
func (w *World) Respawn(id ID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if b := w.lookup(id); b != nil {
		b.respawn = true
		w.mark(int32(id.Slot()), b)
	}
}

func reverse(d Dir) Dir {
	switch d {
	case Up:
		return Down
	case Down:
		return Up
	case Left:
		return Right
	case Right:
		return Left
	}
	return None
}

func left(d Dir) Dir {
	switch d {
	case Up:
		return Left
	case Left:
		return Down
	case Down:
		return Right
	}
	return Up
}

func right(d Dir) Dir { return reverse(left(d)) }

func (w *World) point(i int32) Point { return Point{int(i) % w.w, int(i) / w.w} }

// set writes one grid pixel from the caller's own part of a step (drain,
// spawns, fruit) and logs the write; the passes over parts write with put
// and putMove.
func (w *World) set(i int32, p Pixel) {
	w.grid[i] = p
	w.chg = append(w.chg, Write{i, p})
}

// touch records that the current step changed a field of slot i's record
// other than its head (which the Head pixels it writes tell), dir,
// length and best length: every write of a snake's id, name, flags,
// colour, kills, spawn, death, protection, dash or killer goes with one,
// or with the write of the whole snake. TestMarksCover holds Step to it.
func (w *World) touch(i int32) { w.mk[i>>6] |= 1 << (i & 63) }

// touchQuick records that the current step changed slot i's length (and
// perhaps its best length) by growing (a move's push after its pop leaves
// the length as it was), or that the snake did not move (it waited): a
// move's write carries its direction, so a turn needs no mark when the
// snake then moves, as every live snake does each step unless it waits.
func (w *World) touchQuick(i int32) { w.qk[i>>6] |= 1 << (i & 63) }
