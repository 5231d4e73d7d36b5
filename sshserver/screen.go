package sshserver

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"snaked/game"
	"snaked/internal/board"
	"snaked/internal/join"
	"snaked/internal/scores"
	"snaked/render"
)

// This file runs the screens outside play, the join screen
// (internal/join) and the scores browser (internal/board), each a
// bubbletea model in a tea.Program of the session's. The program gets no
// input of its own (tea.WithInput(nil)): the session's reader decodes keys
// as always and sends each to the program (screenKey). On the join
// screen Enter waits for the program's answer, so the key after a
// successful Enter already goes to the game. The program has no signal
// handler and no renderer of its own (tea.WithoutRenderer): a wrapper
// (tap) hands each new view to the session, and the session's writer draws
// it at its next tick, sending only the lines that changed. So the session
// keeps one writer, an idle screen costs no wakeups (bubbletea's renderer
// wakes at its frame rate to compare the screen with the last one: 0.3 ms
// of CPU a second per session at 10 fps), and the program is gone before
// the first frame of play.

// screenProg is a session's program for a screen outside play.
type screenProg struct {
	p    *tea.Program
	done chan struct{} // closed when Run returned

	mu   sync.Mutex // guards view and ver
	view string     // the model's latest view
	ver  uint64     // bumped with each new view

	// Owned by the writer.
	shown uint64   // ver last drawn
	lines []string // what the terminal shows, by row; nil: unknown
	sent  bool     // the writer is done with the program (screenGone)
	again bool     // repaint the next view whole too (a resize: the view for the new size is still coming)
}

// publish keeps the model's new view for the writer and wakes it.
func (j *screenProg) publish(view string) {
	j.mu.Lock()
	if view != j.view {
		j.view = view
		j.ver++
	}
	j.mu.Unlock()
}

// tap wraps a model so that every Update (and Init) publishes the view.
type tap struct {
	m   tea.Model
	pub func(string)
}

func (t tap) Init() tea.Cmd {
	t.pub(t.m.View())
	return t.m.Init()
}

func (t tap) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m, cmd := t.m.Update(msg)
	t.m = m
	t.pub(m.View())
	return t, cmd
}

func (t tap) View() string { return "" }

// screenRenderer is the lipgloss renderer for the session's terminal.
func (s *session) screenRenderer() (r *lipgloss.Renderer, mono bool, cols, rows int) {
	s.mu.Lock()
	prof := render.DetectProfile(s.term, s.env)
	cols, rows = s.cols, s.rows
	s.mu.Unlock()
	r = lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI)
	if prof == render.Mono {
		r.SetColorProfile(termenv.Ascii)
	}
	return r, prof == render.Mono, cols, rows
}

// runScreen starts m in a program counted by wg; after returns with the
// final model when Run ends without an error.
func (s *session) runScreen(wg *sync.WaitGroup, who string, m tea.Model, after func(tea.Model)) {
	j := &screenProg{done: make(chan struct{})}
	j.p = tea.NewProgram(tap{m: m, pub: func(v string) { j.publish(v); s.poke() }},
		tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithoutRenderer(), tea.WithoutSignalHandler())
	s.scr.Store(j)
	select {
	case <-s.done: // ended before the program was published: end saw no program
		j.p.Kill()
	default:
	}
	wg.Go(func() {
		defer s.poke()
		defer close(j.done)
		defer s.guard(who)
		fm, err := j.p.Run()
		if t, ok := fm.(tap); ok && err == nil {
			after(t.m)
		}
	})
}

// startJoin starts the join screen, counted by wg, showing why (the reason
// the name the player came with was refused; "" for none).
func (s *session) startJoin(wg *sync.WaitGroup, why string) {
	r, mono, cols, rows := s.screenRenderer()
	m := join.NewModel(cols, rows, mono, r, s.submit, guestName).Refused(why)
	s.runScreen(wg, "join", m, func(fm tea.Model) {
		if m, ok := fm.(join.Model); ok && m.Left() {
			s.end(causeQuit)
		}
	})
}

// An empty nickname joins as a guest name with a number from firstGuest
// on, guests of them (four digits).
const (
	firstGuest = 1000
	guests     = 9000
)

// guestName is the name an empty nickname joins as (never claimed).
func guestName() string {
	return game.GuestName(firstGuest + int(time.Now().UnixNano()/int64(time.Microsecond)%guests))
}

