package loadtest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"
)

// burstGap separates frames: reads closer together than this belong to one
// frame (a burst); a read after a longer silence starts a new one. The
// daemon sends one frame per tick (100 ms), written with one Write, so a
// frame normally arrives in one read and bursts are ~100 ms apart.
const burstGap = 20 * time.Millisecond

// Timing of the script around the start and the end of a session.
const (
	startWait = 1500 * time.Millisecond // before the first key: a join screen shows by then
	joinPhase = 5 * time.Second         // how long after the first byte a join prompt is looked for
	staleAge  = 2 * time.Second         // no frame for this long while "alive": press space
	quitWait  = 2 * time.Second         // after sending q at the end, close the connection
)

// ptySizes is the mix of terminal sizes the swarm asks for (cols x rows),
// dealt by session index: most people keep 80x24.
var ptySizes = [...][2]int{
	{80, 24}, {80, 24}, {80, 24}, {80, 24}, {80, 24}, {80, 24}, {80, 24}, {80, 24}, {80, 24}, {80, 24},
	{100, 30}, {100, 30}, {100, 30}, {100, 30},
	{120, 40}, {120, 40}, {120, 40},
	{160, 48}, {160, 48},
	{200, 60},
}

type event uint8

const (
	evDeath event = iota + 1
	evJoin
)

// session is one SSH client of the swarm: a reader goroutine that measures
// what arrives, and for players a goroutine that plays.
type session struct {
	r         *runner
	i         int
	user      string
	spectator bool
	checked   bool
	key       ssh.Signer // the session's own key; nil: keyless
	cols      int
	rows      int
	src       netip.Addr // zero: let the kernel choose
	addr      string     // the server it dials (one of Options.Addr's)
	target    *target    // that server's share of the report; nil with one server
	p         *Player
	pr        *probe // a checked player's key-to-frame probe; else nil

	events    chan event   // reader -> player, buffered, never blocks the reader
	alive     atomic.Bool  // the player's snake is believed alive (gaps count)
	skip      atomic.Bool  // do not count the next gap (a respawn was just sent)
	lastBurst atomic.Int64 // unix nanoseconds of the latest frame's arrival
	winBytes  atomic.Int64 // bytes received inside the measurement window
	winFrames atomic.Int64 // frames received inside the measurement window

	mu          sync.Mutex // guards conn, stdin, established and closed
	conn        net.Conn
	stdin       io.Writer
	established time.Time // first byte received
	closed      time.Time
}

// noQuestions is how a keyless session logs in: keyboard-interactive,
// answering the server's questions (snaked asks none) with nothing.
var noQuestions = ssh.KeyboardInteractive(func(_, _ string, qs []string, _ []bool) ([]string, error) {
	return make([]string, len(qs)), nil
})

// clientConfig is the session's client config: its user, and its key when
// it has one, else keyboard-interactive.
func (s *session) clientConfig() *ssh.ClientConfig {
	auth := []ssh.AuthMethod{noQuestions}
	if s.key != nil {
		auth = []ssh.AuthMethod{ssh.PublicKeys(s.key)}
	}
	return &ssh.ClientConfig{
		User:            s.user,
		Auth:            auth,
		HostKeyCallback: ssh.InsecureIgnoreHostKey(),
		ClientVersion:   "SSH-2.0-snaked-loadtest",
		Timeout:         s.r.o.HandshakeTimeout,
	}
}

// run is the whole life of one session.
func (s *session) run(ctx context.Context) {
	defer s.r.wg.Done()
	r := s.r
	// Always the address slot first, then the global one: no cycles.
	asem := r.addrSem[s.src]
	if asem != nil {
		select {
		case asem <- struct{}{}:
		case <-ctx.Done():
			return
		}
	}
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		if asem != nil {
			<-asem
		}
		return
	}
	r.requested.Add(1)
	start := time.Now()
	sshc, stdout, err := s.connect(ctx)
	<-r.sem
	if asem != nil {
		<-asem
	}
	if err != nil {
		if ctx.Err() != nil {
			r.cancelled.Add(1)
			return
		}
		r.fail(err.Error())
		if s.target != nil {
			s.target.failed.Add(1)
		}
		return
	}
	defer sshc.Close()
	r.addHandshake(time.Since(start))
	// At the end: say q like a person quitting (a player's own goroutine
	// does, so that q is its last key), then hang up.
	stop := context.AfterFunc(ctx, func() {
		time.AfterFunc(quitWait, s.hangUp)
		if s.spectator {
			s.send([]byte("q"))
		}
	})
	defer stop()
	if !s.spectator {
		r.wg.Add(1)
		go s.play(ctx)
	}
	s.read(ctx, start, stdout)
}

