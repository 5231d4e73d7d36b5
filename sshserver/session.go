package sshserver

import (
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"

	"snaked/game"
	"snaked/internal/join"
	"snaked/internal/scores"
	"snaked/render"
)

// phase is where a session is in its life.
type phase int32

const (
	phaseSetup  phase = iota // waiting for pty-req and shell
	phaseJoin                // the nickname screen
	phasePlay                // driving a snake
	phaseWatch               // spectating
	phaseScores              // the scores browser
)

// defaultCols and defaultRows are a session's terminal size until its
// pty-req gives one.
const (
	defaultCols = 80
	defaultRows = 24
)

// hintFor is how long the short controls hint shows when nobody steers.
const hintFor = 15 * time.Second

// session is one SSH session channel: a player, a spectator, or someone on
// the join screen.
type session struct {
	srv  *Server
	c    *conn
	ch   ssh.Channel
	user string
	// key is the player's identity: the SHA256 fingerprint ("SHA256:...",
	// as ssh-keygen -l prints it) of the public key the client
	// authenticated with, read from the successful authentication's
	// Permissions; empty for a keyless client. Set once, before the
	// session's goroutines start.
	key    string
	from   string // the client's address as claims count it (IPv4, or IPv6 /64)
	idx    int    // index in srv.live; guarded by srv.mu
	queued uint64 // the frame pool's last list holding it; guarded by the pool's mu

	wake    chan struct{} // cap 1, latest wins: a new tick or a state change
	started chan struct{} // closed by handle on shell or exec
	done    chan struct{} // closed by end
	endOnce sync.Once
	reason  cause // why the session ended; written once in end

	phase      atomic.Int32              // a phase
	seat       atomic.Pointer[game.Seat] // the player's seat once joined: what inputs and the leave name
	id         atomic.Uint64             // the seat's snake ID, for the frames (0: none)
	alive      atomic.Bool               // the player's snake is alive in the last frame drawn
	steered    atomic.Bool               // the player has steered at least once
	allBest    atomic.Int32              // the player's all-time best from the scores; 0 unknown
	allRank    atomic.Int32              // and rank
	recAt      atomic.Int64              // when loadRecord last asked (unix ns)
	gameBest   atomic.Int32              // the longest game this session recorded (loadRecord)
	repaint    atomic.Bool               // Ctrl-L: the next frame is a full repaint
	lastInput  atomic.Int64              // unix nanos of the last input bytes
	writeStart atomic.Int64              // when the current write began (monoNow); 0 when not writing
	solo       atomic.Bool               // a write took stallAfter or more: the writer draws every frame
	begin      time.Time                 // when play or spectating began; set before the writer starts
	nick       string                    // the player's nickname once joined; written by the joiner before phasePlay
	notice     atomic.Pointer[notice]    // a message for the banner, for a while (names.go)
	pace       pacer                     // the join screen's tries (names.go); the screen's program only

	// Drawing: the session's writer and the server's frame workers
	// (frames.go) draw its frames, one at a time. fmu guards the fields
	// below it, which run reads again only after the writer is done.
	fmu      sync.Mutex
	ready    bool // the writer has set up the canvas: workers may draw
	gone     bool // the writer has ended: nothing draws any more
	cv       canvas
	hud      render.HUD
	lastTick uint64           // the last frame's tick
	shown    int32            // shutdown seconds on the join screen
	touched  bool             // something was drawn on the terminal
	last     game.SnakeInfo   // the player's snake in the last frame
	life     life             // the life being played, for scores (scores.go)
	lost     int              // frames in a row without the player's snake in the world
	frames   uint32           // frames rendered (renderCPU samples one in cpuEvery)
	buf      []byte           // join screen bytes
	pend     []byte           // the frame render made and send writes (in pendR's buffer)
	pendR    *render.Renderer // the renderer of pend, released by send; nil for a cast's frame
	pendOK   bool             // render made a frame (pend) for send
	pendBuf  *castBuf         // pend's cast buffer, if it is one: done once written
	cast     *cast            // the cast whose frames the terminal shows (casts.go); nil: its own renderer's
	castSeq  uint64           // the last of cast's frames it got
	timed    bool             // send times pend's write (renderCPUEvery)

	// Owned by run, which writes them before any writer starts.
	out  []byte // a command's output (causeCommand)
	code uint32 // and its exit status

	jmu  sync.Mutex // guards kind and left, and serialises join with leave
	kind kind       // what the session counts as now
	left bool       // leave ran: no more joins

	emit func(key, byte) // s.onKey, bound once
	in   input           // the reader's decoder and Esc timer

	mu       sync.Mutex // guards the fields below
	pty      bool
	exec     bool
	shell    bool
	cmd      string // the exec request's command
	term     string
	env      []string
	envReqs  int
	cols     int
	rows     int
	resized  bool
	help     bool
	hideTags bool       // t: no name tags on other snakes
	follow   int        // spectator: index into the leaderboard
	free     bool       // spectator: free camera instead of following
	cam      game.Point // spectator: free camera centre, or the followed head
	dx, dy   int        // spectator: pans not yet applied

	scr atomic.Pointer[screenProg] // the program of a screen outside play (join, scores), once started
}

