package render

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"snaked/game"
	"snaked/internal/vtmodel"
)

// watcher is a terminal that takes a shared renderer's frames: joined
// once it got a Snapshot, behind by the frames it missed (latest wins),
// which it then takes all at once.
type watcher struct {
	term   *vtmodel.Term
	joined bool
	missed [][]byte
}

// TestSharedFrames plays spectators' sessions on a shared renderer and
// checks, after every frame, the screens of terminals that took its
// frames in different ways: every frame from the first; a Snapshot at a
// random frame, then the frames; frames missed now and then and taken
// together later; a new terminal sent only a Snapshot. Each must show the
// frame, with the pen and cursor where the next frame starts.
func TestSharedFrames(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 150
	}
	for seed := uint64(1); seed <= 6; seed++ {
		sharedSession(t, seed, n)
	}
}

func sharedSession(t *testing.T, seed uint64, frames int) {
	rng := rand.New(rand.NewPCG(seed, 7))
	s := newSim(seed, 300+rng.IntN(600), 150+rng.IntN(100), 8, 25, 600)
	for i := range s.v.Snakes {
		s.v.Top = append(s.v.Top, game.Entry{Slot: i, Name: s.v.Snakes[i].Name, Length: 25})
	}
	sz := [][2]int{{80, 24}, {120, 40}, {200, 60}, {41, 15}, {30, 10}}[seed%5]
	cols, rows := sz[0], sz[1]
	// Seeds 5 and 6 draw a centred area smaller than the terminal (a
	// cell budget), margins around it.
	r := newKeptBudget(Profile(seed%4), cols, rows, map[bool]int{true: cols * rows / 2}[seed > 4])
	r.SetShared(true)
	h := &HUD{Follow: s.v.Snakes[0].ID, Spectator: true, ShutdownIn: -1, Join: "ssh -p 2222 localhost", Players: 5}
	ws := make([]*watcher, 3)
	for i := range ws {
		ws[i] = &watcher{term: vtmodel.New(cols, rows), joined: i == 0}
	}
	fed := 0
	for f := 0; f < frames; f++ {
		s.step()
		switch k := rng.IntN(100); {
		case k < 4:
			s.kill(rng.IntN(len(s.snakes)), "snakeb")
		case k < 10:
			s.respawn(rng.IntN(len(s.snakes)))
		case k < 12:
			h.Follow = s.v.Snakes[rng.IntN(len(s.snakes))].ID
		case k < 13:
			h.Help = !h.Help
		case k < 14:
			h.Hint = !h.Hint
		case k < 15:
			r.Invalidate()
		case k < 17:
			for m := 1 + rng.IntN(4); m > 0; m-- {
				s.step()
			}
		}
		out := bytes.Clone(r.Frame(&s.v, h))
		if (r.vt.cx != -r.vt.ox || r.vt.cy != -r.vt.oy || r.vt.pfg != def || r.vt.pbg != def) && len(out) > 0 {
			t.Fatalf("seed %d frame %d: a shared frame ended with the cursor at %d,%d and pen %d/%d", seed, f, r.vt.cx, r.vt.cy, r.vt.pfg, r.vt.pbg)
		}
		for i, w := range ws {
			switch {
			case !w.joined && rng.IntN(20) == 0:
				// Joins now: a Snapshot, taken after this frame.
				feed(w.term, r.Snapshot(nil, true), rng.IntN(3))
				w.joined = true
			case !w.joined:
			case i == 2 && rng.IntN(8) == 0:
				w.missed = append(w.missed, out) // latest wins: taken later
			default:
				for _, m := range w.missed {
					feed(w.term, m, rng.IntN(3))
				}
				w.missed = w.missed[:0]
				feed(w.term, out, rng.IntN(3))
				fed++
			}
			if !w.joined || len(w.missed) > 0 {
				continue
			}
			if err := checkArea(w.term, r); err != nil {
				t.Fatalf("seed %d frame %d, terminal %d: %v\nframe bytes: %q", seed, f, i, err, out)
			}
			if x, y, _ := w.term.Cursor(); x != 0 || y != 0 {
				t.Fatalf("seed %d frame %d, terminal %d: cursor at %d,%d after a frame, not parked", seed, f, i, x, y)
			}
			if fg, bg := w.term.Pen(); fg != vtmodel.Default || bg != vtmodel.Default {
				t.Fatalf("seed %d frame %d, terminal %d: pen %v/%v after a frame, not the default", seed, f, i, fg, bg)
			}
		}
		if f%17 == 0 {
			// A terminal that gets only a Snapshot shows the frame too,
			// whatever it showed before.
			term := vtmodel.New(cols, rows)
			term.Write([]byte("\x1b[31mjunk\x1b[5;5Hmore\x1b[3;8r"))
			feed(term, r.Snapshot(nil, true), rng.IntN(3))
			if err := checkArea(term, r); err != nil {
				t.Fatalf("seed %d frame %d, a Snapshot alone: %v", seed, f, err)
			}
		}
		if err := shown(r); err != nil {
			t.Fatalf("seed %d frame %d: %v", seed, f, err)
		}
	}
	if fed < frames {
		t.Errorf("seed %d: only %d frames taken by the terminals", seed, fed)
	}
}

// TestSharedSnapshotLeavesRenderer checks that Snapshot does not change
// the renderer: its next frame is the one it would have made without it.
// The renderers are not shared, so that their frames end where they
// happen to (a shared one's end parked, as a Snapshot does): a Snapshot
// that left its own cursor or pen behind would show.
func TestSharedSnapshotLeavesRenderer(t *testing.T) {
	s := newSim(3, 400, 200, 8, 25, 600)
	a, b := newKept(ANSI256, 100, 30), newKept(ANSI256, 100, 30)
	h := &HUD{Follow: s.v.Snakes[0].ID, Spectator: true, ShutdownIn: -1}
	for f := range 60 {
		s.step()
		fa, fb := a.Frame(&s.v, h), b.Frame(&s.v, h)
		if !bytes.Equal(fa, fb) {
			t.Fatalf("frame %d: a renderer that made Snapshots sent %q, one that did not %q", f, fa, fb)
		}
		if f%3 == 0 {
			a.Snapshot(nil, f%2 == 0)
		}
	}
}