// screenKey sends a key to the program of the screen outside play (join
// screen, scores browser). On the join screen Enter waits for the
// program's answer: when it let the player in, the session is in play
// before the next key is read. Ctrl-C, Ctrl-D and Esc leave; Ctrl-L
// repaints.
func (s *session) screenKey(k key, r byte) {
	j := s.scr.Load()
	if j == nil {
		return
	}
	switch {
	case k == keyCtrlC || k == keyCtrlD || k == keyEsc:
		s.end(causeQuit)
	case k == keyCtrlL:
		s.repaint.Store(true)
	case k == keyEnter && phase(s.phase.Load()) == phaseJoin:
		reply := make(chan string, 1)
		j.p.Send(join.Enter{Reply: reply})
		select {
		case <-reply:
		case <-j.done:
		case <-s.done:
		}
	default:
		if msg, ok := teaKeys[k]; ok {
			if k == keyRune {
				msg.Runes = []rune{rune(r)}
			}
			j.p.Send(msg)
		}
	}
}

// teaKeys are the session's keys as bubbletea's.
var teaKeys = map[key]tea.KeyMsg{
	keyUp: {Type: tea.KeyUp}, keyDown: {Type: tea.KeyDown}, keyLeft: {Type: tea.KeyLeft}, keyRight: {Type: tea.KeyRight},
	keyTab: {Type: tea.KeyTab}, keyBackTab: {Type: tea.KeyShiftTab}, keyBackspace: {Type: tea.KeyBackspace},
	keyCtrlU: {Type: tea.KeyCtrlU}, keyEnter: {Type: tea.KeyEnter}, keyRune: {Type: tea.KeyRunes},
}

// drawScreen draws the screen program's latest view, after telling it of a
// new window size or shutdown countdown; shown is the countdown it shows.
// It sends the rows that changed since the last draw (all of them after a
// resize or Ctrl-L), each followed by an erase to the end of the row.
func (s *session) drawScreen(j *screenProg, shown *int32) {
	select {
	case <-j.done:
		return
	default:
	}
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
	full := resized || j.again || s.repaint.Swap(false) || j.lines == nil
	j.mu.Lock()
	view, ver := j.view, j.ver
	j.mu.Unlock()
	if ver == j.shown && !full {
		return
	}
	j.again = resized
	j.shown = ver
	b := s.buf[:0]
	if full {
		b = append(b, "\x1b[?1049h\x1b[?25l\x1b[m\x1b[H\x1b[2J"...)
		j.lines = j.lines[:0]
	}
	lines := strings.Split(view, "\n")
	lines = lines[:min(len(lines), rows)]
	for i, l := range lines {
		l = strings.TrimRight(l, " ")
		lines[i] = l
		if !full && i < len(j.lines) && j.lines[i] == l {
			continue
		}
		b = cupAt(b, i+1, 1)
		b = append(b, l...)
		b = append(b, "\x1b[m"...)
		if ansi.StringWidth(l) < cols {
			b = append(b, "\x1b[K"...)
		}
	}
	if !full && len(j.lines) > len(lines) {
		b = cupAt(b, len(lines)+1, 1)
		b = append(b, "\x1b[J"...)
	}
	j.lines = lines
	s.buf = b
	if len(b) > 0 {
		s.touched = true
		s.write(b)
	}
}

// cupAt appends a cursor move to row y, column x (1-based).
func cupAt(b []byte, y, x int) []byte {
	b = append(b, "\x1b["...)
	b = strconv.AppendInt(b, int64(y), 10)
	b = append(b, ';')
	b = strconv.AppendInt(b, int64(x), 10)
	return append(b, 'H')
}

// screenEndWait bounds the wait for a screen program to end before play
// draws; then it is killed.
const screenEndWait = 2 * time.Second

// screenGone waits (bounded) until the screen program has ended, so that play
// draws on a terminal the program no longer touches.
func (s *session) screenGone(j *screenProg) {
	if j.sent {
		return
	}
	select {
	case <-j.done:
	case <-s.done:
		return
	case <-time.After(screenEndWait):
		s.c.log.Warn("screen program did not end")
		j.p.Kill()
		<-j.done
	}
	j.sent = true
}

// startBoard starts the scores browser (internal/board), run like the
// join screen; leaving it ends the session.
func (s *session) startBoard(wg *sync.WaitGroup) {
	r, _, cols, rows := s.screenRenderer()
	s.runScreen(wg, "scores", board.New(s.boardData(), cols, rows, r), func(tea.Model) { s.end(causeQuit) })
}

// boardData reads what the scores browser shows (bounded by scoreWait).
func (s *session) boardData() board.Data {
	d := board.Data{Keyless: s.key == ""}
	st := s.srv.cfg.Scores
	if st == nil {
		d.Err = "Scores are off on this server."
		return d
	}
	if st.Err() != nil {
		d.Err = "Scores are not available right now."
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
	switch {
	case errors.Is(err, scores.ErrOff):
		d.Err = "Scores are off on this server."
	case err != nil:
		s.c.log.Warn("scores browser", "err", err)
		d.Err = "Scores are not available right now."
	}
	return d
}

// boardRows is how many entries each of the browser's leaderboards holds.
const boardRows = 100
