package sshserver

import (
	"context"
	"io"
	"strconv"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"snaked/internal/board"
	"snaked/internal/join"
	"snaked/internal/scores"
	"snaked/render"
)

// This file runs the join screen (internal/join's bubbletea model) for a
// session whose SSH user name will not do as a nickname. The program gets
// no input of its own (tea.WithInput(nil)): the session's reader decodes
// keys as always and sends each to the program while the session is on the
// join screen (joinKey). Enter waits for the program's answer, so the key
// after a successful Enter already goes to the game. The program writes
// into a buffer that the session's writer sends at its next tick, so the
// session keeps one writer; its renderer runs at the tick's rate. It has no
// signal handler, and it is gone (its Run returned, its last bytes sent)
// before the writer draws the first frame of play.

// joinOutMax bounds what the program may write between two ticks; beyond
// it the bytes are dropped and the screen is redrawn whole.
const joinOutMax = 64 << 10

// joinProg is a session's join screen program.
type joinProg struct {
	p    *tea.Program
	done chan struct{} // closed when Run returned

	mu   sync.Mutex // guards out and lost
	out  []byte     // written by the program, not sent yet
	lost bool       // out overflowed: redraw

	sent bool // the writer sent the program's last bytes (writer only)
}

// Write keeps what the program draws for the writer.
func (j *joinProg) Write(p []byte) (int, error) {
	j.mu.Lock()
	if len(j.out)+len(p) > joinOutMax {
		j.lost = true
		j.out = j.out[:0]
	} else {
		j.out = append(j.out, p...)
	}
	j.mu.Unlock()
	return len(p), nil
}

// take appends the pending output to b and empties it; lost reports
// whether some was dropped since the last take.
func (j *joinProg) take(b []byte) (_ []byte, lost bool) {
	j.mu.Lock()
	b = append(b, j.out...)
	j.out, lost, j.lost = j.out[:0], j.lost, false
	j.mu.Unlock()
	return b, lost
}

// startJoin starts the join screen program, counted by wg, showing why (the
// reason the name the player came with was refused; "" for none).
func (s *session) startJoin(wg *sync.WaitGroup, why string) {
	s.mu.Lock()
	prof := render.DetectProfile(s.term, s.env)
	cols, rows := s.cols, s.rows
	s.mu.Unlock()
	lr := lipgloss.NewRenderer(io.Discard)
	lr.SetColorProfile(termenv.ANSI)
	if prof == render.Mono {
		lr.SetColorProfile(termenv.Ascii)
	}
	m := join.NewModel(cols, rows, prof == render.Mono, lr, s.enter, guestName).Refused(why)
	j := &joinProg{done: make(chan struct{})}
	j.p = tea.NewProgram(m, tea.WithInput(nil), tea.WithOutput(j), tea.WithoutSignalHandler(),
		tea.WithAltScreen(), tea.WithoutBracketedPaste(), tea.WithFPS(10))
	s.jp.Store(j)
	select {
	case <-s.done: // ended before the program was published: end saw no program
		j.p.Kill()
	default:
	}
	wg.Go(func() {
		defer s.poke() // the writer sends the last bytes
		defer close(j.done)
		defer s.guard("join")
		fm, err := j.p.Run()
		if m, ok := fm.(join.Model); ok && m.Left() && err == nil {
			s.end(causeQuit)
		}
	})
}

// guestName is the name an empty nickname joins as.
func guestName() string {
	return "guest" + strconv.Itoa(1000+int(time.Now().UnixNano()/1000%9000))
}

// joinKey sends a key typed on the join screen to its program. Enter waits
// for the answer: when it let the player in, the session is in play before
// the next key is read.
func (s *session) joinKey(k key, r byte) {
	j := s.jp.Load()
	if j == nil {
		return
	}
	var msg tea.Msg
	switch k {
	case keyCtrlC, keyCtrlD, keyEsc:
		s.end(causeQuit)
		return
	case keyEnter:
		reply := make(chan string, 1)
		j.p.Send(join.Enter{Reply: reply})
		select {
		case <-reply:
		case <-j.done:
		case <-s.done:
		}
		return
	case keyBackspace:
		msg = tea.KeyMsg{Type: tea.KeyBackspace}
	case keyCtrlU:
		msg = tea.KeyMsg{Type: tea.KeyCtrlU}
	case keyLeft:
		msg = tea.KeyMsg{Type: tea.KeyLeft}
	case keyRight:
		msg = tea.KeyMsg{Type: tea.KeyRight}
	case keyRune:
		msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{rune(r)}}
	case keyCtrlL:
		msg = join.Redraw{}
	default:
		return
	}
	j.p.Send(msg)
}

