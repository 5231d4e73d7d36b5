package status

import (
	"bytes"
	"image"
	"image/color"
	"image/png"

	"snaked/game"
)

// The minimap: the whole world in at most mapMaxW x mapMaxH pixels, each
// a block of world pixels shaded by how much of it snakes cover, with the
// top 10's heads marked and numbered in their rank's colour.
const (
	mapMaxW = 512
	mapMaxH = 256
)

// Palette indices.
const (
	pxBackground = 0
	pxDensity    = 1 // pxDensity .. pxDensity+densityLevels-1, sparse to dense
	pxOutline    = pxDensity + densityLevels
	pxRank       = pxOutline + 1 // pxRank+r-1 is rank r's colour, r = 1..TopN
)

// densityLevels are the shades of a block's cover; densityTop[i] is the
// cover (in 1/1000) below which a block takes shade i+1.
const densityLevels = 6

var densityTop = [densityLevels - 1]int{20, 50, 100, 200, 400}

// RankColours are the colours of the live top 10 on the minimap, first to
// tenth; the stylesheet's .r1 to .r10 use the same (a test holds them
// together).
var RankColours = [game.TopN]color.RGBA{
	{0xff, 0xd7, 0x00, 0xff}, {0xd0, 0xd0, 0xd0, 0xff}, {0xe0, 0x8a, 0x3c, 0xff}, {0xff, 0x5c, 0x8a, 0xff},
	{0x5c, 0xc8, 0xff, 0xff}, {0xb2, 0x8d, 0xff, 0xff}, {0xff, 0x9f, 0x43, 0xff}, {0x4d, 0xe0, 0xc0, 0xff},
	{0xff, 0x6b, 0xd6, 0xff}, {0xe0, 0xe0, 0x5c, 0xff},
}

var palette = func() color.Palette {
	p := color.Palette{
		color.RGBA{0x0d, 0x11, 0x17, 0xff},                                     // background
		color.RGBA{0x14, 0x33, 0x2a, 0xff}, color.RGBA{0x17, 0x4d, 0x36, 0xff}, // density, sparse
		color.RGBA{0x1c, 0x6e, 0x45, 0xff}, color.RGBA{0x25, 0x94, 0x55, 0xff},
		color.RGBA{0x3c, 0xbf, 0x69, 0xff}, color.RGBA{0x9b, 0xf0, 0x9a, 0xff}, // dense
		color.RGBA{0x00, 0x00, 0x00, 0xff}, // outline
	}
	for _, c := range RankColours {
		p = append(p, c)
	}
	return p
}()

// digits is a 3x5 font of 0-9, a row a byte (bit 2 the left column).
var digits = [10][5]byte{
	{7, 5, 5, 5, 7}, {2, 6, 2, 2, 7}, {7, 1, 7, 4, 7}, {7, 1, 7, 1, 7}, {5, 5, 7, 1, 1},
	{7, 4, 7, 1, 7}, {7, 4, 7, 5, 7}, {7, 1, 1, 1, 1}, {7, 5, 7, 5, 7}, {7, 5, 7, 1, 7},
}

// minimapper draws minimaps, keeping its buffers between them. It is not
// safe for concurrent use: the refresh goroutine owns it.
type minimapper struct {
	img   *image.Paletted
	cover []int32
	enc   png.Encoder
	pool  pngPool
	out   bytes.Buffer
}

// mapSize is the minimap's size for a world of w x h pixels, and the world
// pixels a side of its pixel covers.
func mapSize(w, h int) (mw, mh, scale int) {
	if w <= 0 || h <= 0 {
		return 1, 1, 1
	}
	scale = max(1, (w+mapMaxW-1)/mapMaxW, (h+mapMaxH-1)/mapMaxH)
	return (w + scale - 1) / scale, (h + scale - 1) / scale, scale
}

