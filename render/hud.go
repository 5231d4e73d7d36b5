package render

import (
	"strconv"

	"snaked/game"
)

// This file draws the HUD's text: the banner and status rows, the boxes
// (death, help), the hint and the "please enlarge" screen. Text is
// printable ASCII plus the extended glyph codes (cell.go), one byte a cell.

// put writes s at (x, y), clipped to the row, marks the cells it changes
// and returns the next column. On Mono the extended glyphs are drawn as
// their ASCII stand-ins and the colours are dropped.
func put[S string | []byte](r *Renderer, x, y int, s S, fg, bg uint8) int {
	if y < 0 || y >= r.rows {
		return x
	}
	mono := r.prof == Mono
	if mono {
		fg, bg = def, def
	}
	row := r.next[y*r.cols : (y+1)*r.cols]
	for i := 0; i < len(s) && x < len(row); i++ {
		if x >= 0 {
			c := s[i]
			if mono && c < 0x20 {
				c = extAlt[c]
			}
			if t := txt(c, fg, bg); row[x] != t {
				row[x] = t
				r.mask[y] |= 1 << (x / span)
			}
		}
		x++
	}
	return x
}

// putOver writes s at cell x of screen row y on the playfield like put,
// except over cells where the playfield shows a snake (any body or head),
// which keep showing it: the HUD's text over the playfield (tags, radar,
// kill feed, hint) never hides a snake. Fruit may be hidden. Every cell
// of [x, x+len(s)) on the screen is written.
//
// The cells under an overlay, by the time it is painted, show the world
// as it is now wherever it shows a pixel: every cell whose pixels changed
// since the last frame was composed again (dirtyTiles, or the whole
// playfield), and so were last frame's overlays that moved (restore);
// a cell still holding last frame's overlay text had no snake then and
// its pixels did not change since. So a pixel cell in a snake's colours
// is a snake, and putOver keeps it without reading the world's pixels
// (4 bytes each over the whole world: at thousands of sessions each row
// read there is a cache miss). Mono, whose cells are glyphs a tag could
// also hold, recomposes the snake cells from v.
func putOver[S string | []byte](r *Renderer, v *game.View, own, x, y int, s S, fg uint8) {
	x0, x1 := max(x, 0), min(x+len(s), r.cols)
	if x0 >= x1 {
		return
	}
	row := r.next[y*r.cols : (y+1)*r.cols]
	if r.prof != Mono {
		for cx := x0; cx < x1; cx++ {
			if c := row[cx]; c.ch() != 0 || !snakeShown[c&pairMask] {
				if t := txt(s[cx-x], fg, def); c != t {
					row[cx] = t
					r.mask[y] |= 1 << (cx / span)
				}
			}
		}
		return
	}
	sy := y - r.pfTop
	wy := mod(r.camY+2*sy, v.H)
	wy1 := wy + 1
	if wy1 == v.H {
		wy1 = 0
	}
	top, bot := v.Pix[wy*v.W:(wy+1)*v.W], v.Pix[wy1*v.W:(wy1+1)*v.W]
	const snake = game.Pixel(game.Body) << 20 // Body and Head have this bit
	wx := mod(r.camX+x0, v.W)
	for cx := x0; cx < x1; cx++ {
		was := row[cx]
		if (top[wx]|bot[wx])&snake != 0 {
			r.segment(v, row[cx:cx+1], top[wx:wx+1], bot[wx:wx+1], own, true, wx, wy)
		} else {
			c := s[cx-x]
			if c < 0x20 {
				c = extAlt[c]
			}
			row[cx] = txt(c, def, def)
		}
		if row[cx] != was {
			r.mask[y] |= 1 << (cx / span)
		}
		if wx++; wx == v.W {
			wx = 0
		}
	}
}

// snakeShown says, for a pixel cell's colour pair, whether either pixel
// is a snake's: a colour other than the default (empty) and the fruit's,
// which no snake wears.
var snakeShown = func() (t [pairMask + 1]bool) {
	snake := func(c uint8) bool { return c != def && c != fruitCol }
	for p := range ncol * ncol {
		t[p] = snake(uint8(p/ncol)) || snake(uint8(p%ncol))
	}
	return t
}()

func (r *Renderer) fill(y int, bg uint8) {
	if r.prof == Mono {
		bg = def
	}
	row := r.next[y*r.cols : (y+1)*r.cols]
	for i := range row {
		row[i] = px(bg, bg)
	}
}