// drawJoin sends what the join screen program drew since the last tick,
// after telling it of a new window size or shutdown countdown. shown is
// the countdown it shows.
func (s *session) drawJoin(j *joinProg, shown *int32) {
	select {
	case <-j.done:
	default:
		n := s.srv.shutdownIn.Load()
		if n != *shown {
			*shown = n
			j.p.Send(join.Shutdown(n))
		}
		s.mu.Lock()
		resized, cols, rows := s.resized, s.cols, s.rows
		s.resized = false
		s.mu.Unlock()
		if resized {
			j.p.Send(tea.WindowSizeMsg{Width: cols, Height: rows})
		}
	}
	b, lost := j.take(s.buf[:0])
	s.buf = b
	if len(b) > 0 {
		s.touched = true
		s.write(b)
	}
	if lost {
		j.p.Send(join.Redraw{})
	}
}

// joinGone waits (bounded) until the join screen program has ended, and
// sends its last bytes (leaving its alternate screen, showing the cursor),
// so that play draws on a terminal the program no longer touches.
func (s *session) joinGone(j *joinProg) {
	if j.sent {
		return
	}
	select {
	case <-j.done:
	case <-s.done:
		return
	case <-time.After(2 * time.Second):
		s.c.log.Warn("join screen program did not end")
		j.p.Kill()
		<-j.done
	}
	j.sent = true
	b, _ := j.take(s.buf[:0])
	s.buf = b
	if len(b) > 0 {
		s.touched = true
		s.write(b)
	}
}

// startBoard starts the scores browser (internal/board) in a program run
// like the join screen's; leaving it ends the session.
func (s *session) startBoard(wg *sync.WaitGroup) {
	s.mu.Lock()
	prof := render.DetectProfile(s.term, s.env)
	cols, rows := s.cols, s.rows
	s.mu.Unlock()
	lr := lipgloss.NewRenderer(io.Discard)
	lr.SetColorProfile(termenv.ANSI)
	if prof == render.Mono {
		lr.SetColorProfile(termenv.Ascii)
	}
	m := board.New(s.boardData(), cols, rows, lr)
	j := &joinProg{done: make(chan struct{})}
	j.p = tea.NewProgram(m, tea.WithInput(nil), tea.WithOutput(j), tea.WithoutSignalHandler(),
		tea.WithAltScreen(), tea.WithoutBracketedPaste(), tea.WithFPS(10))
	s.jp.Store(j)
	select {
	case <-s.done:
		j.p.Kill()
	default:
	}
	wg.Go(func() {
		defer s.poke()
		defer close(j.done)
		defer s.guard("scores")
		if _, err := j.p.Run(); err == nil {
			s.end(causeQuit)
		}
	})
}

// boardData reads what the scores browser shows (bounded by scoreWait).
func (s *session) boardData() board.Data {
	d := board.Data{Keyless: s.key == ""}
	st := s.srv.cfg.Scores
	if st == nil || st.Err() != nil {
		d.Err = "Scores are off on this server."
		return d
	}
	ctx, cancel := context.WithTimeout(context.Background(), scoreWait)
	defer cancel()
	var err error
	if d.Top, err = st.Top(ctx, boardRows); err == nil {
		d.Today, err = st.TopToday(ctx, boardRows, time.Now())
	}
	if err == nil && s.key != "" {
		var r scores.Record
		var ok bool
		if r, ok, err = st.Player(ctx, scores.KeyID(s.key)); ok {
			d.You = &r
		}
	}
	if err != nil {
		s.c.log.Warn("scores browser", "err", err)
		d.Err = "Scores are not available right now."
	}
	return d
}

// boardRows is how many entries each of the browser's leaderboards holds.
const boardRows = 100

// boardKey sends a key to the scores browser.
func (s *session) boardKey(k key, r byte) {
	j := s.jp.Load()
	if j == nil {
		return
	}
	var msg tea.Msg
	switch k {
	case keyCtrlC, keyCtrlD, keyEsc:
		s.end(causeQuit)
		return
	case keyUp:
		msg = tea.KeyMsg{Type: tea.KeyUp}
	case keyDown:
		msg = tea.KeyMsg{Type: tea.KeyDown}
	case keyLeft:
		msg = tea.KeyMsg{Type: tea.KeyLeft}
	case keyRight:
		msg = tea.KeyMsg{Type: tea.KeyRight}
	case keyTab:
		msg = tea.KeyMsg{Type: tea.KeyTab}
	case keyBackTab:
		msg = tea.KeyMsg{Type: tea.KeyShiftTab}
	case keyRune:
		msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{rune(r)}}
	case keyCtrlL:
		msg = tea.ClearScreen()
	default:
		return
	}
	j.p.Send(msg)
}