func newSession(srv *Server, c *conn, ch ssh.Channel) *session {
	s := &session{
		srv:     srv,
		c:       c,
		ch:      ch,
		user:    c.ssh.User(),
		key:     c.key,
		from:    ipKey(c.raw.RemoteAddr()).String(),
		idx:     -1,
		wake:    make(chan struct{}, 1),
		started: make(chan struct{}),
		done:    make(chan struct{}),
		cols:    defaultCols,
		rows:    defaultRows,
	}
	s.emit = s.onKey
	s.in = input{emit: s.emit, done: s.done}
	return s
}

// poke wakes the writer without blocking; a pending wake covers this one.
func (s *session) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// end finishes the session; the first reason wins.
func (s *session) end(reason cause) {
	s.endOnce.Do(func() {
		s.reason = reason
		close(s.done)
		if j := s.scr.Load(); j != nil {
			j.p.Kill()
		}
	})
}

// why is the reason the session ended.
func (s *session) why() cause {
	select {
	case <-s.done:
		return s.reason
	default:
		return causeRunning
	}
}

// idleCounts reports whether the AFK bound applies now.
func (s *session) idleCounts() bool {
	p := phase(s.phase.Load())
	return p == phasePlay || p == phaseJoin
}

// guard recovers a panic in one of the session's goroutines and ends the
// session; run then still restores the terminal and says goodbye. A panic in
// run itself closes the connection.
func (s *session) guard(who string) {
	if r := recover(); r != nil {
		s.c.log.Error("panic in session", "in", who, "panic", r)
		s.end(causePanic)
		if who == "run" {
			s.c.closeWith(causePanic)
		}
	}
}

// spawn runs f in a goroutine counted by wg and returns a channel closed when
// f returns.
func spawn(wg *sync.WaitGroup, f func()) <-chan struct{} {
	done := make(chan struct{})
	wg.Go(func() {
		defer close(done)
		f()
	})
	return done
}

// deep runs f on a goroutine of its own and waits for it; a panic in f is
// raised again in the caller. It is for work that needs a deep stack once:
// the scores database's questions (SQLite grows a goroutine's stack to
// 8-16 KiB) and starting the join and scores screens (frames of 23 and
// 31 KB). A long-lived goroutine that does it directly (a connection's, a
// session's reader) keeps that stack until a garbage collection shrinks
// it, and in a steady crowd none runs for a minute or more; a goroutine
// that ends gives its stack back at once.
func deep(f func()) {
	done := make(chan struct{})
	var p any
	go func() {
		defer func() {
			p = recover()
			close(done)
		}()
		f()
	}()
	<-done
	if p != nil {
		panic(p)
	}
}

// shallow is a slog.Handler that formats and writes each record (the
// wrapped handler's Handle) on a goroutine that ends (deep): that takes
// ~3 KB of stack, which would take a connection's goroutine that logs
// its connect from 4 to 8 KiB for the rest of its life (it parks too deep
// in that stack for the garbage collector to shrink it). A server logs a
// handful of records a session.
type shallow struct{ h slog.Handler }

