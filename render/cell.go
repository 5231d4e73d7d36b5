package render

// cell is one character cell as the encoder sees it, packed in 16 bits
// (two grids of them per session, so their size is most of a session's
// memory): the glyph in the top 7 bits and the colour pair fg*17+bg in the
// low 9. A pixel cell (glyph 0) holds the top pixel's colour in fg and the
// bottom's in bg; colour def there means "empty" (the terminal's default
// background). A text cell holds a glyph other than space with its
// foreground and background (def meaning the terminal's defaults): a
// printable ASCII byte (0x21-0x7e) drawn as itself, or one of the extended
// glyphs (codes 0x01-0x1f, see extGlyph) drawn in UTF-8. A text space is
// stored as the pixel cell it looks like, so equal-looking cells compare
// equal.
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

// Cells every part of the encoder compares with (constants, so that a
// comparison is an instruction, not a load first).
const (
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

// mk packs a cell; ch is 0 (pixel), a text glyph (printable ASCII or an
// extended glyph code) or unknownCh, fg and bg are colours below ncol.
func mk(ch uint16, fg, bg uint8) cell {
	return cell(ch<<pairBits | uint16(fg)*ncol + uint16(bg))
}

func (c cell) ch() uint16 { return uint16(c) >> pairBits }
func (c cell) fg() uint8  { return pairFg[c&pairMask] }
func (c cell) bg() uint8  { return pairBg[c&pairMask] }

// px returns a pixel cell.
func px(top, bot uint8) cell { return mk(0, top, bot) }

// txt returns a text cell: ch is printable ASCII or an extended glyph code
// (anything else is drawn as '?').
func txt(ch byte, fg, bg uint8) cell {
	if ch == ' ' {
		return px(bg, bg)
	}
	if ch > 0x7e || ch < 0x20 && extGlyph[ch&0x1f] == "" {
		ch = '?'
	}
	return mk(uint16(ch), fg, bg)
}

// Extended glyphs: text cells drawn with a non-ASCII character on UTF-8
// terminals (every profile but Mono). In text the composer builds (put,
// box, the HUD's lines) each is one byte, its code, so a line's length is
// still its width in cells; put draws them as extAlt's ASCII on Mono, so no
// Mono cell ever holds one.
//
// The choice of glyphs, knowingly:
//   - All are one column wide on every terminal that can draw the game
//     at all. Each is East Asian Width "A" (ambiguous: two columns on a
//     terminal set to treat ambiguous characters as wide, as some CJK
//     setups are), the class of the playfield's own half blocks ▀▄█; a
//     terminal that draws them wide cannot show the playfield either, so
//     these add no new requirement. Nothing of class W (wide: CJK, emoji)
//     is used; internal/vtmodel rejects such runes.
//   - All are in WGL4 (Windows Glyph List 4), the set nearly every
//     monospace font covers (Courier New, Consolas, DejaVu Sans Mono,
//     Menlo, the Linux console's Terminus and Lat2 fonts): light box
//     drawing, the four cardinal arrows (a diagonal is drawn as two of
//     them, e.g. ↑→; ↗ and friends are not in WGL4), the middle dot and
//     the ellipsis.
//   - All take 2 (·) or 3 bytes in UTF-8 against ASCII's 1, so they are
//     kept to boxes (drawn once), separators and the radar's arrow.
const (
	gH     = 0x01 + iota // ─ box: horizontal
	gV                   // │ box: vertical, separators
	gTL                  // ┌
	gTR                  // ┐
	gBL                  // └
	gBR                  // ┘
	gLeft                // ←
	gUp                  // ↑
	gRight               // →
	gDown                // ↓
	gDot                 // · list separator
	gMore                // … text cut short
	nExt                 // codes below this are defined
)

// extGlyph is each extended glyph's UTF-8 text; extAlt its ASCII stand-in
// on Mono.
var (
	extGlyph = [32]string{
		gH: "\u2500", gV: "\u2502", gTL: "\u250c", gTR: "\u2510", gBL: "\u2514", gBR: "\u2518",
		gLeft: "\u2190", gUp: "\u2191", gRight: "\u2192", gDown: "\u2193",
		gDot: "\u00b7", gMore: "\u2026",
	}
	extAlt = [32]byte{
		gH: '-', gV: '|', gTL: '+', gTR: '+', gBL: '+', gBR: '+',
		gLeft: '<', gUp: '^', gRight: '>', gDown: 'v',
		gDot: '/', gMore: '~',
	}
)

// glyphText is the bytes that draw each text glyph code: ASCII as itself,
// the extended glyphs in UTF-8 (built once, so drawing allocates nothing).
var glyphText = func() [128]string {
	var t [128]string
	for i := range t {
		t[i] = string(rune(i))
	}
	for i, g := range extGlyph {
		if g != "" {
			t[i] = g
		}
	}
	return t
}()

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
	for i := range fgCode {
		fgLen[i], bgLen[i] = uint8(len(fgCode[i])), uint8(len(bgCode[i]))
	}
	pixPlan = makePixPlan() // after the init above (pairFg) and the tables here
}

// fgLen and bgLen are the lengths of fgCode and bgCode, indexed by any
// colour byte (sgrPlan weighs pens without a bounds check).
var fgLen, bgLen [256]uint8

// Glyphs for pixel cells.
const (
	upper = "\u2580" // ▀
	lower = "\u2584" // ▄
	full  = "\u2588" // █
)
