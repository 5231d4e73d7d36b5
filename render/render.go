// Package render draws the game on one terminal: it turns one tick's
// game.View and a player's HUD into the fewest VT100 bytes that take the
// player's terminal from what it shows to the new frame. A Renderer
// composes each frame (camera, playfield, name tags, radar, kill feed,
// text rows, boxes) into a grid of cells and hands what changed to its
// encoder, which keeps what the terminal shows and chooses the escape
// sequences. It is pure code: no I/O and no goroutines of its own.
package render

import (
	"io"
	"strconv"
	"strings"

	"github.com/muesli/termenv"

	"snaked/game"
)

// Profile is what a terminal can draw.
type Profile uint8

// Profiles. ANSI256 and TrueColor are drawn with the 16-colour palette (it
// costs fewer bytes); Mono draws with ASCII glyphs and no colour.
const (
	Mono Profile = iota
	ANSI16
	ANSI256
	TrueColor
)

// String names the profile.
func (p Profile) String() string {
	switch p {
	case Mono:
		return "mono"
	case ANSI16:
		return "ansi16"
	case ANSI256:
		return "ansi256"
	case TrueColor:
		return "truecolor"
	}
	return "profile(" + strconv.Itoa(int(p)) + ")"
}

// DetectProfile decides the profile from the session's TERM and environment
// (KEY=VALUE strings) with termenv.
func DetectProfile(term string, env []string) Profile {
	e := environ{"TERM": term}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "TERM" {
			e[k] = v
		}
	}
	t := strings.ToLower(term)
	if t == "dumb" {
		return Mono
	}
	o := termenv.NewOutput(io.Discard, termenv.WithEnvironment(e), termenv.WithUnsafe())
	switch o.EnvColorProfile() {
	case termenv.TrueColor:
		return TrueColor
	case termenv.ANSI256:
		return ANSI256
	case termenv.ANSI:
		return ANSI16
	}
	if o.EnvNoColor() {
		return Mono
	}
	// termenv knows no colour for these, but they all draw 16 colours.
	for _, p := range []string{"screen", "tmux", "rxvt", "putty", "cygwin", "vt220", "konsole", "gnome"} {
		if strings.HasPrefix(t, p) {
			return ANSI16
		}
	}
	return Mono
}

// environ is a termenv.Environ over a fixed map.
type environ map[string]string

func (e environ) Environ() []string {
	out := make([]string, 0, len(e))
	for k, v := range e {
		out = append(out, k+"="+v)
	}
	return out
}

func (e environ) Getenv(k string) string { return e[k] }

// HUD is what one session adds to the shared view: who it is, what it
// follows and what the text rows say.
type HUD struct {
	You        game.ID    // the player's own snake; 0 for spectators
	Follow     game.ID    // snake the camera follows; 0 = free camera centred at Cam
	Cam        game.Point // free-camera centre (world pixels) when Follow == 0
	Spectator  bool
	Players    int    // people playing now
	Spectators int    // people watching now
	ShutdownIn int    // seconds until shutdown; < 0 means no shutdown running
	Help       bool   // show the help overlay
	Hint       bool   // show the short controls hint
	Join       string // how to join, shown in the banner, e.g. "ssh -p 2222 host"
	HideTags   bool   // hide the name tags of other snakes (the daemon's key: t)
	Notice     string // shown in the banner instead of the counts, e.g. "world restarting"; "" = none
	AllBest    int    // the player's all-time best length from the scores; 0 = not known
	AllRank    int    // and its all-time rank; 0 = not known
}

// Restore returns the bytes that leave the alternate screen, reset the
// scroll region and colours and show the cursor again.
func Restore() []byte {
	return []byte("\x1b[?2026l\x1b[r\x1b[m\x1b[?25h\x1b[?1049l")
}