func (s shallow) Enabled(ctx context.Context, l slog.Level) bool { return s.h.Enabled(ctx, l) }

func (s shallow) Handle(ctx context.Context, r slog.Record) error {
	var err error
	deep(func() { err = s.h.Handle(ctx, r) })
	return err
}

func (s shallow) WithAttrs(as []slog.Attr) slog.Handler { return shallow{s.h.WithAttrs(as)} }
func (s shallow) WithGroup(name string) slog.Handler    { return shallow{s.h.WithGroup(name)} }

// run is the session's life cycle, run by the connection's control loop k:
// it waits for the shell, starts the reader and writer, waits for the end,
// says goodbye and waits for everything it started. Every wait serves the
// connection's requests and channel opens through k.
func (s *session) run(k *ctl) {
	var wg sync.WaitGroup
	defer wg.Wait()
	defer func() { s.c.closeWith(s.why()) }()
	defer s.guard("run")
	s.srv.addLive(s)
	defer s.srv.removeLive(s)

	t := time.NewTimer(s.srv.cfg.HandshakeTimeout)
	switch k.wait(s.started, s.done, t.C, s.srv.closing) {
	case evTimer:
		s.end(causeNoShell)
	case evClosing:
		s.end(causeShutdown)
	}
	t.Stop()
	select {
	case <-s.done:
		s.finish(k)
		return
	default:
	}

	s.mu.Lock()
	pty, exec, cmd := s.pty, s.exec, s.cmd
	s.mu.Unlock()
	if out, code, ok := s.command(cmd); ok && (exec || !pty) {
		s.out, s.code = out, code
		s.end(causeCommand)
		s.finish(k)
		return
	}
	if exec || !pty {
		s.srv.m.rejections.WithLabelValues(refuseNoPty.String()).Inc()
		s.end(causeNoPty)
		s.finish(k)
		return
	}

	s.lastInput.Store(time.Now().UnixNano())
	s.begin = time.Now()
	defer s.leave()
	if strings.EqualFold(s.user, "scores") {
		s.phase.Store(int32(phaseScores))
		s.setKind(kindBrowsing)
		s.c.log.Info("scores browser")
		deep(func() { s.startBoard(&wg) }) // a frame of ~30 KB: not on the connection's stack
	} else if strings.EqualFold(s.user, s.srv.cfg.SpectatorUser) {
		s.phase.Store(int32(phaseWatch))
		s.setKind(kindSpectator)
		s.srv.m.joins.WithLabelValues(kindSpectator.String()).Inc()
		s.c.log.Info("watch")
	} else {
		s.setKind(kindJoining)
		s.phase.Store(int32(phaseJoin))
		why := ""
		if n := join.Sanitize(s.user); join.Usable(n) {
			s.greet()
			why = s.enter(n)
		}
		if phase(s.phase.Load()) == phaseJoin && s.why() == causeRunning {
			deep(func() { s.startJoin(&wg, why) }) // as startBoard
		}
	}

	wg.Go(func() {
		defer s.guard("reader")
		s.reader()
	})
	writeDone := spawn(&wg, func() {
		defer s.guard("writer")
		s.writer()
	})
	// The writer draws its first frame at the next tick. Every other event
	// ends the session: its requests ended, or the connection is gone.
	if k.wait(s.done, nil, nil, s.srv.closing) == evClosing {
		s.end(causeShutdown)
	}
	for k.wait(writeDone, nil, nil, nil) == evReqs {
	}
	<-writeDone
	s.finish(k)
}

// greeting is what a gateway's session shows while it asks the
// simulation for its name and its snake: a clear screen of the game's
// with a line saying so (plain text, for every profile). The first frame
// repaints it whole.
const greeting = "\x1b[?1049h\x1b[?25l\x1b[m\x1b[H\x1b[2J snaked  joining the world..."

