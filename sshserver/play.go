package sshserver

import (
	"runtime"
	"time"

	"snaked/game"
	"snaked/render"
)

// panX and panY are the free camera's step per arrow key, in world pixels
// (a text row holds two pixels).
const (
	panX = 8
	panY = 4
)

// reader drains the channel and turns bytes into keys until the input ends.
// Keys change what the next frame shows; none of them draws at once: the
// writer draws at most one frame per tick, whatever the client sends.
func (s *session) reader() {
	defer s.in.stop()
	buf := make([]byte, 512)
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

// lostFrames is how many frames in a row the player's snake may be
// missing from the world before the session joins it again.
const lostFrames = 20

// rejoin joins the world again under the session's name after its snake
// went missing; on a refusal it tries again lostFrames frames later.
func (s *session) rejoin() {
	s.jmu.Lock()
	s.seat.Store(nil)
	s.id.Store(0)
	s.jmu.Unlock()
	if why := s.enter(s.nick); why != "" {
		s.c.log.Warn("rejoin", "nick", s.nick, "why", why)
		s.lost = 0
		return
	}
	s.c.log.Info("rejoined", "nick", s.nick)
}

// noticer is a Host with something to say in the banner (a gateway whose
// simulation is away: "world restarting").
type noticer interface{ Notice() string }

// clusterCounts is a Host whose world has sessions elsewhere too (a gateway of a
// cluster): given this server's players and spectators, it returns the
// whole world's, for the banner.
type clusterCounts interface {
	Counts(players, spectators int) (int, int)
}

// keyHook, when set (tests only), sees every key first.
var keyHook func(k key, r byte)

// onKey applies one key according to the session's phase.
func (s *session) onKey(k key, r byte) {
	if keyHook != nil {
		keyHook(k, r)
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
		s.dx = max(min(s.dx, 1<<20), -1<<20)
		s.dy = max(min(s.dy, 1<<20), -1<<20)
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

// writer draws the newest state each time it is poked, one Write per frame:
// the screens outside play, and frames the frame workers left to it (they
// found the session busy, or its screen not gone yet). Workers draw the
// ticks' frames of play otherwise (frames.go).
func (s *session) writer() {
	s.mu.Lock()
	prof := render.DetectProfile(s.term, s.env)
	s.mu.Unlock()
	s.fmu.Lock()
	s.cv, s.hud, s.shown, s.ready = canvas{prof: prof}, render.HUD{Join: s.srv.cfg.JoinHint}, -2, true
	s.fmu.Unlock()
	defer func() {
		s.fmu.Lock()
		s.gone = true
		s.cv.release(s.srv)
		s.leaveCast()
		s.fmu.Unlock()
	}()
	for {
		select {
		case <-s.done:
			return
		case <-s.wake:
		}
		s.drawLocked()
	}
}

// drawLocked draws the newest state, waiting for whoever draws now. The
// unlock is deferred: after a panic in draw the writer's exit takes fmu.
func (s *session) drawLocked() {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	s.draw()
}

// tickRender is a frame worker's turn at the session: it renders the
// tick's frame of play unless another goroutine is drawing (a stalled
// write, or the writer) or a screen is still going away; then it pokes
// the writer, which draws the newest state when it can. It never waits
// for the session. It reports true when it rendered a frame: fmu stays
// held until tickSend writes it.
func (s *session) tickRender() (held bool) {
	if !s.fmu.TryLock() {
		s.poke()
		return false
	}
	defer func() {
		if !held {
			s.fmu.Unlock()
		}
	}()
	defer s.guard("frame worker")
	if s.gone {
		return false
	}
	if j := s.scr.Load(); !s.ready || j != nil && !j.sent {
		s.poke()
		return false
	}
	return s.prepare()
}

// tickSend writes the frame tickRender rendered and lets the session go.
func (s *session) tickSend() {
	defer s.fmu.Unlock()
	defer s.guard("frame worker")
	s.send()
}

// draw draws the newest state for the session's phase; fmu is held.
func (s *session) draw() {
	if s.prepare() {
		s.send()
	}
}

// prepare draws the newest state for the session's phase but for a frame
// of play's write: it reports true when it rendered one, which send then
// writes. fmu is held.
func (s *session) prepare() bool {
	switch phase(s.phase.Load()) {
	case phaseJoin, phaseScores:
		if j := s.scr.Load(); j != nil {
			s.drawScreen(j, &s.shown)
			s.leaveCast() // a cast's frames no longer apply
		}
	case phasePlay, phaseWatch:
		if j := s.scr.Load(); j != nil {
			s.screenGone(j)
		}
		if s.cv.held == 0 {
			// The first frame: take cells. (A spectator in a cast has
			// none of its own renderer; its canvas keeps the cells.)
			s.mu.Lock()
			s.cv.fit(s.srv, s.cols, s.rows)
			s.resized = false
			s.mu.Unlock()
		}
		s.render(&s.cv, &s.hud, &s.lastTick)
		return true
	}
	return false
}

// renderCPUEvery is how often a session measures the wall time of a
// frame's rendering and write (snaked_render_seconds,
// snaked_write_seconds): one frame in this many. cpuEvery is how often it
// measures the CPU time of a frame's rendering
// (snaked_render_cpu_seconds), the frames cpuAt past a multiple of it
// (the fourth frame first, past the first's whole repaint). The wall time
// includes the writer being descheduled on a busy machine; the thread's
// CPU time does not, so runs of two builds on a shared machine compare.
// A CPU sample takes two clock reads (a system call each, whose own cost,
// clockCost, the sample leaves out) with the goroutine locked to its
// thread: at one frame in 16 that was 0.8 % of the daemon's CPU at 2,500
// sessions; one in 64 still gives ~400 samples a second there.
const (
	renderCPUEvery = 16
	cpuEvery       = 64
	cpuAt          = 4 // not renderCPUEvery/2: the wall-time samples' frames
)

// canvas is a writer's renderer and its share of the server's cell budget.
type canvas struct {
	r      *render.Renderer
	prof   render.Profile
	budget int // the renderer's cell budget
	held   int // cells taken from the server's budget
}

// fit makes the canvas draw a cols x rows terminal within the budget the
// server grants now. A new budget gets a new renderer, sized for it alone
// (its first frame is a full repaint, as after any resize).
func (c *canvas) fit(srv *Server, cols, rows int) {
	budget, cells := srv.cells.take(c.held, cols, rows)
	c.held = cells
	if c.r == nil || budget != c.budget {
		c.r = render.NewBudget(c.prof, cols, rows, budget)
	} else {
		c.r.Resize(cols, rows)
	}
	c.budget = budget
}

// release gives the canvas's cells back to the server's budget.
func (c *canvas) release(srv *Server) {
	srv.cells.release(c.held)
	c.held = 0
}

// frame renders and writes one frame of the game on c; lastTick is the
// tick drawn last, updated.
func (s *session) frame(c *canvas, hud *render.HUD, lastTick *uint64) {
	s.render(c, hud, lastTick)
	s.send()
}

// render renders one frame of the game on c for send to write; lastTick
// is the tick drawn last, updated.
func (s *session) render(c *canvas, hud *render.HUD, lastTick *uint64) {
	repaint := s.repaint.Swap(false)
	s.mu.Lock()
	if s.resized || repaint && c.held < s.cols*s.rows {
		// A resize, or Ctrl-L on a canvas smaller than the terminal (the
		// budget may have freed up): ask for cells again.
		s.resized = false
		c.fit(s.srv, s.cols, s.rows)
	}
	hud.Help, hud.HideTags = s.help, s.hideTags
	cols, rows := s.cols, s.rows
	s.mu.Unlock()
	hud.Players, hud.Spectators = s.srv.Counts()
	if s.srv.counts != nil {
		hud.Players, hud.Spectators = s.srv.counts.Counts(hud.Players, hud.Spectators)
	}
	hud.ShutdownIn = int(s.srv.shutdownIn.Load())
	hud.Hint = !s.steered.Load() && time.Since(s.begin) < hintFor
	hud.AllBest, hud.AllRank = int(s.allBest.Load()), int(s.allRank.Load())
	if s.srv.notice != nil {
		hud.Notice = s.srv.notice.Notice()
	}
	if hud.Notice == "" {
		hud.Notice = s.noticeNow(time.Now())
	}

	v := s.srv.w.Acquire()
	if *lastTick != 0 && v.Tick > *lastTick+1 {
		s.srv.m.skipped.Add(float64(v.Tick - *lastTick - 1))
	}
	if phase(s.phase.Load()) == phasePlay {
		id := game.ID(s.id.Load())
		hud.You, hud.Follow, hud.Spectator = id, id, false
		if info, ok := v.Snake(id); ok && info.Name == s.nick {
			s.alive.Store(info.Alive)
			s.last = *info
			s.track(info)
			s.lost = 0
		} else if s.lost++; s.lost == lostFrames && s.nick != "" {
			// The world lost the snake: a gateway's simulation restarted
			// with a new world. Join that one under the same name.
			s.rejoin()
		}
	} else {
		hud.You, hud.Spectator = 0, true
		rank := s.camera(v, hud)
		// A slow client (solo) draws on its own renderer: diffs from what
		// it was last sent, never a cast's whole screen again and again.
		if hud.Follow != 0 && !s.solo.Load() {
			k := castKey{
				rank: rank, cols: cols, rows: rows, budget: c.budget, prof: c.prof,
				help: hud.Help, hint: hud.Hint, hideTags: hud.HideTags, allBest: hud.AllBest, allRk: hud.AllRank,
			}
			s.castFrame(k, c, hud, v, repaint)
			*lastTick = v.Tick
			v.Release()
			return
		}
	}
	if s.cast != nil || c.r == nil {
		// Back from a cast: the terminal shows the cast's screen.
		s.leaveCast()
		if c.r == nil {
			s.mu.Lock()
			c.fit(s.srv, s.cols, s.rows)
			s.mu.Unlock()
		}
		repaint = true
	}
	r := c.r
	if repaint {
		r.Invalidate()
	}
	s.frames++
	// One frame in cpuEvery has its rendering's CPU time measured, one
	// in renderCPUEvery (never the same, clear of the first's clock
	// system calls) its rendering's and its write's wall time: each
	// observation is a few atomic operations on cache lines every writer
	// shares, which cost 1-2 % of the daemon's CPU when every frame made
	// them.
	sample := s.frames%cpuEvery == cpuAt
	timed := s.frames%renderCPUEvery == renderCPUEvery/2
	var c0 int64
	if sample {
		// On one thread, so that the thread's CPU time is the frame's.
		runtime.LockOSThread()
		c0 = threadCPU()
	}
	var t0 time.Time
	if timed {
		t0 = time.Now()
	}
	s.pend, s.pendR, s.pendOK, s.timed = r.Frame(v, hud), r, true, timed
	if timed {
		s.srv.m.render.Observe(time.Since(t0).Seconds())
	}
	if sample {
		if c1 := threadCPU(); c0 >= 0 && c1 >= c0 {
			s.srv.m.renderCPU.Observe(float64(max(c1-c0-clockCost(), 0)) / 1e9)
		}
		runtime.UnlockOSThread()
	}
	*lastTick = v.Tick
	v.Release()
}

// send writes the frame render made, if it has bytes.
func (s *session) send() {
	b, r, ok, cb := s.pend, s.pendR, s.pendOK, s.pendBuf
	s.pend, s.pendR, s.pendOK, s.pendBuf = nil, nil, false, nil
	if !ok {
		return
	}
	defer cb.done() // a cast's frame: its buffer may be filled again
	if len(b) > 0 {
		s.touched = true
		var t0 time.Time
		if s.timed {
			t0 = time.Now()
		}
		s.write(b)
		if s.timed {
			s.srv.m.write.Observe(time.Since(t0).Seconds())
		}
		s.srv.m.frames.Inc()
	}
	if r != nil {
		r.Release() // the channel has copied b
	}
}

// leaveCast takes the session off its cast, if any; fmu is held.
func (s *session) leaveCast() {
	if s.cast != nil {
		s.srv.casts.leave(s.cast)
		s.cast, s.castSeq = nil, 0
	}
}

// castFrame makes the frame of a spectator who follows a snake: the
// frame of the cast of its screen k (casts.go), rendered once for all its
// spectators; a whole screen when repaint is set (Ctrl-L). The session's
// own renderer is dropped meanwhile (a whole terminal's grid); the
// canvas keeps its cells.
func (s *session) castFrame(k castKey, c *canvas, hud *render.HUD, v *game.View, repaint bool) {
	cs, seq := s.cast, s.castSeq
	if cs == nil || cs.key != k {
		cs, seq = s.srv.casts.move(s.cast, k), 0
	}
	if repaint {
		seq = 0
	}
	b, buf, now, _ := cs.frame(v, hud, seq, s.srv.m)
	s.cast, s.castSeq, s.pendBuf = cs, now, buf
	if c.r != nil {
		c.r.Release()
		c.r = nil
	}
	s.frames++
	s.pend, s.pendR, s.pendOK, s.timed = b, nil, true, false
}

// camera points a spectator's HUD at the followed snake or the free
// camera; it returns the followed snake's place on the leaderboard.
func (s *session) camera(v *game.View, hud *render.HUD) (rank int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hud.Follow = 0
	if !s.free {
		if n := len(v.Top); n > 0 {
			s.follow = (s.follow%n + n) % n
			sl := v.Top[s.follow].Slot
			if sl >= 0 && sl < len(v.Snakes) && v.Snakes[sl].Used {
				hud.Follow = v.Snakes[sl].ID
				s.cam = v.Snakes[sl].Head
			}
		}
	} else if v.W > 0 && v.H > 0 {
		s.cam.X = ((s.cam.X+s.dx)%v.W + v.W) % v.W
		s.cam.Y = ((s.cam.Y+s.dy)%v.H + v.H) % v.H
		s.dx, s.dy = 0, 0
	}
	hud.Cam = s.cam
	return s.follow
}
