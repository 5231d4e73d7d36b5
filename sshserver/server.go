package sshserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"

	"snaked/game"
)

// Server is the SSH daemon. Create it with New and run it with Serve.
//
// Each connection has one control goroutine that answers global requests,
// channel opens and the session's requests (pty, window-change, env,
// shell) and runs the session's life cycle; each session adds one reader
// (keys) and one writer (the screens outside play, and frames the frame
// workers leave to it). With x/crypto's three per connection that is six
// goroutines per session. Serve adds the tick loop (ticks.go), which hands
// the sessions in play to a few frame workers (frames.go) and pokes the
// others' writers through a one-slot, latest-wins notification, so a
// session gets at most one frame per tick whatever its client sends; and
// a watchdog, which drops sessions whose write stalls and players who went
// idle, and sends every connection's keepalive from a short-lived
// goroutine that waits for the reply. A session is drawn by one goroutine
// at a time; a worker that finds it busy, or stalls on it, leaves it to
// the session's writer, so a slow client hurts only itself.
type Server struct {
	cfg     Config
	w       game.Host           // a local World, or a gateway's view of one elsewhere
	owners  owners              // who owns which name, as last heard (names.go)
	keyHook func(k key, r byte) // sees every key first; nil but in tests (option)
	log     *slog.Logger
	ssh     *ssh.ServerConfig
	m       *metrics
	unauth  *unauthSet
	conns   connSet
	cells   cellBudget

	cmu        sync.Mutex   // serialises count, so the cluster hears the counts in order
	players    atomic.Int32 // sessions playing (joined the world)
	spectators atomic.Int32 // sessions watching
	shutdownIn atomic.Int32 // seconds left in the shutdown countdown; noShutdown when none
	serving    atomic.Bool

	stopping chan struct{} // closed when the countdown starts: no new connections or joins
	closing  chan struct{} // closed when the countdown ends: sessions say goodbye

	wg sync.WaitGroup // one per accepted connection

	labels context.Context // pprof labels of every connection's goroutines

	frames *framePool // draws the ticks' frames of play
	casts  casts      // spectators' shared frames

	mu       sync.Mutex            // guards addr, live, tickList, pinged and raws
	addr     net.Addr              // the listener's address while serving
	live     []*session            // sessions that may receive frames; session.idx is the index
	tickList []*session            // notifyAll's list, kept for the next tick
	pinged   []*conn               // admitted connections under keepalive; conn.idx is the index
	raws     map[net.Conn]struct{} // every accepted connection, for the final force close

	camMu sync.Mutex // guards cams
	cams  []*session // Cameras' scratch
}

// noShutdown is Server.shutdownIn while no shutdown countdown runs.
const noShutdown = -1

// An option sets one of a Server's unexported fields at construction: the
// switches tests turn.
type option func(*Server)

// New checks cfg and returns a server for world w (a local world's
// game.World.Host, or a gateway's link). The server draws at each signal
// of cfg.Wake and at each Ticked.
func New(cfg Config, w game.Host, opts ...option) (*Server, error) {
	if w == nil {
		return nil, errors.New("sshserver: nil world")
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Wake == nil {
		cfg.Wake = NewWake()
	}
	s := &Server{
		cfg:      cfg,
		w:        w,
		log:      slog.New(shallow{cfg.Logger.Handler()}),
		m:        newMetrics(),
		unauth:   newUnauthSet(cfg.MaxHandshakes, cfg.MaxHandshakesPerIP, cfg.HandshakeQueue),
		conns:    connSet{max: cfg.MaxSessions, perIP: cfg.MaxPerIP},
		cells:    cellBudget{per: int64(cfg.MaxCells), total: int64(cfg.MaxCellsTotal)},
		stopping: make(chan struct{}),
		closing:  make(chan struct{}),
		raws:     map[net.Conn]struct{}{},
		labels:   pprof.WithLabels(context.Background(), pprof.Labels("snaked", "conn")),
	}
	s.shutdownIn.Store(noShutdown)
	s.frames = newFramePool(runtime.GOMAXPROCS(0), (*session).tickRender, (*session).tickSend)
	for _, o := range opts {
		o(s)
	}
	if cfg.Scores != nil {
		s.m.scores(cfg.Scores)
	}
	for _, c := range cfg.Collectors {
		if err := s.m.reg.Register(c); err != nil {
			return nil, fmt.Errorf("sshserver: metrics: %w", err)
		}
	}
	sc := &ssh.ServerConfig{
		ServerVersion: "SSH-2.0-snaked",
		// "none" is refused so that clients offer their keys (auth.go).
		PublicKeyCallback:           acceptKey,
		KeyboardInteractiveCallback: keyless,
		MaxAuthTries:                maxAuthFailures,
	}
	sc.KeyExchanges = []string{ssh.KeyExchangeMLKEM768X25519, ssh.KeyExchangeCurve25519}
	for _, k := range cfg.HostSigners {
		sc.AddHostKey(k)
	}
	sc.BannerCallback = s.banner
	s.ssh = sc
	return s, nil
}

// Addr is the listener's address while Serve runs, else nil.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Serve accepts on ln until ctx is cancelled, then runs the shutdown countdown (every session shows it), says goodbye,
// restores every terminal, sends exit-status, closes, and returns. It returns
// within ShutdownGrace + 5 s even with clients that never read. Serve closes
// ln. It returns nil after a shutdown asked for by ctx, else the listener's
// error.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if !s.serving.CompareAndSwap(false, true) {
		return errors.New("sshserver: Serve called twice")
	}
	s.mu.Lock()
	s.addr = ln.Addr()
	s.mu.Unlock()

	var bg sync.WaitGroup // tick loop, watchdog, metrics listener
	stopBG := make(chan struct{})
	var hs *http.Server
	if s.cfg.MetricsAddr != "" {
		mln, err := net.Listen("tcp", s.cfg.MetricsAddr)
		if err != nil {
			ln.Close()
			return fmt.Errorf("sshserver: metrics listener: %w", err)
		}
		hs = &http.Server{Handler: s.m.handler(), ReadHeaderTimeout: MetricsHeaderWait}
		s.log.Info("metrics listening", "addr", mln.Addr().String())
		bg.Go(func() {
			if err := hs.Serve(mln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("metrics listener", "err", err)
			}
		})
	}
	bg.Go(func() { s.watchdog(stopBG) })
	s.frames.run()
	bg.Go(func() { s.tickLoop(stopBG) })

	acceptErr := make(chan error, 1)
	go func() { acceptErr <- s.accept(ln) }()

	var err error
	select {
	case <-ctx.Done():
		ln.Close()
		<-acceptErr
	case err = <-acceptErr:
		ln.Close()
	}
	s.shutdown()
	s.frames.close() // every connection is closed: no worker waits on one

	close(stopBG)
	if hs != nil {
		hs.Close()
	}
	bg.Wait()
	s.mu.Lock()
	s.addr = nil
	s.mu.Unlock()
	return err
}