// draw returns v's minimap as a PNG, in a new slice.
func (m *minimapper) draw(v *game.View) []byte {
	mw, mh, scale := mapSize(v.W, v.H)
	if m.img == nil || m.img.Rect.Dx() != mw || m.img.Rect.Dy() != mh {
		m.img = image.NewPaletted(image.Rect(0, 0, mw, mh), palette)
		m.cover = make([]int32, mw*mh)
	}
	clear(m.cover)
	clear(m.img.Pix)
	if v.W > 0 && v.H > 0 {
		m.shade(v, mw, mh, scale)
		m.mark(v, mw, mh, scale)
	}
	m.out.Reset()
	m.enc.CompressionLevel, m.enc.BufferPool = png.BestSpeed, &m.pool
	if err := m.enc.Encode(&m.out, m.img); err != nil {
		panic("status: minimap: " + err.Error()) // a Paletted image into a buffer cannot fail
	}
	return bytes.Clone(m.out.Bytes())
}

// shade adds each live snake's length to the block its head is in and
// shades each block by the share of its pixels those lengths would cover.
// It reads the snake records, not the pixels: a gateway following only
// some regions has every snake's record but not every pixel.
func (m *minimapper) shade(v *game.View, mw, mh, scale int) {
	for i := range v.Snakes {
		s, h := &v.Snakes[i], v.Heads[i]
		if !s.Used || !s.Alive || h.X < 0 || h.Y < 0 || h.X >= v.W || h.Y >= v.H {
			continue
		}
		m.cover[h.Y/scale*mw+h.X/scale] += int32(max(s.Length, 1))
	}
	per := scale * scale // pixels in a block
	for i, c := range m.cover {
		if c == 0 {
			continue
		}
		permille := int(c) * 1000 / per
		lvl := len(densityTop)
		for j, top := range densityTop {
			if permille < top {
				lvl = j
				break
			}
		}
		m.img.Pix[i] = uint8(pxDensity + lvl)
	}
}

// mark draws the top 10's heads, tenth first so the leader is on top: a
// square in the rank's colour, outlined, its number beside it.
func (m *minimapper) mark(v *game.View, mw, mh, scale int) {
	for r := len(v.Top); r >= 1; r-- {
		e := v.Top[r-1]
		if e.Slot < 0 || e.Slot >= len(v.Snakes) || !v.Snakes[e.Slot].Used {
			continue
		}
		h := v.Heads[e.Slot]
		x, y := h.X/scale, h.Y/scale
		c := uint8(pxRank + r - 1)
		m.rect(x-2, y-2, 5, 5, pxOutline)
		m.rect(x-1, y-1, 3, 3, c)
		m.number(x+3, y-2, r, c)
	}
}

// rect fills w x h pixels from (x, y), clipped to the image.
func (m *minimapper) rect(x, y, w, h int, c uint8) {
	for j := y; j < y+h; j++ {
		for i := x; i < x+w; i++ {
			m.set(i, j, c)
		}
	}
}

func (m *minimapper) set(x, y int, c uint8) {
	if x >= 0 && y >= 0 && x < m.img.Rect.Dx() && y < m.img.Rect.Dy() {
		m.img.Pix[y*m.img.Stride+x] = c
	}
}

// number draws n in the 3x5 font from (x, y), each glyph on an outline,
// clipped to the image.
func (m *minimapper) number(x, y, n int, c uint8) {
	s := []byte{byte('0' + n%10)}
	if n >= 10 {
		s = []byte{byte('0' + n/10), byte('0' + n%10)}
	}
	m.rect(x-1, y-1, 4*len(s)+1, 7, pxOutline)
	for i, d := range s {
		for row, bits := range digits[d-'0'] {
			for col := range 3 {
				if bits>>(2-col)&1 != 0 {
					m.set(x+4*i+col, y+row, c)
				}
			}
		}
	}
}

// pngPool is a png.EncoderBufferPool of one buffer: the minimapper encodes
// one image at a time.
type pngPool struct{ b *png.EncoderBuffer }

func (p *pngPool) Get() *png.EncoderBuffer  { b := p.b; p.b = nil; return b }
func (p *pngPool) Put(b *png.EncoderBuffer) { p.b = b }