// greet shows the greeting on a cluster gateway, where entering the world
// waits for the simulation's answers (up to scoreWait and a join's wait
// when it is slow), so that the terminal does not stay blank meanwhile. A
// single process answers at once: it shows nothing before the first frame.
func (s *session) greet() {
	if s.srv.cfg.Cluster == nil {
		return
	}
	s.touched = true // the goodbye restores the terminal
	s.write(append(s.buf[:0], greeting...))
}

// enter tries to enter the world as name. It returns "" when the player
// is in, else why not, for the join screen; on a full world or a shutdown
// the session ends.
func (s *session) enter(name string) string {
	select {
	case <-s.srv.stopping:
		s.end(causeShutdown)
		return "the server is shutting down"
	default:
	}
	s.jmu.Lock()
	defer s.jmu.Unlock()
	if s.left {
		return "the session is over"
	}
	if s.seat.Load() != nil {
		return ""
	}
	if why := s.nameRefused(name); why != "" {
		s.srv.m.rejections.WithLabelValues(refuseNameClaimed.String()).Inc()
		return why
	}
	seat, err := s.srv.w.Join(name, s.key)
	switch {
	case err == nil:
		s.nick = name
		s.seat.Store(&seat)
		s.id.Store(uint64(seat.ID))
		s.alive.Store(true)
		s.begin = time.Now()
		s.srv.m.joins.WithLabelValues(kindPlayer.String()).Inc()
		s.setKind(kindPlayer)
		s.phase.Store(int32(phasePlay))
		s.c.log.Info("join", "nick", name)
		s.claim(name)
		s.loadRecord(false)
		return ""
	case errors.Is(err, scores.ErrClaimed): // the simulation of a cluster checked again
		s.srv.owners.drop(strings.ToLower(name))
		s.srv.m.rejections.WithLabelValues(refuseNameClaimed.String()).Inc()
		return ownedBy(name, s.key)
	case errors.Is(err, scores.ErrUnchecked):
		return whyCannotCheck
	case errors.Is(err, game.ErrNameTaken):
		s.srv.m.rejections.WithLabelValues(refuseNameTaken.String()).Inc()
		return "\"" + name + "\" is taken: pick another"
	case errors.Is(err, game.ErrFull):
		s.srv.m.rejections.WithLabelValues(refuseWorldFull.String()).Inc()
		s.end(causeWorldFull)
		return "the world is full"
	case errors.Is(err, game.ErrUnavailable):
		s.srv.m.rejections.WithLabelValues(refuseUnavailable.String()).Inc()
		return "the world is restarting: try again in a moment"
	default:
		s.c.log.Warn("join failed", "nick", name, "err", err)
		return "could not join: pick another name"
	}
}

// leave removes the player's snake, if any, and stops counting the session.
func (s *session) leave() {
	s.jmu.Lock()
	defer s.jmu.Unlock()
	if s.left {
		return
	}
	s.left = true
	if seat := s.seat.Load(); seat != nil {
		s.srv.w.Leave(*seat)
	}
	s.setKind(kindNone)
}

// setKind moves the session between the kinds counted in the banner and the
// metrics. Callers hold jmu or run before the reader starts.
func (s *session) setKind(k kind) {
	if s.kind == k {
		return
	}
	if s.kind != kindNone {
		s.srv.m.sessions.WithLabelValues(s.kind.String()).Dec()
		s.srv.count(s.kind, -1)
	}
	if k != kindNone {
		s.srv.m.sessions.WithLabelValues(k.String()).Inc()
		s.srv.count(k, 1)
	}
	s.kind = k
}

// closeWait is how long a session's goodbye waits, in all, for the client
// to close the channel and to disconnect.
const closeWait = time.Second