// enlargeMsg is the "please enlarge" screen's text, above the line with
// the terminal's size.
var enlargeMsg = [...]string{"please enlarge", "the terminal", "to at least " + strconv.Itoa(MinCols) + "x" + strconv.Itoa(MinRows)}

// enlarge composes the "please enlarge" screen: the game screen's least
// size and the terminal's size now.
func (r *Renderer) enlarge() {
	r.num = append(r.num[:0], "now "...)
	r.num = strconv.AppendInt(r.num, int64(r.tcols), 10) // the terminal's size, not the area's
	r.num = append(r.num, 'x')
	r.num = strconv.AppendInt(r.num, int64(r.trows), 10)
	y := r.rows/2 - 2
	for _, m := range enlargeMsg {
		put(r, (r.cols-len(m))/2, y, m, brightYellow, def)
		y++
	}
	put(r, (r.cols-len(r.num))/2, y, r.num, white, def)
}

// rowsKey is everything the status row shows, and bannerKey everything
// the banner shows, so that a frame that would draw either the same leaves
// it alone: composing them costs more than the rest of a quiet frame's
// HUD, and in a crowd the leaderboard's lengths change most ticks while
// the banner's counts seldom do.
type rowsKey struct {
	ok, banner, spectator bool
	mode                  statusMode
	sx                    int16  // where the leaderboard starts: the status text's width
	bots                  uint16 // bit i: top[i] is a bot
	shutdown              int32
	dash                  int32 // seconds to wait; -1 ready
	mark                  int32
	ntop                  int8
	shown                 int8 // entries that decided the leaderboard drawn: those drawn and the first that did not fit
	name                  string
	length, rank, kills   int
	best, allRank         int
	top                   [game.TopN]game.Entry
}

// statusMode is what the status row's text reports.
type statusMode int8

// Status modes.
const (
	modeNone     statusMode = iota // no view to report on
	modeAlive                      // the player's figures: name, length, rank, kills, dash
	modeDead                       // the player's death: its best length, all-time rank
	modeSpawning                   // the player waits for its first spawn
	modeWatching                   // a spectator, and whom it follows
)

// The leaderboard's bot bits must fit rowsKey.bots.
const _ uint16 = 1<<game.TopN - 1

// sameText reports whether k and o make the same status text, the row's
// part before the leaderboard.
func (k *rowsKey) sameText(o *rowsKey) bool { return k.sx == o.sx && k.sameFigures(o) }

// sameFigures reports whether k and o hold the same figures for the status
// text (status makes the text from them alone).
func (k *rowsKey) sameFigures(o *rowsKey) bool {
	return k.ok == o.ok && k.banner == o.banner && k.spectator == o.spectator && k.mode == o.mode &&
		k.shutdown == o.shutdown && k.dash == o.dash && k.name == o.name &&
		k.length == o.length && k.rank == o.rank && k.kills == o.kills && k.best == o.best && k.allRank == o.allRank
}

// sameBoard reports whether k draws the leaderboard that o, the key of
// the row drawn last, drew, from the same column: the same entries as far
// as o.shown says they decided it (entries past the first that did not
// fit change nothing).
func (k *rowsKey) sameBoard(o *rowsKey) bool {
	if k.ok != o.ok || k.banner != o.banner || k.spectator != o.spectator || k.sx != o.sx || k.mark != o.mark {
		return false
	}
	n := min(o.shown, k.ntop)
	if n != min(o.shown, o.ntop) {
		return false
	}
	if m := uint16(1)<<n - 1; k.bots&m != o.bots&m {
		return false
	}
	for i := range n {
		if k.top[i] != o.top[i] {
			return false
		}
	}
	return true
}

type bannerKey struct {
	players, spectators, shutdown int
	join, notice                  string
}

// boardEvery is how often, at most, the status row takes a new
// leaderboard or a new rank of the player's: in a crowd both move nearly
// every tick (2,500 snakes growing), a flicker of digits nobody reads at
// 10 Hz that cost a redraw in most frames. A change waits at most
// boardEvery-1 ticks; the first after a quiet spell shows at once. The
// player's length, kills, dash and state always show at once.
const boardEvery = 5

// boardHold says since when the status row shows its leaderboard and
// rank (those of rowsKey, composed or not): held until boardEvery ticks
// later.
type boardHold struct {
	tick uint64
	ok   bool // rowsKey holds a leaderboard taken at tick
}

