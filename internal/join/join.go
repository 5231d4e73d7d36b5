// Package join owns how a player gets a name: the rules a nickname follows
// and the join screen that asks for one when the SSH user name will not do.
// It draws and edits; the session that owns a Screen feeds it keys and
// writes what Draw returns.
package join

import (
	"strconv"
	"strings"

	"snaked/game"
)

// MaxName is the longest nickname in bytes.
const MaxName = game.MaxName

// Sanitize keeps the bytes of s that may appear in a nickname
// ([A-Za-z0-9_-]) and cuts the result to MaxName bytes. It never looks at
// more than a bounded prefix of s.
func Sanitize(s string) string {
	var b [MaxName]byte
	n := 0
	for i := 0; i < len(s) && i < 4096 && n < MaxName; i++ {
		if NameByte(s[i]) {
			b[n] = s[i]
			n++
		}
	}
	return string(b[:n])
}

// NameByte reports whether c may appear in a nickname.
func NameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// generic logins people type out of habit; they make poor nicknames.
var generic = map[string]bool{
	"root": true, "admin": true, "administrator": true, "ubuntu": true, "user": true,
	"pi": true, "guest": true, "test": true, "debian": true, "centos": true,
	"ec2-user": true, "fedora": true, "git": true, "ssh": true, "default": true,
	"login": true, "nobody": true, "oracle": true, "postgres": true, "ftp": true,
	"alpine": true, "arch": true, "vagrant": true, "docker": true, "www-data": true,
	"snake": true, "snaked": true, "play": true, "anonymous": true,
}

// Usable reports whether a sanitised user name can be used without asking.
func Usable(n string) bool {
	return n != "" && !generic[strings.ToLower(n)]
}

// Screen is the join screen's state: the name typed so far and why the
// last try failed. It is not safe for concurrent use; its owner locks it.
type Screen struct {
	input []byte
	msg   string
	dirty bool
}

// NewScreen returns a screen that needs drawing.
func NewScreen() *Screen { return &Screen{dirty: true} }

// Type adds c to the name when it may appear in one and there is room.
func (s *Screen) Type(c byte) {
	if NameByte(c) && len(s.input) < MaxName {
		s.input = append(s.input, c)
		s.dirty = true
	}
}

// Backspace deletes the last byte typed.
func (s *Screen) Backspace() {
	if len(s.input) > 0 {
		s.input = s.input[:len(s.input)-1]
		s.dirty = true
	}
}

// Clear deletes the whole name (Ctrl-U).
func (s *Screen) Clear() {
	s.input = s.input[:0]
	s.dirty = true
}

// Name is the name typed so far.
func (s *Screen) Name() string { return string(s.input) }

// Fail shows why the last try did not join.
func (s *Screen) Fail(msg string) {
	s.msg = msg
	s.dirty = true
}

// Invalidate makes the next Draw repaint (resize, Ctrl-L, a change of the
// shutdown countdown).
func (s *Screen) Invalidate() { s.dirty = true }

// Draw appends to b the bytes that show the screen on a cols x rows
// terminal, or nothing when nothing changed since the last Draw.
// shutdownIn >= 0 shows the shutdown countdown. The screen is a centred box
// drawn with Unicode box-drawing characters, or with ASCII when ascii is set
// (terminals without UTF-8, TERM=vt100 and the like); on a terminal too
// small for the box its lines are drawn unboxed, cut at the edge. It uses
// the alternate screen buffer and leaves the cursor after the input.
func (s *Screen) Draw(b []byte, cols, rows, shutdownIn int, ascii bool) []byte {
	if !s.dirty {
		return b
	}
	s.dirty = false
	lines := [...]string{
		"multiplayer snake over SSH",
		"",
		prompt + string(s.input),
		"",
		"Letters, digits, _ and -, at most " + strconv.Itoa(MaxName) + ".",
		"Enter joins; empty picks a guest name.",
		"Esc or Ctrl-C leaves.",
		"",
		s.msg,
		"",
	}
	if shutdownIn >= 0 {
		lines[9] = "SHUTTING DOWN IN " + strconv.Itoa(shutdownIn)
	}
	inner := 0
	for _, l := range lines {
		inner = max(inner, len(l))
	}
	inner = max(inner, len(prompt)+MaxName)
	boxW, boxH := inner+4, len(lines)+2 // "| " text " |", borders
	b = append(b, "\x1b[?1049h\x1b[0m\x1b[H\x1b[2J"...)
	var x0, y0, inputY int // 1-based: column of the text, row of the first line
	if boxW <= cols && boxH <= rows {
		bx, by := (cols-boxW)/2+1, (rows-boxH)/2+1
		g := &unicodeBox
		if ascii {
			g = &asciiBox
		}
		b = cup(b, by, bx)
		b = append(b, g.tl...)
		b = append(b, g.h...)
		b = append(b, " snaked "...)
		for range boxW - 2 - 1 - len(" snaked ") {
			b = append(b, g.h...)
		}
		b = append(b, g.tr...)
		for i, l := range lines {
			b = cup(b, by+1+i, bx)
			b = append(b, g.v...)
			b = append(b, ' ')
			b = append(b, l...)
			for range inner - len(l) + 1 {
				b = append(b, ' ')
			}
			b = append(b, g.v...)
		}
		b = cup(b, by+boxH-1, bx)
		b = append(b, g.bl...)
		for range boxW - 2 {
			b = append(b, g.h...)
		}
		b = append(b, g.br...)
		x0, y0 = bx+2, by+1
	} else {
		x0, y0 = 1, 1
		for i, l := range lines {
			if y0+i > rows {
				break
			}
			b = cup(b, y0+i, x0)
			b = append(b, l[:min(len(l), cols)]...)
		}
	}
	inputY = y0 + 2
	// Park the cursor after the input.
	b = cup(b, min(inputY, rows), max(min(x0+len(prompt)+len(s.input), cols), 1))
	b = append(b, "\x1b[?25h"...)
	return b
}

// cup appends a cursor move to row y, column x (1-based).
func cup(b []byte, y, x int) []byte {
	b = append(b, "\x1b["...)
	b = strconv.AppendInt(b, int64(y), 10)
	b = append(b, ';')
	b = strconv.AppendInt(b, int64(x), 10)
	return append(b, 'H')
}

// boxGlyphs are the pieces of a box's border.
type boxGlyphs struct{ tl, tr, bl, br, h, v string }

// The light box-drawing characters (U+250x) are one column wide in every
// terminal font we know of, but East Asian "ambiguous" width: a terminal set
// to treat ambiguous characters as wide draws them double. Such terminals
// are rare among players and the ASCII box is one profile away (Mono).
var (
	unicodeBox = boxGlyphs{"┌", "┐", "└", "┘", "─", "│"}
	asciiBox   = boxGlyphs{"+", "+", "+", "+", "-", "|"}
)

const prompt = "Pick a nickname: "
