package loadtest

import (
	"math"
	"math/rand/v2"
	"time"
)

// Dir is a heading the player script steers to.
type Dir uint8

// Headings; NoDir means "not known yet" (fresh spawn).
const (
	NoDir Dir = iota
	Up
	Right
	Down
	Left
)

// Reverse is the opposite heading (NoDir stays NoDir).
func (d Dir) Reverse() Dir {
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
	return NoDir
}

// Key encodings a player uses; the script mixes them like people do.
var (
	arrowKeys = [5]string{Up: "\x1b[A", Down: "\x1b[B", Right: "\x1b[C", Left: "\x1b[D"}
	wasdKeys  = [5]string{Up: "w", Down: "s", Right: "d", Left: "a"}
	vimKeys   = [5]string{Up: "k", Down: "j", Right: "l", Left: "h"}
)

// Human-like timing of the script.
const (
	minTurn    = 300 * time.Millisecond
	maxTurn    = 3 * time.Second
	minRespawn = 1 * time.Second
	maxRespawn = 4 * time.Second
)

// Player is the scripted input of one playing session: when to turn, where
// to, with which keys, and how long to wait after a death. It is pure logic
// (no I/O) and deterministic for a given seed. Not safe for concurrent use.
type Player struct {
	rng  *rand.Rand
	last Dir // last heading sent since the last (re)spawn; NoDir after one
}

// NewPlayer returns a script seeded with seed.
func NewPlayer(seed uint64) *Player {
	return &Player{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Spawned forgets the last heading: after a (re)spawn the heading is new.
func (p *Player) Spawned() { p.last = NoDir }

// Turn picks the next heading and the bytes that press it. The heading is
// always at a right angle to the previous one sent, so the script never
// asks for a reverse (nor wastes a key on the current heading). After a
// spawn it picks any heading; the game ignores one that reverses the spawn
// heading.
func (p *Player) Turn() (Dir, []byte) {
	var d Dir
	switch p.last {
	case Up, Down:
		d = Left
		if p.rng.IntN(2) == 0 {
			d = Right
		}
	case Left, Right:
		d = Up
		if p.rng.IntN(2) == 0 {
			d = Down
		}
	default:
		d = Dir(1 + p.rng.IntN(4))
	}
	p.last = d
	var key string
	switch r := p.rng.IntN(10); {
	case r < 6:
		key = arrowKeys[d]
	case r < 8:
		key = wasdKeys[d]
	default:
		key = vimKeys[d]
	}
	return d, []byte(key)
}

// TurnDelay is the pause before the next turn: log-uniform in 0.3..3 s, so
// quick corrections are common and long straight runs happen.
func (p *Player) TurnDelay() time.Duration {
	lo, hi := math.Log(float64(minTurn)), math.Log(float64(maxTurn))
	d := time.Duration(math.Exp(lo + p.rng.Float64()*(hi-lo)))
	return min(max(d, minTurn), maxTurn)
}

// RespawnDelay is how long a person looks at the death screen before
// pressing space: uniform in 1..4 s.
func (p *Player) RespawnDelay() time.Duration {
	return minRespawn + time.Duration(p.rng.Int64N(int64(maxRespawn-minRespawn)))
}

// Jitter returns a uniform duration in [0, d).
func (p *Player) Jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(p.rng.Int64N(int64(d)))
}
