package wire

import (
	"encoding/binary"
	"errors"
	"fmt"

	"snaked/game"
)

// Snapshot writes the whole world w as chunks of at most maxChunk bytes
// (at least MinChunk) that NewReplica puts back together, in any order.
// Call it between Steps on the goroutine that calls Step; a delta from an
// Encoder whose baseline is this tick applies to it. SnapshotLater does
// the same work off that goroutine.
func Snapshot(w *game.World, maxChunk int) ([][]byte, error) {
	if maxChunk < MinChunk {
		return nil, errChunk(maxChunk)
	}
	f := w.Feed()
	snakes := make([]game.SnakeInfo, f.Slots())
	heads := make([]game.Point, f.Slots())
	dirs := make([]game.Dir, f.Slots())
	for i := range snakes {
		r := f.Record(i)
		snakes[i], heads[i], dirs[i] = r.SnakeInfo, r.Head, r.Dir
	}
	var kills []game.Kill
	for k := f.Deaths() - min(f.Deaths(), game.MaxKills); k < f.Deaths(); k++ {
		if d := f.Death(k); d.Tick+game.KillTicks > f.Tick() {
			kills = append(kills, d)
		}
	}
	width, height := f.Size()
	return snapshot(maxChunk, f.Capacity(), &game.View{
		Tick: f.Tick(), W: width, H: height, Pix: f.Pixels(), Snakes: snakes, Heads: heads, Top: f.Top(),
		Players: f.Players(), Bots: f.Bots(), Best: f.Best(), Kills: kills,
	}, dirs, nil), nil
}

// Later is a snapshot of a world at one tick, to be written on any
// goroutine from the view the world published for that tick (see
// SnapshotLater).
type Later struct {
	v        *game.View
	dirs     []game.Dir // by slot: the snakes' dirs, which the view does not carry
	capacity int
}

// SnapshotLater returns the snapshot of w now, as Snapshot would write it,
// to be written by Later.Chunks on any goroutine: the goroutine that calls
// Step only takes a reference to the view of this tick. It returns nil
// when there is no such view with pixels: its publish was skipped because
// every view buffer was held (call Snapshot then), or w's views carry
// pixels only when asked for (game.Config.LazyPixels; World.WantPixels
// asks for the next). Call it between Steps on the goroutine that calls
// Step.
func SnapshotLater(w *game.World) *Later {
	f := w.Feed()
	v := w.Acquire()
	if v.Tick != f.Tick() || len(v.Snakes) != f.Slots() || v.NoPixels {
		v.Release()
		return nil
	}
	dirs := make([]game.Dir, len(v.Snakes))
	for i := range dirs {
		dirs[i] = f.Dir(i)
	}
	return &Later{v, dirs, f.Capacity()}
}

// Chunks writes the snapshot as chunks of at most maxChunk bytes (at least
// MinChunk) and lets the view go; later calls return an error.
func (l *Later) Chunks(maxChunk int) ([][]byte, error) { return l.ChunksPausing(maxChunk, nil) }

// ChunksPausing is Chunks, calling pause (when not nil) between slices of
// the work, each at most pausePixels pixels or pauseSnakes records: a
// writer sharing the cores with a world's steps waits there while one
// runs (cluster.Publisher).
func (l *Later) ChunksPausing(maxChunk int, pause func()) ([][]byte, error) {
	v := l.v
	if v == nil {
		return nil, errors.New("wire: a later snapshot written twice")
	}
	l.v = nil
	defer v.Release()
	if maxChunk < MinChunk {
		return nil, errChunk(maxChunk)
	}
	return snapshot(maxChunk, l.capacity, v, l.dirs, pause), nil
}

// The slices of a snapshot's writing between its pauses (ChunksPausing):
// about a millisecond's work each here.
const (
	pausePixels = 1 << 20
	pauseSnakes = 1 << 13
)

func errChunk(n int) error {
	return fmt.Errorf("wire: snapshot chunks of %d bytes: at least %d", n, MinChunk)
}

// snapshot writes world v (its pixels, snakes, their dirs and heads by
// slot with len(v.Snakes) the slot count, leaderboard, counters, best snake and recent deaths) of
// a world of capacity snakes as a snapshot, in chunks of at most maxChunk
// (at least MinChunk) bytes.
func snapshot(maxChunk, capacity int, v *game.View, dirs []game.Dir, pause func()) [][]byte {
	if pause == nil {
		pause = func() {}
	}
	b := []byte{Version, msgSnapshot}
	for _, u := range [...]int{v.W, v.H, capacity, len(v.Snakes)} {
		b = binary.AppendUvarint(b, uint64(u))
	}
	b = binary.AppendUvarint(b, v.Tick)
	// pixels, run-length encoded
	var pc pixCoder
	pix := v.Pix
	next := pausePixels
	for i := 0; i < len(pix); {
		if i >= next {
			pause()
			next = i + pausePixels
		}
		p := pix[i]
		j := i + 1
		for j < len(pix) && pix[j] == p {
			j++
		}
		b = binary.AppendUvarint(b, uint64(j-i))
		b = pc.appendPix(b, p)
		i = j
	}
	var zero game.SnakeInfo
	var sh shape
	var q sent
	last := -1
	for i := range v.Snakes {
		if i%pauseSnakes == pauseSnakes-1 {
			pause()
		}
		in := &v.Snakes[i]
		m := diff(&zero, in)
		if dirs[i] != game.None {
			m |= fDir
		}
		if v.Heads[i] != (game.Point{}) {
			m |= fHead
		}
		if m != 0 {
			b = binary.AppendUvarint(b, uint64(i-last))
			last = i
			b = appendRecord(b, m, &sh, &q, in, dirs[i], v.Heads[i])
		}
	}
	b = append(b, 0)
	b = binary.AppendUvarint(b, uint64(len(v.Top)))
	for _, t := range v.Top {
		b = binary.AppendUvarint(b, uint64(t.Slot))
	}
	b = binary.AppendUvarint(b, uint64(v.Players))
	b = binary.AppendUvarint(b, uint64(v.Bots))
	b = appendBest(b, v.Best)
	b = binary.AppendUvarint(b, uint64(len(v.Kills)))
	for k := range v.Kills {
		b = appendKill(b, &v.Kills[k])
	}

	room := maxChunk - chunkHeaderMax
	count := (len(b) + room - 1) / room
	chunks := make([][]byte, count)
	for k := range chunks {
		c := make([]byte, 0, maxChunk)
		c = append(c, Version, msgChunk)
		c = binary.AppendUvarint(c, v.Tick)
		c = binary.AppendUvarint(c, uint64(k))
		c = binary.AppendUvarint(c, uint64(count))
		chunks[k] = append(c, b[k*room:min((k+1)*room, len(b))]...)
	}
	return chunks
}