// goodbyeWait bounds how long the sessions' goodbyes may take once the
// countdown ends (StallTimeout, when shorter); then every connection left
// is closed.
const goodbyeWait = 3 * time.Second

// shutdown runs the countdown, asks every session to say goodbye, and
// force-closes whatever is left a bounded time later.
func (s *Server) shutdown() {
	grace := s.cfg.ShutdownGrace
	s.log.Info("shutdown countdown", "grace", grace.String(), "sessions", s.liveCount())
	close(s.stopping)
	s.unauth.closeAll()
	deadline := time.Now().Add(grace)
	for {
		left := time.Until(deadline)
		if left <= 0 || s.liveCount() == 0 { // nobody to warn: skip the wait
			break
		}
		secs := int32((left + time.Second - 1) / time.Second)
		s.shutdownIn.Store(secs)
		step := left - time.Duration(secs-1)*time.Second
		time.Sleep(step)
	}
	s.shutdownIn.Store(0)
	close(s.closing)

	// Sessions now write their goodbye. Writers stalled on clients that do
	// not read are cut when this bound passes.
	bound := min(s.cfg.StallTimeout, goodbyeWait)
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(bound):
	}
	s.mu.Lock()
	n := len(s.raws)
	for c := range s.raws {
		c.Close()
	}
	s.mu.Unlock()
	s.log.Warn("shutdown: closed lingering connections", "count", n)
	<-done
}

// accept runs the accept loop until ln fails or is closed.
func (s *Server) accept(ln net.Listener) error {
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			select {
			case <-s.stopping:
				return nil
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				backoff = min(max(2*backoff, acceptBackoffMin), acceptBackoffMax)
				s.log.Warn("accept", "err", err, "retry_in", backoff.String())
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		key := ipKey(c.RemoteAddr())
		e, evicted := s.unauth.add(c, key)
		if evicted != nil {
			evicted.Close()
			s.m.handshake.WithLabelValues(hsEvicted.String()).Inc()
		}
		if e == nil {
			s.m.rejections.WithLabelValues(refuseHandshakeQueue.String()).Inc()
			s.log.Debug("reject", "remote", c.RemoteAddr().String(), "reason", "handshake queue full")
			c.Close()
			continue
		}
		s.mu.Lock()
		s.raws[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1) // done by endConn
		go s.serveConn(c, e)
	}
}

// The accept loop's pause after a temporary error: from acceptBackoffMin,
// doubling with each error in a row, up to acceptBackoffMax.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

// isTemporary reports accept errors worth retrying (e.g. EMFILE).
func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// The watchdog looks four times within the stall and keepalive bounds,
// but at most every watchMin and at least every watchMax.
const (
	watchMin = 10 * time.Millisecond
	watchMax = time.Second
)