// board sets k's leaderboard, and its rank in the same state as the
// last, to those the status row shows while they are due to stay
// (boardEvery), else to v's, which are held from now when they differ.
func (r *Renderer) board(k *rowsKey, v *game.View) {
	h, o := &r.hold, &r.rowsKey
	if h.ok && v.Tick >= h.tick && v.Tick-h.tick < boardEvery {
		k.ntop, k.bots, k.top = o.ntop, o.bots, o.top
		if k.mode == o.mode {
			k.rank = o.rank
		}
		return
	}
	k.ntop = int8(copy(k.top[:], v.Top))
	for i, e := range k.top[:k.ntop] {
		if e.Slot >= 0 && e.Slot < len(v.Snakes) && v.Snakes[e.Slot].Bot {
			k.bots |= 1 << i
		}
	}
	if !h.ok || v.Tick < h.tick || o.ntop != k.ntop || o.bots != k.bots || o.top != k.top || o.rank != k.rank {
		*h = boardHold{tick: v.Tick, ok: true}
	}
}

// textRows composes the banner and the status row, each unless it would
// show what it shows already (a renderer composing whole frames, the
// tests' reference, always composes them).
func (r *Renderer) textRows(v *game.View, h *HUD, you *game.SnakeInfo, ok bool) {
	k := rowsKey{ok: ok, banner: r.banner, spectator: h.Spectator, shutdown: int32(h.ShutdownIn), mark: -1}
	if k.ok {
		switch {
		case you != nil && you.Alive && !h.Spectator:
			k.mode, k.name, k.length, k.rank, k.kills, k.dash = modeAlive, you.Name, you.Length, v.Rank(you.ID.Slot()), you.Kills, -1
			if you.DashReadyAt > v.Tick {
				k.dash = int32((you.DashReadyAt - v.Tick + game.TicksPerSecond - 1) / game.TicksPerSecond)
			}
		case you != nil && !h.Spectator:
			k.mode, k.best, k.allRank = modeDead, you.BestLength, h.AllRank
		case h.You != 0 && !h.Spectator:
			k.mode = modeSpawning
		default:
			k.mode = modeWatching
			if s, ok := v.Snake(h.Follow); ok {
				k.name = s.Name
			}
		}
		switch {
		case you != nil:
			k.mark = int32(you.ID.Slot())
		case h.Spectator:
			if s, ok := v.Snake(h.Follow); ok {
				k.mark = int32(s.ID.Slot())
			}
		}
		r.board(&k, v)
	} else {
		r.hold.ok = false
	}
	bk := bannerKey{players: h.Players, spectators: h.Spectators, shutdown: h.ShutdownIn, join: h.Join, notice: h.Notice}
	kept := r.rowsOK && !r.opt.whole
	if !kept || bk != r.bannerKey {
		clear(r.next[:r.pfTop*r.cols])
		for y := 0; y < r.pfTop; y++ {
			r.mask[y] = r.allMask()
		}
		if r.banner {
			r.drawBanner(h)
		}
	}
	r.bannerKey = bk
	if k.ok {
		// The status text, in r.stat: made again only when it changed.
		if r.rowsOK && k.sameFigures(&r.rowsKey) {
			k.sx = r.rowsKey.sx
		} else {
			k.sx = int16(min(len(r.status(&k)), r.cols))
		}
	}
	switch {
	case kept && k.sameBoard(&r.rowsKey) && k.sameText(&r.rowsKey):
		k.shown = r.rowsKey.shown
	case kept && k.sameBoard(&r.rowsKey):
		// Most ticks in a crowd only the player's length moves, in a
		// text of the same width: put it again (put marks what changes),
		// leave the board.
		k.shown = r.rowsKey.shown
		put(r, 0, r.rows-1, r.stat, white, def)
	default:
		// The row drawn again. Over the row it had (kept), put marks only
		// the cells that change, and the cells past the new row's end are
		// blanked the same way: a row cleared first would be marked
		// whole, and the encoder would compare all of it (every
		// boardEvery ticks in a crowd).
		y := r.rows - 1
		row := r.next[y*r.cols : (y+1)*r.cols]
		if !kept {
			clear(row)
			r.mask[y] = r.allMask()
		}
		end := 0
		if k.ok {
			var drawn int
			drawn, end = r.bottom(&k)
			k.shown = int8(drawn + 1)
		}
		if kept {
			for x := end; x < len(row); x++ {
				if row[x] != blank {
					row[x] = blank
					r.mask[y] |= 1 << (x / span)
				}
			}
		}
	}
	r.rowsKey, r.rowsOK = k, true
}

