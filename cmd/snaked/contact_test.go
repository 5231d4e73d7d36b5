package main

import (
	"strings"
	"testing"

	"snaked/game"
	"snaked/internal/vtmodel"
	"snaked/render"
)

// TestFirstContact is the newcomer's test from the daemon's side: a fresh
// world built from the daemon's defaults (size and bot target automatic),
// one player joining as the server starts, rendered on an 80x24 terminal
// as the session would. Another snake's head must reach that player's
// screen within 10 s in at least 4 of 5 seeds. The screen is replayed
// through the terminal model so that a head counted by the renderer is a
// snake's cell on the glass, not only a note in its bookkeeping.
func TestFirstContact(t *testing.T) {
	const seeds, limit = 5, 10 * game.TicksPerSecond
	met := 0
	for seed := uint64(1); seed <= seeds; seed++ {
		cfg := defaults().World
		cfg.Seed = seed
		w, err := game.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		id, err := w.Join("newcomer")
		if err != nil {
			t.Fatal(err)
		}
		r := render.New(render.ANSI256, 80, 24)
		term := vtmodel.New(80, 24)
		h := &render.HUD{You: id, Follow: id, ShutdownIn: -1}
		at, tagged := -1, false
		for tick := 1; !tagged; tick++ {
			if at < 0 && tick > limit || at >= 0 && tick > at+tagWait {
				break
			}
			w.Step(uint64(tick))
			v := w.Acquire()
			out := r.Frame(v, h)
			v.Release()
			if _, err := term.Write(out); err != nil {
				t.Fatal(err)
			}
			if at < 0 && r.Others() > 0 {
				at = tick
			}
			tagged = at >= 0 && tagOnScreen(term)
		}
		if u := term.Unsupported(); len(u) > 0 {
			t.Fatalf("seed %d: the renderer sent what the model does not know: %q", seed, u)
		}
		if at < 0 {
			t.Logf("seed %d: nobody in sight within %d ticks", seed, limit)
			continue
		}
		// The other snake is on the glass: its name tag (every snake here
		// but the newcomer is a bot, tagged "~botN") shows on the playfield.
		if !tagged {
			t.Errorf("seed %d: the renderer saw another head at tick %d, but no name tag reached the screen in %d ticks", seed, at, tagWait)
		}
		t.Logf("seed %d: another snake on screen after %d ticks", seed, at)
		met++
	}
	if met < 4 {
		t.Fatalf("another snake reached a newcomer's screen within %d ticks in %d of %d seeds, want 4", limit, met, seeds)
	}
}

// tagWait is how long a tag may take to follow a head onto the screen.
const tagWait = 20

// tagOnScreen reports whether a bot's name tag shows on the playfield
// rows (between the banner and the status row, which lists bots too).
func tagOnScreen(term *vtmodel.Term) bool {
	_, rows := term.Size()
	for y := 1; y < rows-1; y++ {
		if strings.Contains(term.Line(y), "~bot") {
			return true
		}
	}
	return false
}