// finish restores the terminal, says goodbye, sends the exit status and
// closes the channel, then waits (closeWait in all) for the client to
// close it and to disconnect.
func (s *session) finish(k *ctl) {
	s.endLife()
	s.leave() // no join can race with the goodbye below
	reason := s.why()
	s.srv.m.disconn.WithLabelValues(reason.String()).Inc()
	if reason == causeClosed {
		s.writeStart.Store(monoNow())
		s.ch.Close()
		s.writeStart.Store(0)
		return
	}
	b := s.buf[:0]
	if s.touched {
		b = append(b, render.Restore()...)
	}
	code := uint32(1)
	switch reason {
	case causeCommand:
		code = s.code
		b = append(b, s.out...)
	case causeQuit:
		code = 0
		b = append(b, "Thanks for playing snaked"...)
		if s.nick != "" {
			b = append(b, ", "...)
			b = game.AppendName(b, s.nick, game.MaxName)
			if s.last.BestLength > 0 {
				b = append(b, "! Best length "...)
				b = strconv.AppendInt(b, int64(s.last.BestLength), 10)
				b = append(b, ", kills "...)
				b = strconv.AppendInt(b, int64(s.last.Kills), 10)
			}
		}
		b = append(b, ".\r\n"...)
	case causeShutdown:
		code = 0
		b = append(b, "snaked is shutting down. Thanks for playing, see you soon!\r\n"...)
	case causeIdle:
		b = append(b, "snaked: disconnected after "...)
		b = append(b, s.srv.cfg.IdleTimeout.String()...)
		b = append(b, " without input.\r\n"...)
	case causeWorldFull:
		b = append(b, "snaked: the world is full right now; please try again in a minute.\r\n"...)
	case causeNoPty:
		b = append(b, "snaked is a game: connect with "...)
		b = append(b, s.srv.cfg.JoinHint...)
		b = append(b, " (it needs a terminal; add -t)\r\n"...)
	case causePanic:
		b = append(b, "snaked: internal error, sorry.\r\n"...)
	default:
		b = append(b, "snaked: disconnected ("...)
		b = append(b, reason.String()...)
		b = append(b, ").\r\n"...)
	}
	// The whole goodbye runs under the stall watchdog: any of these packets
	// can block on a client that does not read.
	s.writeStart.Store(monoNow())
	var n int
	if reason == causeNoPty {
		n, _ = s.ch.Stderr().Write(b)
	} else {
		n, _ = s.ch.Write(b)
	}
	s.srv.m.bytes.Add(float64(n))
	s.ch.SendRequest("exit-status", false, binary.BigEndian.AppendUint32(nil, code))
	s.ch.CloseWrite()
	s.ch.Close()
	s.writeStart.Store(0)
	if k.sreqs == nil {
		return // the client closed the channel already
	}
	t := time.NewTimer(closeWait)
	defer t.Stop()
	if k.wait(nil, nil, t.C, s.srv.closing) == evReqs {
		// The client answered the close. Clients then disconnect
		// themselves: give them the rest of closeWait (evGone) rather
		// than drop the connection under them (PuTTY calls that "Remote
		// side unexpectedly closed network connection" and exits 1).
		k.wait(nil, nil, t.C, s.srv.closing)
	}
}

// writeChunk is the most a session hands its channel in one Write. x/crypto
// keeps a channel's packet buffer and its cipher's sealing buffer at the
// size of the largest packet the channel ever sent, so a session's first
// frame (a whole repaint, often several KiB) would hold two buffers of its
// size for the session's life. 2,000 bytes keep both within 2 KiB (the
// packet adds a 9-byte header, sealing at most 20 bytes of padding and a
// 16-byte tag). In a crowd 99.7 % of frames are smaller
// (docs/BENCHMARKS.md) and still go out as one packet.
const writeChunk = 2000

// write sends p to the terminal under the stall watchdog: in one Write,
// or in pieces of writeChunk bytes when it is longer.
func (s *session) write(p []byte) error {
	start := monoNow()
	s.writeStart.Store(start)
	var n int
	var err error
	for len(p) > 0 && err == nil {
		var k int
		k, err = s.ch.Write(p[:min(len(p), writeChunk)])
		n += k
		p = p[k:]
	}
	s.writeStart.Store(0)
	if monoNow()-start >= int64(stallAfter) {
		// A client this slow to take a frame draws on its own writer
		// from now on, out of the frame workers' way (frames.go).
		s.solo.Store(true)
	}
	s.srv.m.bytes.Add(float64(n))
	return err
}
