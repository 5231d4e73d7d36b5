package wire

// # The format (version 2)
//
// Two messages (and the regional form of a delta, kinds 4 to 6: see
// Regions in regions.go):
//
//   - A delta (Encoder.AppendDelta): what one or more steps changed, from
//     the encoder's last tick (its base) to the world's tick. It holds the
//     base and new tick numbers, the slot count, each changed snake record
//     (only the fields that changed, against the last delta, and never the
//     head: see below), the leaderboard (slots), the player and bot
//     counters, the best snake when it changed, the deaths since the base,
//     and every grid write of those steps, in order, straight from the
//     world's game.Feed (a move's two writes as one item). A snake's spawn
//     protection ends by the clock, not by a write: the replica finds whose
//     ended from the records and marks their bodies' tiles Dirty as the
//     world does.
//   - A snapshot (Snapshot): the whole world at one tick (pixels run-length
//     encoded, every snake, the leaderboard, counters, the deaths its views
//     show), split into chunks of at most a given size. Chunks carry the
//     snapshot's tick, their index and the count; NewReplica takes them in
//     any order.
//
// Every message starts with the version byte (Version) and a kind byte;
// integers are varints (encoding/binary), signed differences zigzag. A
// pixel is one byte (kind<<4 | colour, pixSlot when its slot follows as a
// varint; without it the slot is 0 for Empty and Fruit, else the slot of
// the previous Body or Head pixel of the message). A delta's grid writes
// are items that start with a varint u. A move (a snake's old head turning
// Body and its new head, two writes of the feed) is u < itemWrite: bits
// 0-4 (moveGap) g, moveHigher towards the higher index (Right, Down),
// moveVertical for Up and Down; its slot is the previous Body or Head
// pixel's plus 1+g, or when g is moveGap a varint that follows; the Body
// is written at that snake's head, the Head one pixel on (wrapping), both
// of the colour of the Head pixel there. Any other write is u = its
// index's difference from the previous write's (zigzag) + itemWrite, then
// its pixel. The write count counts a move as two. Decoders check every
// length and range and return an error wrapping ErrCorrupt, never panic,
// on arbitrary bytes; a message is validated whole before a Replica
// changes, so a bad one leaves it as it was.
//
// A delta carries no heads: a snake's head is the point of the last Head
// pixel of its slot among the delta's grid writes when it has one and the
// snake's length (after the delta's records) is not 0, the origin when the
// length is 0, and else where it was. (A head moves only by a grid write
// of a Head pixel there: a spawn, a move; a death leaves it where it was;
// a leave or a join empties the slot, length 0.) Likewise a snake's dir is
// the direction of its last move item in the delta, unless its record sets
// it, and a record's length raises the best length to it (a record sets
// the best length only when that is not enough). So a snake that only
// moved, or turned and moved, needs no record: the delta holds a record
// for growth, a turn without a move (a protected snake waiting), spawn,
// death, kill, dash, join or leave.
//
// The leaderboard and the best snake are the world's as of its last
// publish: after a tick whose publish was skipped (every view buffer held)
// they are those of the tick before.
//
// Layout. A delta: version, kind 1, base tick, tick, slot count; snake
// records (slot gap >= 1, field mask, the fields; gap 0 ends them);
// leaderboard (count, slots; names and lengths are the snakes'); players,
// bots; best (0, or 1 then slot, name, length); deaths (count, each in
// full); grid writes (count, then the items). A delta's record never has
// the head bit (fHead) set. A snapshot chunk: version, kind 2, tick,
// index, count, then its piece of the snapshot body: version, kind 3, W,
// H, capacity, slot count, tick; pixel runs (length, pixel) covering W*H;
// snake records as in a delta against empty slots; leaderboard; players,
// bots; best (always); the deaths of the last KillTicks (what views show).
//
// A Replica follows a world: built from a snapshot at tick T, it accepts
// the delta whose base is T, then the one whose base is that delta's tick,
// and so on. A delta with any other base is refused with ErrGap (a tick was
// missed, or came twice): the follower needs a new snapshot. The encoder
// and Snapshot run on the goroutine that calls Step, between Steps;
// SnapshotLater takes the view of the tick there, and Later.Chunks writes
// the same snapshot from it on any goroutine.

import (
	"encoding/binary"
	"errors"

	"snaked/game"
)

// Version is the first byte of every message.
const Version = 2

// Message kinds, the second byte.
const (
	msgDelta    = 1
	msgChunk    = 2 // one piece of a snapshot
	msgSnapshot = 3 // a whole snapshot body, as the chunks split it
)

// Errors.
var (
	// ErrGap says a delta does not follow the replica's tick.
	ErrGap = errors.New("wire: delta does not follow the replica's tick: a snapshot is needed")
	// ErrCorrupt says a message does not decode.
	ErrCorrupt = errors.New("wire: corrupt message")
	// ErrTooLarge says a snapshot's world is larger than its follower takes.
	ErrTooLarge = errors.New("wire: snapshot of a world larger than this follower takes")
)

// chunkHeaderMax bounds a chunk's header: version, kind, three varints.
const chunkHeaderMax = 2 + 3*binary.MaxVarintLen64

// MinChunk is the smallest chunk size Snapshot accepts.
const MinChunk = 64

// Snake record fields, the bits of a record's mask, the ones that change
// every tick lowest so a moving snake's mask is one byte.
const (
	fHead = 1 << iota
	fDir
	fLength
	fFlags // colour, used, alive, bot
	fKills
	fDash
	fBest
	fID
	fName
	fSpawn
	fDeath
	fProt
	fKilledBy
	fAll = 1<<iota - 1
)

// The fFlags byte: the colour in the low 4 bits, then these.
const (
	flagColour = 15
	flagUsed   = 1 << 4
	flagAlive  = 1 << 5
	flagBot    = 1 << 6
	flagsAll   = 1<<7 - 1
)

// A grid-write item's first varint u: a move below itemWrite, else a
// write's index difference (zigzag) plus itemWrite.
const (
	itemWrite    = 128
	moveGap      = 31     // bits 0-4: the slot gap - 1; all set, the slot follows
	moveHigher   = 1 << 5 // the move goes towards the higher index: Right, Down
	moveVertical = 1 << 6 // the move goes Up or Down
)

// moveBits maps a move's direction to its item's direction bits.
var moveBits = [8]byte{
	game.Up:    moveVertical,
	game.Right: moveHigher,
	game.Down:  moveVertical | moveHigher,
	game.Left:  0,
}

// moveDirs maps an item's direction bits, shifted down by 5, to the move's
// direction.
var moveDirs = [4]game.Dir{game.Left, game.Right, game.Up, game.Down}

// A pixel byte: kind<<4 | colour (pixLook), and pixSlot when the slot
// follows. pixShift brings a game.Pixel's kind and colour (bits 16-21)
// down to pixLook.
const (
	pixLook  = 1<<6 - 1
	pixSlot  = 1 << 6
	pixShift = 16
	pixAll   = pixLook | pixSlot
)

// The kill flags byte.
const (
	killVictimBot = 1 << iota
	killKillerBot
	killHeadOn
	killAll = 1<<iota - 1
)
