package render

// cell is one character cell as the encoder sees it, packed in 16 bits
// (two grids of them per session, so their size is most of a session's
// memory): the glyph in the top 7 bits and the colour pair fg*17+bg in the
// low 9. A pixel cell (glyph 0) holds the top pixel's colour in fg and the
// bottom's in bg; colour def there means "empty" (the terminal's default
// background). A text cell holds a printable ASCII glyph other than space
// with its foreground and background (def meaning the terminal's
// defaults). A text space is stored as the pixel cell it looks like, so
// equal-looking cells compare equal.
type cell uint16

// Colours are stored as palette index + 1, so that 0 is the default and
// the zero cell is blank.
const (
	def       = 0    // default colour
	ncol      = 17   // colours: def and the 16 palette entries
	unknownCh = 0x7f // glyph of a cell whose content on the terminal is not known
	pairBits  = 9
	pairMask  = 1<<pairBits - 1
)

var (
	blank   = cell(0) // the zero cell, so clear() blanks a grid
	unknown = cell(unknownCh << pairBits)
)

// pairFg and pairBg decode a colour pair without dividing.
var pairFg, pairBg [pairMask + 1]uint8

func init() {
	for p := range ncol * ncol {
		pairFg[p], pairBg[p] = uint8(p/ncol), uint8(p%ncol)
	}
}

// mk packs a cell; ch is 0 (pixel), a printable ASCII glyph or unknownCh,
// fg and bg are colours below ncol.
func mk(ch uint16, fg, bg uint8) cell {
	return cell(ch<<pairBits | uint16(fg)*ncol + uint16(bg))
}

func (c cell) ch() uint16 { return uint16(c) >> pairBits }
func (c cell) fg() uint8  { return pairFg[c&pairMask] }
func (c cell) bg() uint8  { return pairBg[c&pairMask] }

// px returns a pixel cell.
func px(top, bot uint8) cell { return mk(0, top, bot) }

// txt returns a text cell.
func txt(ch byte, fg, bg uint8) cell {
	if ch == ' ' {
		return px(bg, bg)
	}
	if ch <= 0x20 || ch > 0x7e {
		ch = '?'
	}
	return mk(uint16(ch), fg, bg)
}

// Palette: 16-colour index + 1.
const (
	black = iota + 1
	red
	green
	yellow
	blue
	magenta
	cyan
	white
	grey
	brightRed
	brightGreen
	brightYellow
	brightBlue
	brightMagenta
	brightCyan
	brightWhite
)

// snakePal maps a game.Colour to a terminal colour. Red is kept for fruit,
// bright white for your own head and grey for spawn protection.
var snakePal = [16]uint8{
	green, yellow, blue, magenta, cyan, brightGreen, brightYellow, brightBlue,
	brightMagenta, brightCyan, white, green, yellow, blue, magenta, cyan,
}

const (
	fruitCol   = brightRed
	ownHeadCol = brightWhite
	shieldCol  = grey
)

// SGR parameter text per colour; index def is the default.
var fgCode, bgCode [17]string

func init() {
	for i := 0; i < 8; i++ {
		fgCode[1+i] = "3" + string(rune('0'+i))
		fgCode[9+i] = "9" + string(rune('0'+i))
		bgCode[1+i] = "4" + string(rune('0'+i))
		bgCode[9+i] = "10" + string(rune('0'+i))
	}
	fgCode[def] = "39"
	bgCode[def] = "49"
}

// Glyphs for pixel cells.
const (
	upper = "\u2580" // ▀
	lower = "\u2584" // ▄
	full  = "\u2588" // █
)
