package render

import (
	"testing"

	"snaked/game"
	"snaked/internal/vtmodel"
)

// FuzzIncremental states that what a terminal shows after a whole session
// of incremental frames equals what a full repaint of the last frame shows
// (and that both equal the frame meant). The input is a script: each byte
// is an operation, some take the next bytes as arguments.
func FuzzIncremental(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 80, 24, 0, 0, 0})
	f.Add([]byte{1, 40, 12, 0, 3, 0, 4, 0, 5, 9, 0, 0, 6, 0, 7, 0})
	f.Add([]byte{1, 200, 60, 8, 0, 2, 0, 9, 0, 10, 3, 0, 11, 50, 0, 0})
	f.Add([]byte{12, 1, 13, 0, 14, 0, 0, 15, 9, 0, 0, 1, 7, 3, 0})
	f.Fuzz(func(t *testing.T, script []byte) {
		if len(script) > 400 {
			script = script[:400]
		}
		s := newSim(uint64(len(script)), 150, 90, 6, 25, 200)
		cols, rows := 80, 24
		r := newKept(ANSI16, cols, rows)
		sh := whole(r)
		term := vtmodel.New(cols, rows)
		h := &HUD{You: s.v.Snakes[0].ID, Follow: s.v.Snakes[0].ID, ShutdownIn: -1, Join: "ssh -p 2222 host", Players: 3}
		arg := func(i int) int {
			if i < len(script) {
				return int(script[i])
			}
			return 0
		}
		for i := 0; i < len(script); i++ {
			switch op := script[i] % 16; op {
			case 0:
				s.step()
			case 1:
				cols, rows = 1+arg(i+1)%160, 1+arg(i+2)%70
				i += 2
				r.Resize(cols, rows)
				sh.Resize(cols, rows)
				term.Resize(cols, rows)
			case 2:
				r.Invalidate()
			case 3:
				s.kill(arg(i+1)%len(s.snakes), "x")
				i++
			case 4:
				s.respawn(arg(i+1) % len(s.snakes))
				i++
			case 5:
				h.Follow = s.v.Snakes[arg(i+1)%len(s.snakes)].ID
				i++
			case 6:
				h.Help = !h.Help
			case 7:
				h.Hint = !h.Hint
			case 8:
				h.Follow = 0
				h.Cam = game.Point{X: arg(i+1) * 3, Y: arg(i + 2)}
				i += 2
			case 9:
				h.Cam.X += arg(i+1)%9 - 4
				h.Cam.Y += arg(i+1)/9%9 - 4
				i++
			case 10:
				r.SetProfile(Profile(arg(i+1) % 4))
				sh.SetProfile(Profile(arg(i+1) % 4))
				i++
			case 11:
				r.SetZone(arg(i + 1))
				sh.SetZone(arg(i + 1))
				s.hide(arg(i+1)%3 == 0)
				i++
			case 12:
				h.Spectator = !h.Spectator
			case 13:
				h.ShutdownIn = arg(i+1)%20 - 1
				i++
			case 14:
				h.Players, h.Spectators = arg(i+1)*37, arg(i+2)
				i += 2
			case 15:
				for k := arg(i + 1); k > 0; k-- {
					s.step()
				}
				i++
			}
			out := r.Frame(&s.v, h)
			sh.Frame(&s.v, h)
			feed(term, out, i)
			if err := check(term, r); err != nil {
				t.Fatalf("op %d: %v", i, err)
			}
			if err := same(r, sh); err != nil {
				t.Fatalf("op %d: %v", i, err)
			}
		}
		// A full repaint of the same frame on a fresh terminal.
		fresh := newKept(r.prof, cols, rows)
		copy(fresh.next, r.next)
		fresh.pfTop, fresh.pfRows = r.pfTop, r.pfRows
		hand(fresh)
		fresh.vt.out = fresh.vt.buf[:0]
		fresh.vt.encode(true, 0, 0)
		ft := vtmodel.New(cols, rows)
		ft.Write(fresh.vt.out)
		for y := 0; y < rows; y++ {
			for x := 0; x < cols; x++ {
				if a, b := norm(term.Cell(x, y)), norm(ft.Cell(x, y)); a != b {
					t.Fatalf("cell %d,%d: incremental %+v, full repaint %+v", x, y, term.Cell(x, y), ft.Cell(x, y))
				}
			}
		}
	})
}
