package wire

import (
	"encoding/binary"
	"slices"

	"snaked/game"
)

// bodyPixel is the least Pixel of a Body or a Head.
const bodyPixel = game.Pixel(game.Body) << 20

// A varint (encoding/binary) takes 7 bits a byte, low bits first, with
// varintMore set on every byte but the last: values below varint2 take at
// most two bytes, below varint3 three.
const (
	varintMore = 0x80
	varint2    = 1 << 14
	varint3    = 1 << 21
)

// pixCoder carries the state pixel coding shares along one message: the
// last index and the last Body or Head slot.
type pixCoder struct {
	i    int32
	slot int
}

// appendLog appends the writes of log as grid-write items (see the
// format): a move (a Body write with a Dir, at the old head, and the Head
// write after it) goes as one byte, its direction from the Dir and the gap
// from the previous snake pixel's slot (movers come in slot order), the
// slot after it when the gap is moveGap or more (or back); any other write
// as its index difference plus itemWrite, its pixel and perhaps its slot.
// One tight loop over a buffer grown once (at most 9 bytes a write), with
// a short path for the common items.
func (c *pixCoder) appendLog(dst []byte, log []game.Write) []byte {
	dst = slices.Grow(dst, 9*len(log))
	o, prev, last := encodeLog(dst[len(dst):cap(dst)], log, int(c.i), c.slot)
	c.i, c.slot = int32(prev), last
	return dst[:len(dst)+o]
}

// encodeLog is appendLog's loop: it writes log's items into b, which has
// room for 9 bytes a write, from the index prev and the snake pixel slot
// last, and returns the bytes written and the new prev and last. It is a
// function of its own so that the loop's state fits in registers.
func encodeLog(b []byte, log []game.Write, prev, last int) (int, int, int) {
	var o uint // unsigned, so that one check covers the stores after it
	for k := 0; k < len(log); k++ {
		p, dir, slot := log[k].Pixel(), log[k].Dir(), log[k].Pixel().Slot()
		if dir != game.None && k+1 < len(log) {
			// a move: its Head write follows
			k++
			prev = log[k].Index()
			h := moveBits[dir]
			g := slot - last - 1
			last = slot
			if uint(g) < moveGap && o < uint(len(b)) {
				b[o] = h | byte(g)
				o++
				continue
			}
			if uint(len(b))-o < 4 || o > uint(len(b)) {
				break // cannot happen: the caller made room
			}
			b[o] = h | moveGap
			o = uint(putUvarint(b, int(o+1), uint64(slot)))
			continue
		}
		h := byte(p>>pixShift) & pixLook // kind<<4 | colour
		implied := 0
		if p >= bodyPixel {
			implied, last = last, slot
		}
		i := log[k].Index()
		d := zig(i-prev) + itemWrite
		prev = i
		if slot == implied && d < varint3 && o+3 < uint(len(b)) {
			// the usual item: an index varint of 2 or 3 bytes (itemWrite
			// makes it at least 2), the pixel
			w := b[o : o+4 : o+4]
			w[0] = byte(d) | varintMore
			if d < varint2 {
				w[1] = byte(d >> 7)
				w[2] = h
				o += 3
				continue
			}
			w[1] = byte(d>>7) | varintMore
			w[2] = byte(d >> 14)
			w[3] = h
			o += 4
			continue
		}
		if uint(len(b))-o < 9 || o > uint(len(b)) {
			break // cannot happen: the caller made room
		}
		e := putUvarint(b, int(o), d)
		if slot == implied {
			b[e] = h
			o = uint(e + 1)
			continue
		}
		b[e] = h | pixSlot
		o = uint(putUvarint(b, e+1, uint64(slot)))
	}
	return int(o), prev, last
}

// appendPix appends one pixel (see the format).
func (c *pixCoder) appendPix(dst []byte, p game.Pixel) []byte {
	k, slot := p.Kind(), p.Slot()
	b := byte(p>>pixShift) & pixLook
	implied := 0
	if k >= game.Body {
		implied = c.slot
		c.slot = slot
	}
	if slot != implied {
		return binary.AppendUvarint(append(dst, b|pixSlot), uint64(slot))
	}
	return append(dst, b)
}