func (r *Renderer) drawBanner(h *HUD) {
	const fg, bg = brightWhite, blue
	r.fill(0, bg)
	x := put(r, 1, 0, "snaked", brightYellow, bg)
	x += 2
	if h.ShutdownIn >= 0 {
		b := append(r.num[:0], "SHUTTING DOWN IN "...)
		if r.cols < compactCols {
			b = append(b[:0], "DOWN IN "...)
		}
		b = strconv.AppendInt(b, int64(h.ShutdownIn), 10)
		r.num = b
		x = put(r, x, 0, b, brightYellow, bg)
	} else if h.Notice != "" {
		x = put(r, x, 0, h.Notice, brightYellow, bg)
	} else {
		b := strconv.AppendInt(r.num[:0], int64(h.Players), 10)
		if r.cols < compactCols {
			b = append(b, "p "...)
			b = strconv.AppendInt(b, int64(h.Spectators), 10)
			b = append(b, 'w')
		} else {
			b = append(b, " playing, "...)
			b = strconv.AppendInt(b, int64(h.Spectators), 10)
			b = append(b, " watching"...)
		}
		r.num = b
		x = put(r, x, 0, b, fg, bg)
	}
	if j := h.Join; j != "" && x+2+len(j) < r.cols {
		put(r, r.cols-1-len(j), 0, j, fg, bg)
	}
}

// Status row separators: between the player's figures and the
// leaderboard, and between leaderboard entries (Mono: | and /).
const (
	boardSep = " \x02 " // " │ "
	entrySep = " \x0b " // " · "
)

// bottom draws the status row: the player's figures (or what the
// spectator watches), then as much of the leaderboard as fits. Each entry
// reads "rank name length"; a bot's name is marked with '~' and drawn in
// grey; the entry of the player's snake (a spectator's: the followed one)
// is highlighted, bright white on blue (Mono: in brackets).
//
// It draws k: the status text in r.stat (status), then k's entries, k.mark
// highlighted. It returns how many entries it drew and the column past
// the last cell it drew.
func (r *Renderer) bottom(k *rowsKey) (drawn, end int) {
	y := r.rows - 1
	x := put(r, 0, y, r.stat, white, def)
	b := r.num
	mono := r.prof == Mono
	for i, e := range k.top[:k.ntop] {
		bot := k.bots>>i&1 != 0
		hl := e.Slot == int(k.mark)
		b = b[:0]
		if hl && mono {
			b = append(b, '[')
		}
		b = strconv.AppendInt(b, int64(i+1), 10)
		b = append(b, ' ')
		if bot {
			b = append(b, '~')
		}
		b = game.AppendName(b, e.Name, game.MaxName)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(e.Length), 10)
		if hl && mono {
			b = append(b, ']')
		}
		r.num = b
		if x+len(entrySep)+len(b) > r.cols {
			return i, x
		}
		if i == 0 {
			x = put(r, x, y, boardSep, white, def)
		} else {
			x = put(r, x, y, entrySep, white, def)
		}
		fg, bg := uint8(white), uint8(def)
		switch {
		case hl:
			fg, bg = brightWhite, blue
		case bot:
			fg = grey
		}
		x = put(r, x, y, b, fg, bg)
	}
	return int(k.ntop), x
}

