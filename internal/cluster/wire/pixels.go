package wire

import (
	"encoding/binary"
	"slices"

	"snaked/game"
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
		x := log[k]
		p := x.Pixel()
		slot := p.Slot()
		if d := x.Dir(); d != game.None && k+1 < len(log) {
			// a move: its Head write follows
			k++
			prev = log[k].Index()
			h := moveBits[d&7]
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
		if p.Kind() >= game.Body {
			implied, last = last, slot
		}
		d := zig(x.Index()-prev) + itemWrite
		prev = x.Index()
		if slot == implied && d < 1<<21 && o+3 < uint(len(b)) {
			// the usual item: an index varint of 2 or 3 bytes (itemWrite
			// makes it at least 2), the pixel
			w := b[o : o+4 : o+4]
			w[0] = byte(d) | 0x80
			if d < 1<<14 {
				w[1] = byte(d >> 7)
				w[2] = h
				o += 3
				continue
			}
			w[1] = byte(d>>7) | 0x80
			w[2] = byte(d >> 14)
			w[3] = h
			o += 4
			continue
		}
		if uint(len(b))-o < 9 || o > uint(len(b)) {
			break // cannot happen: the caller made room
		}
		i := putUvarint(b, int(o), d)
		if slot == implied {
			b[i] = h
			o = uint(i + 1)
			continue
		}
		b[i] = h | pixSlot
		o = uint(putUvarint(b, i+1, uint64(slot)))
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
