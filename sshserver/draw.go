package sshserver

import (
	"runtime"
	"time"

	"snaked/game"
	"snaked/internal/cpuclock"
	"snaked/render"
)

// This file is what a session draws: its writer, the frame workers' turn
// at it (frames.go), and the frame of play, whose parts render runs in
// order: what the terminal changed, the HUD, the newest view, the
// player's snake or the spectator's camera, then the frame itself, on a
// cast's shared renderer (casts.go) or the session's own.

// toldNothing is session.shown before the screen outside play was told
// any countdown: it differs from every shutdownIn, so the first draw tells
// it.
const toldNothing int32 = noShutdown - 1

// writer draws the newest state each time it is poked, one Write per frame:
// the screens outside play, and frames the frame workers left to it (they
// found the session busy, or its screen not gone yet). Workers draw the
// ticks' frames of play otherwise (frames.go).
func (s *session) writer() {
	s.mu.Lock()
	prof := render.DetectProfile(s.term, s.env)
	s.mu.Unlock()
	s.fmu.Lock()
	s.cv, s.hud, s.shown, s.ready = canvas{prof: prof}, render.HUD{Join: s.srv.cfg.JoinHint}, toldNothing, true
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

// Sampling: one frame in renderCPUEvery has the wall time of its
// rendering and of its write measured (snaked_render_seconds,
// snaked_write_seconds), one in cpuEvery the CPU time of its rendering
// (snaked_render_cpu_seconds), the frames cpuAt past a multiple of it:
// the fourth first, past the first's whole repaint, and never one of the
// wall time's. The wall time includes the goroutine being descheduled on
// a busy machine; the thread's CPU time does not, so runs of two builds on
// a shared machine compare. A CPU sample takes two clock reads (a system
// call each, whose own cost, cpuclock.Cost, it leaves out) with the goroutine
// locked to its thread, and each observation is a few atomic operations on
// cache lines every session shares: sampled, they cost the frames next to
// nothing and still give hundreds of samples a second in a crowd.
const (
	renderCPUEvery = 16
	cpuEvery       = 64
	cpuAt          = 4 // not renderCPUEvery/2: the wall time's frames
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

// noWorld is the view a session draws while the world its camera may show
// is on its way: no pixels, no snakes (read only, by any session).
var noWorld = game.EmptyView()

// render renders one frame of the game on c for send to write; lastTick
// is the tick drawn last, updated when it draws one.
func (s *session) render(c *canvas, hud *render.HUD, lastTick *uint64) {
	cols, rows, repaint := s.refresh(c, hud)
	s.fillHUD(hud)
	v := s.srv.w.Acquire()
	play, rank := phase(s.phase.Load()) == phasePlay, 0
	if play {
		s.keepSnake(v, s.followPlayer(hud))
	} else {
		rank = s.followCamera(v, hud)
	}
	if cv := s.srv.cfg.Coverage; cv != nil && !cv.Covers(v, hud.Follow, hud.Cam, cols, rows) {
		// the world where the camera may show is on its way (a gateway
		// following regions): the screen stays until a view has it, but
		// a terminal that shows nothing of the game yet (a new session,
		// a resize, Ctrl-L) gets the banner and an empty field meanwhile
		v.Release()
		if repaint || s.frames == 0 {
			notice := hud.Notice
			if notice == "" {
				hud.Notice = "loading the world"
			}
			s.ownFrame(c, hud, noWorld, true)
			hud.Notice = notice
		}
		return
	}
	s.noteTick(v.Tick, lastTick) // a tick waited for counts as skipped
	if !play {
		if k, ok := s.castOf(c, hud, rank, cols, rows); ok {
			s.castFrame(k, c, hud, v, repaint)
			v.Release()
			return
		}
	}
	s.ownFrame(c, hud, v, repaint)
	v.Release()
}

// refresh takes what the terminal changed since the last frame, under one
// lock of s.mu: a resize, or Ctrl-L on a canvas smaller than the terminal
// (the budget may have freed up), asks for cells again, and the help and
// name tags toggles go into the HUD. It returns the terminal's size and
// whether the frame is a whole screen (Ctrl-L).
func (s *session) refresh(c *canvas, hud *render.HUD) (cols, rows int, repaint bool) {
	repaint = s.repaint.Swap(false)
	s.mu.Lock()
	if s.resized || repaint && c.held < s.cols*s.rows {
		s.resized = false
		c.fit(s.srv, s.cols, s.rows)
	}
	hud.Help, hud.HideTags = s.help, s.hideTags
	cols, rows = s.cols, s.rows
	s.mu.Unlock()
	return cols, rows, repaint
}

// fillHUD fills the HUD's fields that do not come from the world: the
// banner's counts (on a gateway, the other gateways' too), notice and
// shutdown countdown, the controls hint and the player's all-time record.
func (s *session) fillHUD(hud *render.HUD) {
	hud.Players, hud.Spectators = int(s.srv.players.Load()), int(s.srv.spectators.Load())
	hud.Notice = ""
	if cl := s.srv.cfg.Cluster; cl != nil {
		p, q := cl.Others()
		hud.Players, hud.Spectators = hud.Players+p, hud.Spectators+q
		hud.Notice = cl.Notice()
	}
	hud.ShutdownIn = int(s.srv.shutdownIn.Load())
	hud.Hint = !s.steered.Load() && time.Since(s.begin) < hintFor
	hud.AllBest, hud.AllRank = int(s.allBest.Load()), int(s.allRank.Load())
	if hud.Notice == "" {
		hud.Notice = s.noticeNow(time.Now())
	}
}

// noteTick counts the ticks skipped since lastTick (the session was busy:
// latest wins) and makes tick the last drawn.
func (s *session) noteTick(tick uint64, lastTick *uint64) {
	last := *lastTick
	*lastTick = tick
	if tick > last+1 {
		s.skipped(last, tick)
	}
}

// skipped counts the ticks between last and tick, which the session did
// not draw, unless tick is its first (last is 0). It is kept out of line,
// so that noteTick, on every frame, is inlined.
//
//go:noinline
func (s *session) skipped(last, tick uint64) {
	if last != 0 {
		s.srv.m.skipped.Add(float64(tick - last - 1))
	}
}

// followPlayer points the HUD at the player's snake and returns its ID.
func (s *session) followPlayer(hud *render.HUD) game.ID {
	id := game.ID(s.id.Load())
	hud.You, hud.Follow, hud.Spectator = id, id, false
	return id
}

// lostFrames is how many frames in a row the player's snake may be
// missing from the world before the session joins it again.
const lostFrames = 20

// keepSnake notes the player's snake id as v shows it (alive or not, its
// life for the scores). When the world has lost it for lostFrames frames
// in a row (a gateway's simulation restarted with a new world), the
// session joins again under the same name. A view that cannot show the
// snake yet is not counted: one of no world while the seat names one (a
// gateway before its first snapshot), or one of the seat's world from
// before the join (a gateway behind its simulation).
func (s *session) keepSnake(v *game.View, id game.ID) {
	if info, ok := v.Snake(id); ok && info.Name == s.nick {
		s.alive.Store(info.Alive)
		s.last = *info
		s.track(info)
		s.lost = 0
		return
	}
	if seat := s.seat.Load(); seat != nil && (seat.World != 0 && v.World == 0 || seat.World == v.World && v.Tick < seat.Tick) {
		s.lost = 0
		return
	}
	if s.lost++; s.lost == lostFrames && s.nick != "" {
		s.rejoin()
	}
}

// rejoin joins the world again under the session's name after its snake
// went missing; on a refusal it tries again lostFrames frames later.
func (s *session) rejoin() {
	s.jmu.Lock()
	if old := s.seat.Swap(nil); old != nil {
		// the snake may be there yet (the view was late): let it go, so it
		// does not hold the name; a seat its world no longer has is ignored
		s.srv.w.Leave(*old)
	}
	s.id.Store(0)
	s.jmu.Unlock()
	if why := s.enter(s.nick); why != "" {
		s.c.log.Warn("rejoin", "nick", s.nick, "why", why)
		s.lost = 0
		return
	}
	s.srv.m.rejoins.Inc()
	s.c.log.Info("rejoined", "nick", s.nick)
}

// followCamera points a spectator's HUD at the followed snake or the free
// camera; it returns the followed snake's place on the leaderboard.
func (s *session) followCamera(v *game.View, hud *render.HUD) (rank int) {
	hud.You, hud.Spectator = 0, true
	return s.camera(v, hud)
}

// castOf returns the key of the cast that draws a spectator's frame, and
// false when the session draws it on its own renderer: on the free camera
// (nothing followed), or as a slow client (solo), which gets diffs from
// what it was last sent rather than a cast's whole screen again and
// again.
func (s *session) castOf(c *canvas, hud *render.HUD, rank, cols, rows int) (castKey, bool) {
	if hud.Follow == 0 || s.solo.Load() {
		return castKey{}, false
	}
	return castKey{
		rank: rank, cols: cols, rows: rows, budget: c.budget, prof: c.prof,
		help: hud.Help, hint: hud.Hint, hideTags: hud.HideTags, allBest: hud.AllBest, allRk: hud.AllRank,
	}, true
}

// ownFrame renders v on the session's own renderer, a whole screen when
// repaint is set or the terminal shows a cast's screen.
func (s *session) ownFrame(c *canvas, hud *render.HUD, v *game.View, repaint bool) {
	if s.cast != nil || c.r == nil {
		s.backFromCast(c)
		repaint = true
	}
	r := c.r
	if repaint {
		r.Invalidate()
	}
	s.frames++
	sm := startSample(s.frames)
	s.pend, s.pendR, s.pendOK, s.timed = r.Frame(v, hud), r, true, sm.wall
	sm.end(s.srv.m)
}

// backFromCast takes the session off its cast, if any, and gives the
// canvas its own renderer back if the cast dropped it. The terminal still
// shows the cast's screen.
func (s *session) backFromCast(c *canvas) {
	s.leaveCast()
	if c.r == nil {
		s.mu.Lock()
		c.fit(s.srv, s.cols, s.rows)
		s.mu.Unlock()
	}
}

// sample is one frame's measures, when its number makes it a sample (see
// renderCPUEvery).
type sample struct {
	cpu  bool      // the rendering's thread CPU time, from c0
	wall bool      // the rendering's wall time, from t0 (and send times the write)
	c0   int64     // cpuclock.Thread at the start
	t0   time.Time // the wall clock at the start
}

// startSample starts frame n's sample, if it is one.
func startSample(n uint32) (sm sample) {
	if n%cpuEvery == cpuAt || n%renderCPUEvery == renderCPUEvery/2 {
		sm.start(n)
	}
	return sm
}

// start starts frame n's sample: it reads the clocks the sample measures
// with. Measuring the CPU time locks the goroutine to its thread, so that
// the thread's time is the frame's, until end.
func (sm *sample) start(n uint32) {
	sm.cpu, sm.wall = n%cpuEvery == cpuAt, n%renderCPUEvery == renderCPUEvery/2
	if sm.cpu {
		runtime.LockOSThread()
		sm.c0 = cpuclock.Thread()
	}
	if sm.wall {
		sm.t0 = time.Now()
	}
}

// end records the sample's measures in m, if it is one.
func (sm *sample) end(m *metrics) {
	if sm.cpu || sm.wall {
		sm.record(m)
	}
}

// record records the sample's measures in m.
func (sm *sample) record(m *metrics) {
	if sm.wall {
		m.render.Observe(time.Since(sm.t0).Seconds())
	}
	if sm.cpu {
		if c1 := cpuclock.Thread(); sm.c0 >= 0 && c1 >= sm.c0 {
			m.renderCPU.Observe(float64(max(c1-sm.c0-cpuclock.Cost(), 0)) / 1e9)
		}
		runtime.UnlockOSThread()
	}
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

// looksAt is what the session looks at now (Server.Cameras); false when
// it shows no world (a screen outside play, or before one).
func (s *session) looksAt() (game.Camera, bool) {
	p := phase(s.phase.Load())
	if p != phasePlay && p != phaseWatch {
		return game.Camera{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := game.Camera{Cols: s.cols, Rows: s.rows}
	switch {
	case p == phasePlay:
		c.Follow = game.ID(s.id.Load())
	case s.free: // where the next frame's pan takes it
		c.At = game.Point{X: s.cam.X + panStep(s.dx, panTickX), Y: s.cam.Y + panStep(s.dy, panTickY)}
	default:
		c.Top = true
	}
	return c, true
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
				s.cam = v.Heads[sl]
			}
		}
	} else if v.W > 0 && v.H > 0 {
		mx, my := panStep(s.dx, panTickX), panStep(s.dy, panTickY)
		s.cam.X = ((s.cam.X+mx)%v.W + v.W) % v.W
		s.cam.Y = ((s.cam.Y+my)%v.H + v.H) % v.H
		s.dx, s.dy = s.dx-mx, s.dy-my
	}
	hud.Cam = s.cam
	return s.follow
}
