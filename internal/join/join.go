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
// shutdownIn >= 0 shows the shutdown countdown. The screen uses the
// alternate screen buffer and leaves the cursor after the input.
func (s *Screen) Draw(b []byte, cols, rows, shutdownIn int) []byte {
	if !s.dirty {
		return b
	}
	s.dirty = false
	b = append(b, "\x1b[?1049h\x1b[0m\x1b[H\x1b[2J"...)
	line := func(y int, parts ...string) {
		if y > rows {
			return
		}
		b = append(b, "\x1b["...)
		b = strconv.AppendInt(b, int64(y), 10)
		b = append(b, ";3H"...)
		room := max(cols-3, 0)
		for _, p := range parts {
			p = p[:min(len(p), room)]
			room -= len(p)
			b = append(b, p...)
		}
	}
	line(2, "snaked - multiplayer snake over SSH")
	line(4, prompt, string(s.input))
	line(6, "Letters, digits, _ and -, at most "+strconv.Itoa(MaxName)+". Enter joins (empty: a guest name).")
	line(7, "Esc or Ctrl-C leaves.")
	line(9, s.msg)
	if shutdownIn >= 0 {
		line(10, "SHUTTING DOWN IN ", strconv.Itoa(shutdownIn))
	}
	// Park the cursor after the input.
	b = append(b, "\x1b[4;"...)
	b = strconv.AppendInt(b, int64(max(min(3+len(prompt)+len(s.input), cols), 1)), 10)
	b = append(b, "H\x1b[?25h"...)
	return b
}

const prompt = "Pick a nickname: "