// connect dials, handshakes and opens a shell with a pty, as OpenSSH does.
func (s *session) connect(ctx context.Context) (*ssh.Client, io.Reader, error) {
	o := &s.r.o
	d := net.Dialer{Timeout: o.HandshakeTimeout}
	if s.src.IsValid() {
		d.LocalAddr = &net.TCPAddr{IP: s.src.AsSlice()}
	}
	c, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return nil, nil, fmt.Errorf("dial: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	c.SetDeadline(time.Now().Add(o.HandshakeTimeout))
	sc, chans, reqs, err := ssh.NewClientConn(c, s.addr, s.clientConfig())
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("handshake: %w", err)
	}
	client := ssh.NewClient(sc, chans, reqs)
	fail := func(step string, err error) (*ssh.Client, io.Reader, error) {
		client.Close()
		return nil, nil, fmt.Errorf("%s: %w", step, err)
	}
	sess, err := client.NewSession()
	if err != nil {
		return fail("session", err)
	}
	modes := ssh.TerminalModes{ssh.ECHO: 1, ssh.TTY_OP_ISPEED: 38400, ssh.TTY_OP_OSPEED: 38400}
	if err := sess.RequestPty("xterm-256color", s.rows, s.cols, modes); err != nil {
		return fail("pty-req", err)
	}
	// OpenSSH forwards LANG without asking for a reply.
	sess.SendRequest("env", false, ssh.Marshal(struct{ Name, Value string }{"LANG", "C.UTF-8"}))
	stdin, err := sess.StdinPipe()
	if err != nil {
		return fail("stdin", err)
	}
	stdout, err := sess.StdoutPipe()
	if err != nil {
		return fail("stdout", err)
	}
	if err := sess.Shell(); err != nil {
		return fail("shell", err)
	}
	c.SetDeadline(time.Time{})
	s.mu.Lock()
	s.conn, s.stdin = c, stdin
	s.mu.Unlock()
	return client, stdout, nil
}

// send writes keys to the session; errors show up on the reader's side.
func (s *session) send(p []byte) {
	s.mu.Lock()
	w := s.stdin
	s.mu.Unlock()
	if w != nil {
		w.Write(p)
	}
}

