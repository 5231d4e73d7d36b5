package sshserver

import (
	"time"

	"snaked/game"
)

// This file is what a session does with its client's keys: the reader
// decodes them (input.go), and each goes to the screen outside play, the
// player's snake or the spectator's camera, by the session's phase.

// The free camera: its step per arrow key in world pixels (a text row
// holds two pixels), the most a frame moves it (two keys' worth: a held
// key's repeats pan smoothly, and a camera never jumps further than a
// gateway following regions keeps ahead of it), and the most it keeps to
// pan in later frames (the camera stops two frames after the keys do).
const (
	panX     = 8
	panY     = 4
	panTickX = 2 * panX
	panTickY = 2 * panY
	panKeepX = 4 * panX
	panKeepY = 4 * panY
)

// panStep bounds a pan d to most either way: the part of a pending pan
// that the next frame applies (panTick), or what a session keeps pending
// (panKeep).
func panStep(d, most int) int { return max(min(d, most), -most) }

// readBuf is the size of the reader's buffer: more than a client types
// between two reads.
const readBuf = 512

// reader drains the channel and turns bytes into keys until the input ends.
// Keys change what the next frame shows; none of them draws at once: the
// writer draws at most one frame per tick, whatever the client sends.
func (s *session) reader() {
	defer s.in.stop()
	buf := make([]byte, readBuf)
	for {
		n, err := s.ch.Read(buf)
		if n > 0 {
			now := time.Now().UnixNano()
			s.lastInput.Store(now)
			s.c.heard.Store(now)
			s.in.feed(buf[:n])
		}
		if err != nil {
			return // the request loop sees the channel close
		}
	}
}

// onKey applies one key according to the session's phase.
func (s *session) onKey(k key, r byte) {
	if h := s.srv.keyHook; h != nil {
		h(k, r)
	}
	switch phase(s.phase.Load()) {
	case phaseJoin, phaseScores:
		s.screenKey(k, r)
	case phasePlay:
		s.playKey(k, r)
	case phaseWatch:
		s.watchKey(k, r)
	}
}

// common handles the keys players and spectators share; it reports whether
// it used k.
func (s *session) common(k key, r byte) bool {
	switch {
	case k == keyCtrlC || k == keyCtrlD || k == keyRune && (r == 'q' || r == 'Q'):
		s.end(causeQuit)
	case k == keyCtrlL:
		s.repaint.Store(true)
	case k == keyRune && r == '?':
		s.mu.Lock()
		s.help = !s.help
		s.mu.Unlock()
	case k == keyRune && (r == 't' || r == 'T'):
		s.mu.Lock()
		s.hideTags = !s.hideTags
		s.mu.Unlock()
	default:
		return false
	}
	return true
}

// dirOf maps steering keys to a heading.
func dirOf(k key, r byte) game.Dir {
	switch k {
	case keyUp:
		return game.Up
	case keyDown:
		return game.Down
	case keyLeft:
		return game.Left
	case keyRight:
		return game.Right
	case keyRune:
		switch r {
		case 'w', 'W', 'k', 'K':
			return game.Up
		case 's', 'S', 'j', 'J':
			return game.Down
		case 'a', 'A', 'h', 'H':
			return game.Left
		case 'd', 'D', 'l', 'L':
			return game.Right
		}
	}
	return game.None
}

func (s *session) playKey(k key, r byte) {
	if s.common(k, r) {
		return
	}
	seat := s.seat.Load()
	if seat == nil {
		return
	}
	if d := dirOf(k, r); d != game.None {
		s.srv.w.Turn(*seat, d)
		s.srv.m.turns.Inc()
		s.steered.Store(true)
		return
	}
	switch {
	case k == keyRune && r == ' ':
		if s.alive.Load() {
			s.srv.w.Dash(*seat)
			s.srv.m.dashes.Inc()
		} else {
			s.srv.w.Respawn(*seat)
			s.srv.m.respawns.Inc()
			s.loadRecord(true)
		}
	case k == keyEnter:
		if !s.alive.Load() {
			s.srv.w.Respawn(*seat)
			s.srv.m.respawns.Inc()
			s.loadRecord(true)
		}
	}
}

func (s *session) watchKey(k key, r byte) {
	if s.common(k, r) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch d := dirOf(k, r); {
	case d != game.None:
		if !s.free {
			s.free = true
			s.dx, s.dy = 0, 0
		}
		switch d {
		case game.Up:
			s.dy -= panY
		case game.Down:
			s.dy += panY
		case game.Left:
			s.dx -= panX
		case game.Right:
			s.dx += panX
		}
		s.dx = panStep(s.dx, panKeepX)
		s.dy = panStep(s.dy, panKeepY)
	case k == keyTab || k == keyRune && (r == 'n' || r == 'N'):
		s.free = false
		s.follow++
	case k == keyBackTab || k == keyRune && (r == 'p' || r == 'P'):
		s.free = false
		s.follow--
	case k == keyRune && (r == 'f' || r == 'F'):
		s.free = false
	default:
		return
	}
	s.steered.Store(true)
}