// status makes the status row's text (the player's figures, or what the
// spectator watches) from k's figures in r.stat and returns it.
func (r *Renderer) status(k *rowsKey) []byte {
	compact := r.cols < compactCols
	b := r.stat[:0]
	if !k.banner && k.shutdown >= 0 {
		b = append(b, " DOWN IN "...)
		b = strconv.AppendInt(b, int64(k.shutdown), 10)
	}
	switch k.mode {
	case modeAlive:
		if !compact {
			b = game.AppendName(append(b, ' '), k.name, game.MaxName)
			b = append(b, ' ')
		}
		b = stat(b, compact, " len ", " L", k.length)
		b = stat(b, compact, "  #", " #", k.rank)
		b = stat(b, compact, "  kills ", " K", k.kills)
		if compact {
			b = append(b, " D"...)
		} else {
			b = append(b, "  dash "...)
		}
		if k.dash >= 0 {
			b = strconv.AppendInt(b, int64(k.dash), 10)
			b = append(b, 's')
		} else {
			b = append(b, "ok"...)
		}
	case modeDead:
		b = append(b, " dead"...)
		b = stat(b, compact, "  best ", " B", k.best)
		if k.allRank > 0 && !compact {
			b = stat(b, compact, "  all-time #", "", k.allRank)
		}
	case modeSpawning:
		b = append(b, " spawning..."...)
	default: // modeWatching
		b = append(b, " watching"...)
		if k.name != "" {
			b = append(b, ' ')
			b = game.AppendName(b, k.name, game.MaxName)
		}
	}
	r.stat = b
	return b
}

func stat(b []byte, compact bool, long, short string, n int) []byte {
	if compact {
		b = append(b, short...)
	} else {
		b = append(b, long...)
	}
	return strconv.AppendInt(b, int64(n), 10)
}

// Boxes: a frame of box-drawing glyphs (Mono: + - |) centred on the
// playfield, the title in its top border, one line of text per row
// between, left-aligned one cell in from the frame (so columns built with
// padding line up) or centred.
type boxState struct {
	title string
	n     int    // lines: r.lines[:n]
	mid   uint32 // bit i centres line i
	fg    uint8  // the title's colour
	at    rect   // where it is drawn this frame, unclipped
	sig   uint64 // a hash of what it shows (boxSig)
}

// Box sizes: the most lines the death box holds, and any box (the longer
// help's).
const (
	deathLines = 5
	boxLines   = max(len(helpPlay), len(helpWatch), deathLines)
)

// boxSig hashes what the box shows (FNV-1a): a box that shows the same
// as last frame, at the same place, paints again only the spans something
// else drew over (paintBox).
func (r *Renderer) boxSig() uint64 {
	b := &r.boxS
	h := uint64(14695981039346656037)
	mix := func(c byte) { h = (h ^ uint64(c)) * 1099511628211 }
	for i := 0; i < len(b.title); i++ {
		mix(b.title[i])
	}
	mix(b.fg)
	mix(byte(b.n))
	for i, l := range r.lines[:b.n] {
		mix(0)
		mix(byte(b.mid >> i & 1))
		for _, c := range l {
			mix(c)
		}
	}
	return h
}

// layoutBox places the box of lines r.lines[:b.n] and records it as an
// overlay.
func (r *Renderer) layoutBox() {
	b := &r.boxS
	w := len(b.title) + 4
	for _, l := range r.lines[:b.n] {
		w = max(w, len(l))
	}
	w += 4
	h := b.n + 2
	x0 := (r.cols - w) / 2
	y0 := r.pfTop + (r.pfRows-h)/2
	b.at = rect{x0, y0, x0 + w, y0 + h}
	b.sig = r.boxSig()
	r.addOvl(b.at, false) // paintBox marks the cells it changes
}

// paintBox draws the box laid out by layoutBox, marking the cells it
// changes. A box the same as last frame's, at the same place, paints
// again only the spans of its rows where something was composed or
// painted over it this frame (boxNeed): a death box stays for seconds,
// and painting it whole every frame would cost ~1.4 % of the daemon's
// CPU.
func (r *Renderer) paintBox() {
	b := &r.boxS
	x0, y0, x1, y1 := b.at.x0, b.at.y0, b.at.x1, b.at.y1
	same := r.inc && r.boxWas == b.at.pack() && r.boxWasSig == b.sig
	r.boxWas, r.boxWasSig = b.at.pack(), b.sig
	mono := r.prof == Mono
	cx0, cx1 := max(x0, 0), min(x1, r.cols)
	if cx0 >= cx1 {
		return
	}
	all := spanBits(cx0, cx1)
	for y := max(y0, r.pfTop); y < y1 && y < r.pfTop+r.pfRows; y++ {
		need := all
		if same {
			if need = r.boxNeed(y, cx0, cx1, all); need == 0 {
				continue
			}
		}
		row := r.next[y*r.cols : (y+1)*r.cols]
		for x := cx0; x < cx1; x++ {
			if need>>(x/span)&1 == 0 {
				x = (x/span+1)*span - 1
				continue
			}
			ch := byte(' ')
			switch {
			case y == y0 && x == x0:
				ch = gTL
			case y == y0 && x == x1-1:
				ch = gTR
			case y == y1-1 && x == x0:
				ch = gBL
			case y == y1-1 && x == x1-1:
				ch = gBR
			case y == y0 || y == y1-1:
				ch = gH
			case x == x0 || x == x1-1:
				ch = gV
			}
			fg := uint8(white)
			if mono {
				fg = def
				if ch < 0x20 {
					ch = extAlt[ch]
				}
			}
			if c := txt(ch, fg, def); row[x] != c {
				row[x] = c
				r.mask[y] |= 1 << (x / span)
			}
		}
		// The row's text, whole: over the cells just painted blank it
		// changes them back, elsewhere it changes nothing.
		if y == y0 {
			t := append(r.num[:0], ' ')
			t = append(t, b.title...)
			t = append(t, ' ')
			r.num = t
			put(r, x0+(x1-x0-len(t))/2, y0, t, b.fg, def)
		}
		if i := y - y0 - 1; i >= 0 && i < b.n {
			l := r.lines[i]
			x := x0 + 2
			if b.mid&(1<<i) != 0 {
				x = x0 + (x1-x0-len(l))/2
			}
			put(r, x, y, l, brightWhite, def)
		}
	}
}

