package game

// Write is one grid write of a step: the pixel at Index became Pixel. A
// snake's move is two writes in a row: Body at its old head, whose Dir is
// the move's direction, then Head at its new head, one pixel on in that
// direction (wrapping), both of the snake's slot and colour. Every other
// write's Dir is None. A Write is 8 bytes: a step's writes are read again
// by every view brought up to date over them.
type Write struct {
	i int32 // Index
	p Pixel // Pixel, and a move's Dir at bits moveDirShift and up
}

// moveDirShift is where a Write keeps its Dir: above the Pixel's bits.
const moveDirShift = 29

// MakeWrite returns the write of pixel p at index i, with d the direction
// of the move it starts (None for any write but a move's Body).
func MakeWrite(i int, p Pixel, d Dir) Write {
	return Write{int32(i), p&pixBits | Pixel(d)<<moveDirShift}
}

// Index is the pixel's index in the grid, row-major (y*W + x).
func (c Write) Index() int { return int(c.i) }

// Pixel is the value written.
func (c Write) Pixel() Pixel { return c.p & pixBits }

// Dir is the direction of the move whose Body write this is, else None.
func (c Write) Dir() Dir { return Dir(c.p >> moveDirShift) }