// hangUp closes the connection.
func (s *session) hangUp() {
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// read consumes everything the server sends and measures it.
func (s *session) read(ctx context.Context, start time.Time, stdout io.Reader) {
	r := s.r
	var screen Screen // nil: this session's screen is not checked
	if s.checked {
		screen = newScreen(s.cols, s.rows)
	}
	var gotFirst, noFrame atomic.Bool
	firstTimer := time.AfterFunc(r.o.HandshakeTimeout, func() {
		if !gotFirst.Load() {
			noFrame.Store(true)
			s.hangUp()
		}
	})
	defer firstTimer.Stop()

	death := newMarker(r.o.DeathMarker)
	buf := make([]byte, 8192)
	var (
		lastRead, burstStart, lastCheck, firstAt time.Time
		joinText                                 []byte
		joinTries                                int
		tail                                     []byte // the last bytes received, for disconnect reports
		problems                                 map[string]bool
	)
	var err error
	for {
		var n int
		n, err = stdout.Read(buf)
		now := time.Now()
		if n > 0 {
			data := buf[:n]
			if !gotFirst.Load() {
				gotFirst.Store(true)
				firstTimer.Stop()
				firstAt = now
				s.mu.Lock()
				s.established = now
				s.mu.Unlock()
				r.established.Add(1)
				if s.target != nil {
					s.target.established.Add(1)
				}
				r.addFirstFrame(now.Sub(start))
				s.alive.Store(!s.spectator)
			}
			inWin := r.inWindow(now)
			if lastRead.IsZero() || now.Sub(lastRead) > burstGap {
				// A new frame. The screen now holds the previous, complete one.
				if screen != nil && now.Sub(lastCheck) >= time.Second && now.Sub(firstAt) >= 2*time.Second && (s.spectator || s.alive.Load()) {
					lastCheck = now
					r.checks.Add(1)
					if bad := CheckScreen(screen, s.cols, s.rows, r.o.BannerMarker); len(bad) > 0 {
						if problems == nil {
							problems = map[string]bool{}
						}
						r.screenFailures.Add(1)
						for _, b := range bad {
							// Once per kind of problem and session.
							f := strings.Fields(strings.TrimLeft(b, "0123456789 "))
							if k := strings.Join(f[:min(2, len(f))], " "); !problems[k] {
								problems[k] = true
								r.screenProblem(fmt.Sprintf("session %d (%s, %dx%d) at +%.1fs: %s",
									s.i, s.user, s.cols, s.rows, now.Sub(start).Seconds(), b))
							}
						}
					}
				}
				if !burstStart.IsZero() && inWin {
					gap := now.Sub(burstStart)
					switch {
					case s.spectator:
						r.specGaps.Add(gap)
					case s.skip.Swap(false):
						r.skippedGaps.Add(1)
					case s.alive.Load():
						r.gaps.Add(gap)
						if s.target != nil {
							s.target.gaps.Add(gap)
						}
					default:
						r.skippedGaps.Add(1)
					}
				}
				burstStart = now
				s.lastBurst.Store(now.UnixNano())
				if inWin {
					s.winFrames.Add(1)
				}
			}
			lastRead = now
			if inWin {
				s.winBytes.Add(int64(n))
			}
			if screen != nil {
				screen.Write(data)
				if s.pr != nil {
					d, ok := headOf(screen, s.cols, s.rows)
					lat, hit, lost := s.pr.frame(d, ok, now)
					switch {
					case hit && inWin:
						r.keyFrame.Add(lat)
						if s.target != nil {
							s.target.keyFrame.Add(lat)
						}
					case lost && inWin:
						r.probesLost.Add(1)
					}
				}
			}
			if joinText != nil && now.Sub(firstAt) >= joinPhase {
				joinText = nil // the join phase is over: free the buffer
			}
			if !s.spectator && joinTries < 3 && now.Sub(firstAt) < joinPhase {
				// Keep only the last text shown, stripped of sequences.
				joinText = append(joinText, stripText(data)...)
				if len(joinText) > 1024 {
					joinText = append(joinText[:0], joinText[len(joinText)-512:]...)
				}
				if text := string(joinText); joinPrompt(text) {
					joinText = joinText[:0]
					// The prompt is redrawn with the name as it is typed:
					// that echo is not a new question.
					if joinTries == 0 || !joinEcho(text, joinName(r.o.NamePrefix, s.i, joinTries)) {
						joinTries++
						s.alive.Store(false)
						s.notify(evJoin)
					}
				}
			}
			if !s.spectator && death.Scan(data) && s.alive.Load() {
				s.alive.Store(false)
				s.notify(evDeath)
			}
			tail = append(tail, data...)
			if len(tail) > 4096 {
				tail = append(tail[:0], tail[len(tail)-1024:]...)
			}
		}
		if err != nil {
			break
		}
	}
	s.mu.Lock()
	s.closed = time.Now()
	s.mu.Unlock()
	switch {
	case noFrame.Load():
		r.fail(fmt.Sprintf("no output within %v of the shell", r.o.HandshakeTimeout))
	case ctx.Err() != nil:
		if !gotFirst.Load() {
			r.cancelled.Add(1)
		}
	case !gotFirst.Load():
		r.fail("closed before any output: " + err.Error())
	default:
		text := stripText(tail)
		r.unexpectedEnd(err.Error(), fmt.Sprintf("session %d (%s) after %.1fs, screen text: %q",
			s.i, s.user, time.Since(start).Seconds(), text[max(0, len(text)-160):]))
	}
}

// joinName is the name session i types at its try-th join screen.
func joinName(prefix string, i, try int) string {
	name := prefix + "x" + strconv.Itoa(i)
	if try > 1 { // the earlier answer was refused too
		name += "-" + strconv.Itoa(try)
	}
	return name
}

// notify hands an event to the player without ever blocking the reader.
func (s *session) notify(e event) {
	select {
	case s.events <- e:
	default:
	}
}

// play is a person at the keyboard: waits for a join screen or the game,
// turns at human intervals, presses space a while after dying.
func (s *session) play(ctx context.Context) {
	defer s.r.wg.Done()
	r := s.r
	const (
		playing = iota
		dead
		joining
	)
	state, joins := playing, 0
	t := time.NewTimer(startWait + s.p.Jitter(time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			s.send([]byte("q"))
			return
		case e := <-s.events:
			switch e {
			case evDeath:
				if s.pr != nil {
					s.pr.forget()
				}
				r.deaths.Add(1)
				state = dead
				t.Reset(s.p.RespawnDelay())
			case evJoin:
				r.joins.Add(1)
				joins++
				s.send([]byte(joinName(r.o.NamePrefix, s.i, joins) + "\r"))
				state = joining
				t.Reset(time.Second)
			}
		case <-t.C:
			switch state {
			case dead, joining:
				if state == dead {
					s.send([]byte(" "))
					r.respawns.Add(1)
				}
				s.p.Spawned()
				s.skip.Store(true)
				s.alive.Store(true)
				state = playing
			default:
				last := s.lastBurst.Load()
				if last != 0 && time.Since(time.Unix(0, last)) > staleAge {
					// Nothing drawn for a while: perhaps dead with a still
					// screen and the overlay missed. Space respawns (or dashes).
					// The long gap still counts: it may be a server stall.
					s.send([]byte(" "))
					r.staleRespawns.Add(1)
					s.p.Spawned()
				} else if last != 0 {
					d, key := s.p.Turn()
					if s.pr != nil {
						s.pr.press(d, time.Now())
					}
					s.send(key)
					r.turns.Add(1)
				}
			}
			t.Reset(s.p.TurnDelay())
		}
	}
}
