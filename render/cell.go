package render

// cell is one character cell as the encoder sees it. A pixel cell (ch 0)
// holds the top pixel's colour in fg and the bottom's in bg; colour def
// there means "empty" (the terminal's default background). A text cell
// holds an ASCII glyph with its foreground and background (def meaning the
// terminal's defaults). A text space is stored as the pixel cell it looks
// like, so equal-looking cells compare equal.
type cell struct {
	ch     uint16
	fg, bg uint8
}

// Colours are stored as palette index + 1, so that 0 is the default and
// the zero cell is blank.
const (
	def       = 0      // default colour
	unknownCh = 0xffff // the terminal's content here is not known
)

var (
	blank   = cell{} // the zero cell, so clear() blanks a grid
	unknown = cell{ch: unknownCh}
)

// px returns a pixel cell.
func px(top, bot uint8) cell { return cell{fg: top, bg: bot} }

// txt returns a text cell.
func txt(ch byte, fg, bg uint8) cell {
	if ch == ' ' {
		return cell{fg: bg, bg: bg}
	}
	if ch < 0x20 || ch > 0x7e {
		ch = '?'
	}
	return cell{ch: uint16(ch), fg: fg, bg: bg}
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