// spanBits is the bits of the spans (r.mask) that cells [x0, x1) meet.
func spanBits(x0, x1 int) uint64 {
	lo, hi := x0/span, (x1-1)/span
	return (uint64(1)<<(hi+1) - 1) &^ (uint64(1)<<lo - 1)
}

// boxNeed returns the spans of row y of a box that shows what it showed
// last frame, cells [x0, x1) (spans all), that must be painted again:
// those the playfield's composition or restore wrote this frame, and
// those another overlay of this frame, painted before the box, meets.
func (r *Renderer) boxNeed(y, x0, x1 int, all uint64) uint64 {
	need := r.composed()[y] & all
	for _, q := range r.rst[:r.nrst] {
		if o := q.unpack(); o.y0 <= y && y < o.y1 && o.x0 < x1 && x0 < o.x1 {
			need |= spanBits(max(o.x0, x0), min(o.x1, x1))
		}
	}
	box := r.boxS.at.pack()
	for _, p := range r.nw[:r.nnw] {
		if o := p.unpack(); p != box && o.y0 <= y && y < o.y1 && o.x0 < x1 && x0 < o.x1 {
			need |= spanBits(max(o.x0, x0), min(o.x1, x1))
		}
	}
	return need
}

// death fills the death box: what killed the player, its length, best
// length of the run, how long it lived and its kills; respawn is one key.
func (r *Renderer) death(v *game.View, h *HUD, s *game.SnakeInfo) {
	l := &r.lines
	// The cause: the kill feed says whether it was head-on, for the
	// ticks it keeps the death; the answer is kept for the box's life.
	if r.dc.slot != s.ID.Slot() || r.dc.tick != s.DeathTick {
		r.dc.slot, r.dc.tick, r.dc.headOn, r.dc.known = s.ID.Slot(), s.DeathTick, false, false
	}
	if !r.dc.known {
		for i := range v.Kills {
			k := &v.Kills[i]
			if k.VictimSlot == s.ID.Slot() && k.Tick == s.DeathTick && k.Victim == s.Name {
				r.dc.headOn, r.dc.known = k.HeadOn, true
				r.dc.other = game.AppendName(r.dc.other[:0], k.Other, game.MaxName)
				break
			}
		}
	}
	switch {
	case r.dc.known && r.dc.headOn && len(r.dc.other) > 0:
		l[0] = game.AppendName(append(l[0][:0], "head-on with "...), r.dc.other, game.MaxName)
	case s.KilledBy != "":
		l[0] = game.AppendName(append(l[0][:0], "killed by "...), s.KilledBy, game.MaxName)
	default:
		l[0] = append(l[0][:0], "you ran into yourself"...)
	}
	// Two aligned columns: length / lived, best / kills.
	a := strconv.AppendInt(r.num[:0], int64(s.Length), 10)
	na := len(a)
	t := int64(0)
	if s.DeathTick > s.SpawnTick {
		t = int64(s.DeathTick-s.SpawnTick) / game.TicksPerSecond
	}
	a = appendDuration(a, t)
	r.num = a
	w := max(na, len(a)-na)
	l[1] = append(l[1][:0], "length "...)
	l[1] = pad(append(l[1], a[:na]...), 7+w+2)
	l[1] = append(l[1], "best  "...)
	l[1] = strconv.AppendInt(l[1], int64(s.BestLength), 10)
	l[2] = append(l[2][:0], "lived  "...)
	l[2] = pad(append(l[2], a[na:]...), 7+w+2)
	l[2] = append(l[2], "kills "...)
	l[2] = strconv.AppendInt(l[2], int64(s.Kills), 10)
	n := 3
	if h.AllBest > 0 {
		// The all-time record, once the daemon knows it.
		l[n] = append(l[n][:0], "all-time best "...)
		l[n] = strconv.AppendInt(l[n], int64(max(h.AllBest, s.BestLength)), 10)
		if h.AllRank > 0 {
			l[n] = append(l[n], ", #"...)
			l[n] = strconv.AppendInt(l[n], int64(h.AllRank), 10)
		}
		n++
	}
	l[n] = append(l[n][:0], "space or enter to respawn"...)
	r.boxS = boxState{title: "YOU DIED", fg: brightRed, n: n + 1, mid: 1 << n}
}