// watchdog drops sessions whose write is stalled and players gone idle,
// and drives every connection's keepalive.
func (s *Server) watchdog(stop <-chan struct{}) {
	period := min(max(s.cfg.StallTimeout/4, watchMin), watchMax)
	if ka := s.cfg.KeepAlive; ka > 0 {
		period = min(period, max(ka/4, watchMin))
	}
	t := time.NewTicker(period)
	defer t.Stop()
	var batch []*session
	var conns []*conn
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		now, mono := time.Now().UnixNano(), monoNow()
		stall := s.cfg.StallTimeout.Nanoseconds()
		idle := s.cfg.IdleTimeout.Nanoseconds()
		batch = batch[:0]
		s.mu.Lock()
		batch = append(batch, s.live...)
		conns = append(conns[:0], s.pinged...)
		s.mu.Unlock()
		for _, c := range conns {
			s.keepalive(c, now)
		}
		clear(conns)
		for _, ss := range batch {
			if ws := ss.writeStart.Load(); ws != 0 && mono-ws > stall {
				s.m.stalls.Inc()
				ss.c.closeWith(causeStalled)
				continue
			}
			if idle > 0 && ss.idleCounts() && now-ss.lastInput.Load() > idle {
				ss.end(causeIdle)
			}
		}
		clear(batch)
	}
}

// monoEpoch is monoNow's origin.
var monoEpoch = time.Now()

// monoNow is a monotonic clock in nanoseconds, never 0. Every frame's
// write reads it twice: it reads the monotonic clock only, where time.Now
// reads the wall clock as well.
func monoNow() int64 { return int64(time.Since(monoEpoch)) + 1 }

// liveCount is the number of sessions (any phase).
func (s *Server) liveCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.live)
}

// Counts returns the players and spectators of this server and, on a
// gateway, of the cluster's other gateways as last heard: what the banner
// counts. It takes no lock and may be called from any goroutine.
func (s *Server) Counts() (players, spectators int) {
	players, spectators = int(s.players.Load()), int(s.spectators.Load())
	if cl := s.cfg.Cluster; cl != nil {
		p, q := cl.Others()
		players, spectators = players+p, spectators+q
	}
	return players, spectators
}

// count adjusts the server's player or spectator number by d and tells
// the cluster, if any, the new numbers.
func (s *Server) count(k kind, d int32) {
	if k != kindPlayer && k != kindSpectator {
		return
	}
	s.cmu.Lock()
	defer s.cmu.Unlock()
	if k == kindPlayer {
		s.players.Add(d)
	} else {
		s.spectators.Add(d)
	}
	if cl := s.cfg.Cluster; cl != nil {
		cl.SetLocal(int(s.players.Load()), int(s.spectators.Load()))
	}
}

// addLive makes ss receive tick notifications and watchdog checks.
func (s *Server) addLive(ss *session) {
	s.mu.Lock()
	s.live = addIndexed(s.live, ss)
	s.mu.Unlock()
}

// removeLive undoes addLive.
func (s *Server) removeLive(ss *session) {
	s.mu.Lock()
	s.live = removeIndexed(s.live, ss)
	s.mu.Unlock()
}

// addConn puts c under keepalive.
func (s *Server) addConn(c *conn) {
	s.mu.Lock()
	s.pinged = addIndexed(s.pinged, c)
	s.mu.Unlock()
}

// removeConn undoes addConn.
func (s *Server) removeConn(c *conn) {
	s.mu.Lock()
	s.pinged = removeIndexed(s.pinged, c)
	s.mu.Unlock()
}

// indexed is a member of an unordered list that knows its own position, so
// it leaves the list in O(1) (the last member takes its place).
type indexed interface {
	comparable
	index() *int // the member's position in its list, -1 when in none
}

func (ss *session) index() *int { return &ss.idx }
func (c *conn) index() *int     { return &c.idx }

// addIndexed appends x to list and records its position.
func addIndexed[T indexed](list []T, x T) []T {
	*x.index() = len(list)
	return append(list, x)
}

// removeIndexed takes x out of list (nothing when x is not in it) and
// returns the shortened list.
func removeIndexed[T indexed](list []T, x T) []T {
	i := *x.index()
	if i < 0 || i >= len(list) || list[i] != x {
		return list
	}
	last := len(list) - 1
	list[i] = list[last]
	*list[i].index() = i
	var zero T
	list[last] = zero
	*x.index() = -1
	return list[:last]
}

// Cameras appends to dst what each session that shows the world looks at
// (game.Camera) and returns it: players follow their snakes, spectators the
// leaderboard or a free camera. A gateway that follows only the regions
// its cameras need calls it after each tick; it allocates nothing once dst
// has room.
func (s *Server) Cameras(dst []game.Camera) []game.Camera {
	s.camMu.Lock()
	defer s.camMu.Unlock()
	s.mu.Lock()
	s.cams = append(s.cams[:0], s.live...)
	s.mu.Unlock()
	for _, ss := range s.cams {
		c, ok := ss.looksAt()
		if ok {
			dst = append(dst, c)
		}
	}
	clear(s.cams)
	return dst
}
