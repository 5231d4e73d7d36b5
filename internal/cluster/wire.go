package cluster

import (
	"encoding/binary"
	"errors"

	"snaked/game"
)

// The link's own messages (joins, inputs, heartbeats), version 4: a
// version byte, then unsigned varints and length-prefixed strings. The
// world's ticks and snapshot chunks are game's wire format behind a stream
// header naming the simulation instance (appendStream).
const wireVersion = 4

// Bounds on what a message may carry.
const (
	maxName = 64
	maxKey  = 128
	maxMsg  = 256
	// a gateway's sessions, at most (a heartbeat claiming more is bad)
	maxCount = 1 << 17
)

// Input kinds.
const (
	inTurn byte = iota + 1
	inDash
	inRespawn
	inLeave
	inCancel // a join the gateway gave up waiting for: its nonce in join
)

// Join answers.
const (
	joinOK byte = iota
	joinFull
	joinTaken
	joinFailed
	joinClaimed   // another key holds the name
	joinUnchecked // the name's holder could not be learnt
)

var errBad = errors.New("cluster: malformed message")

// input is one player input for the simulation: it names the whole seat
// (the snake, the simulation instance and the join that gave it), and the
// simulation applies it only to the snake that join gave.
type input struct {
	kind byte
	gw   uint64 // the gateway's instance
	id   game.ID
	dir  game.Dir
	sim  uint64 // the simulation instance that gave id
	join uint64 // the join's nonce among the gateway's
}

func appendInput(b []byte, in input) []byte {
	b = append(b, wireVersion, in.kind)
	b = binary.AppendUvarint(b, in.gw)
	b = binary.AppendUvarint(b, uint64(in.id))
	b = append(b, byte(in.dir))
	b = binary.AppendUvarint(b, in.sim)
	return binary.AppendUvarint(b, in.join)
}

func decodeInput(b []byte) (in input, err error) {
	r := reader{b: b}
	if r.byte() != wireVersion {
		return in, errBad
	}
	in.kind = r.byte()
	in.gw = r.uvarint()
	in.id = game.ID(r.uvarint())
	in.dir = game.Dir(r.byte())
	in.sim = r.uvarint()
	in.join = r.uvarint()
	if r.bad || len(r.b) != 0 || in.kind < inTurn || in.kind > inCancel || in.dir > game.Left {
		return in, errBad
	}
	return in, nil
}

// seatInput is the input of kind for seat s of gateway gw.
func seatInput(kind byte, gw uint64, s game.Seat, d game.Dir) input {
	return input{kind: kind, gw: gw, id: s.ID, dir: d, sim: s.World, join: s.Join}
}

// The stream's header, before every tick and every snapshot chunk (game's
// wire format): its version and the simulation instance whose world it
// is, so a follower never applies one world's tick to another's replica.
const streamVersion = 1

// appendStream appends the stream header of instance sim.
func appendStream(b []byte, sim uint64) []byte {
	return binary.AppendUvarint(append(b, streamVersion), sim)
}

// decodeStream splits a stream message into its instance and its game
// message.
func decodeStream(b []byte) (sim uint64, msg []byte, err error) {
	r := reader{b: b}
	if r.byte() != streamVersion {
		return 0, nil, errBad
	}
	sim = r.uvarint()
	if r.bad || sim == 0 {
		return 0, nil, errBad
	}
	return sim, r.b, nil
}

// joinReq asks the simulation for a snake.
type joinReq struct {
	gw    uint64
	name  string
	key   string // the player's key fingerprint; "" = keyless
	nonce uint64 // this join among the gateway's, for a cancel
}

func appendJoinReq(b []byte, j joinReq) []byte {
	b = append(b, wireVersion)
	b = binary.AppendUvarint(b, j.gw)
	b = appendString(b, j.name)
	b = appendString(b, j.key)
	return binary.AppendUvarint(b, j.nonce)
}

func decodeJoinReq(b []byte) (j joinReq, err error) {
	r := reader{b: b}
	if r.byte() != wireVersion {
		return j, errBad
	}
	j.gw = r.uvarint()
	j.name = r.string(maxName)
	j.key = r.string(maxKey)
	j.nonce = r.uvarint()
	if r.bad || len(r.b) != 0 || j.name == "" {
		return j, errBad
	}
	return j, nil
}

// joinRep is the simulation's answer.
type joinRep struct {
	status byte
	id     game.ID
	msg    string
	sim    uint64 // the simulation's instance (a restarted one has another)
	tick   uint64 // the first tick whose view shows the snake (game.World.JoinNear)
}

func appendJoinRep(b []byte, j joinRep) []byte {
	b = append(b, wireVersion, j.status)
	b = binary.AppendUvarint(b, uint64(j.id))
	b = appendString(b, j.msg)
	b = binary.AppendUvarint(b, j.sim)
	return binary.AppendUvarint(b, j.tick)
}

func decodeJoinRep(b []byte) (j joinRep, err error) {
	r := reader{b: b}
	if r.byte() != wireVersion {
		return j, errBad
	}
	j.status = r.byte()
	j.id = game.ID(r.uvarint())
	j.msg = r.string(maxMsg)
	j.sim = r.uvarint()
	j.tick = r.uvarint()
	if r.bad || len(r.b) != 0 || j.status > joinUnchecked {
		return j, errBad
	}
	return j, nil
}

// heartbeat is a gateway's periodic "still here", with how many of its
// sessions play and watch (every gateway sums them for its banner).
type heartbeat struct {
	gw                  uint64
	players, spectators uint64
}

func appendHeartbeat(b []byte, h heartbeat) []byte {
	b = binary.AppendUvarint(append(b, wireVersion), h.gw)
	b = binary.AppendUvarint(b, h.players)
	return binary.AppendUvarint(b, h.spectators)
}

func decodeHeartbeat(b []byte) (h heartbeat, err error) {
	r := reader{b: b}
	if r.byte() != wireVersion {
		return h, errBad
	}
	h.gw = r.uvarint()
	h.players, h.spectators = r.uvarint(), r.uvarint()
	if r.bad || len(r.b) != 0 || h.players > maxCount || h.spectators > maxCount {
		return heartbeat{}, errBad
	}
	return h, nil
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// reader reads a message; a short or overlong field sets bad.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.bad = true
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	var tmp [binary.MaxVarintLen64]byte
	if n <= 0 || n != binary.PutUvarint(tmp[:], v) { // short, overlong or not minimal
		r.bad = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) string(most int) string {
	n := r.uvarint()
	if r.bad || n > uint64(most) || n > uint64(len(r.b)) {
		r.bad = true
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}