// appendDuration appends t seconds as 42s, 1m05s or 2h03m.
func appendDuration(b []byte, t int64) []byte {
	two := func(b []byte, n int64) []byte {
		if n < 10 {
			b = append(b, '0')
		}
		return strconv.AppendInt(b, n, 10)
	}
	switch {
	case t >= 3600:
		b = strconv.AppendInt(b, t/3600, 10)
		b = two(append(b, 'h'), t/60%60)
		return append(b, 'm')
	case t >= 60:
		b = strconv.AppendInt(b, t/60, 10)
		b = two(append(b, 'm'), t%60)
	default:
		b = strconv.AppendInt(b, t, 10)
	}
	return append(b, 's')
}

// pad appends spaces to b up to n bytes.
func pad(b []byte, n int) []byte {
	for len(b) < n {
		b = append(b, ' ')
	}
	return b
}

// helpItem is one line of the help box: the keys and what they do.
type helpItem struct{ keys, what string }

var helpPlay = [...]helpItem{
	{"arrows/wasd/hjkl", "turn"},
	{"space", "dash"},
	{"t", "name tags on/off"},
	{"?", "this help"},
	{"ctrl-l", "redraw"},
	{"q / ctrl-c", "quit"},
	{"~name", "a bot"},
}

var helpWatch = [...]helpItem{
	{"tab / n", "next snake"},
	{"shift-tab / p", "previous snake"},
	{"arrows / wasd", "move the camera"},
	{"f", "follow again"},
	{"t", "name tags on/off"},
	{"?", "this help"},
	{"ctrl-l", "redraw"},
	{"q / ctrl-c", "quit"},
	{"~name", "a bot"},
}

// help fills the help box: keys in one column, what they do in the next.
func (r *Renderer) help(h *HUD) {
	src, title := helpPlay[:], "HOW TO PLAY"
	if h.Spectator {
		src, title = helpWatch[:], "WATCHING"
	}
	kw := 0
	for _, it := range src {
		kw = max(kw, len(it.keys))
	}
	for i, it := range src {
		l := pad(append(r.lines[i][:0], it.keys...), kw+2)
		r.lines[i] = append(l, it.what...)
	}
	r.boxS = boxState{title: title, fg: brightYellow, n: len(src)}
}

// layoutHint places the short controls hint on the playfield's last row.
func (r *Renderer) layoutHint(h *HUD) {
	s := "arrows/wasd turn, space dash, ? help, q quit"
	if h.Spectator {
		s = "tab next snake, arrows pan, ? help, q quit"
	}
	if len(s) > r.cols {
		s = "? help"
	}
	x, y := (r.cols-len(s))/2, r.pfTop+r.pfRows-1
	r.hintS, r.hintAt = s, rect{x, y, x + len(s), y + 1}
	r.addOvl(r.hintAt, false)
}

// paintHint draws the hint (over the playfield of v, when there is one).
func (r *Renderer) paintHint(v *game.View, own int) {
	if v == nil {
		put(r, r.hintAt.x0, r.hintAt.y0, r.hintS, brightYellow, def)
		return
	}
	putOver(r, v, own, r.hintAt.x0, r.hintAt.y0, r.hintS, brightYellow)
}
