// Package status serves the daemon's web page: how to join, the host
// key's fingerprint and a known_hosts line to trust it before the first
// connection, who is online, the live top 10, the all-time and today's
// boards and a minimap of the whole world, as HTML that keeps itself up to
// date (server-sent events) and as JSON for scripts. It reads the world,
// the counts and the scores through interfaces of its own, so it serves in
// one process and on a gateway alike. Whatever the number of viewers, one
// goroutine draws the world at most once a second and another reads the
// scores at most every few seconds; handlers only serve the bytes they
// cached.
package status

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"

	"snaked/game"
	"snaked/internal/scores"
)

// World is where the page reads the world: a local world's game.Host, or
// a gateway's replica of its simulation's world.
type World interface {
	// Acquire returns the newest view; the caller releases it.
	Acquire() *game.View
}

// Crowd counts the people online. sshserver.Server is one: its players
// and spectators, the cluster's other gateways' included.
type Crowd interface {
	Counts() (players, spectators int)
}

// Boards is the scores database as the page reads it: a *scores.Store in
// one process, a gateway's link to its simulation's store.
type Boards interface {
	Top(ctx context.Context, n int) ([]scores.Entry, error)
	TopToday(ctx context.Context, n int, now time.Time) ([]scores.Entry, error)
}

// Config says what a Server shows.
type Config struct {
	World      World         // required
	Crowd      Crowd         // nil: nobody is counted
	Boards     Boards        // nil: no scores
	HostKey    ssh.PublicKey // the SSH host key; required
	Join       string        // how to join, e.g. "ssh -p 2222 example.com"; its host and port make the known_hosts line
	Spectate   string        // how to watch; "" = not shown
	Version    string        // the daemon's version, shown in the footer and /api/status
	MaxStreams int           // live streams (server-sent events) open at once; 0 = none, the page polls
	Logger     *slog.Logger  // nil = slog.Default()
}

// StreamsRange bounds Config.MaxStreams (the daemon's -http-streams).
var StreamsRange = struct{ Min, Max int }{0, 10000}

// DefaultMaxStreams is the daemon's -http-streams default.
const DefaultMaxStreams = 256

// The page's bounds. A client gets these whatever it sends: Bounds lists
// them for the daemon's -h and the README.
const (
	headerWait     = 5 * time.Second  // to send a request's headers
	idleWait       = 30 * time.Second // a kept-alive connection between requests
	maxHeaderBytes = 8 << 10          // a request's headers
	writeWait      = 10 * time.Second // to take a response, or one event of a stream
	streamFor      = 10 * time.Minute // a stream ends after this long; the browser opens another
	extraConns     = 64               // connections beyond two per stream (a browser's stream and its fetches)
	closeWait      = 2 * time.Second  // Serve's shutdown of the handlers still running

	// Refresh is how often the page's world (counts, top 10, minimap) is
	// drawn while anyone looks; ScoresRefresh how often the scores are read.
	Refresh       = time.Second
	ScoresRefresh = 5 * time.Second
	// idleAfter: with no request for this long and no stream open, nothing
	// is drawn or read until the next request.
	idleAfter = 30 * time.Second
	// scoresWait bounds one read of the scores.
	scoresWait = 3 * time.Second
	// BoardN is the length of the all-time and today's boards.
	BoardN = 20
)

// maxConns is the most connections the page holds at once for streams
// live streams; more wait in the kernel's queue.
func maxConns(streams int) int { return 2*streams + extraConns }

// Bound is one of the page's fixed bounds.
type Bound struct{ What, Value string }

// Bounds lists the page's bounds on clients, for the daemon's -h and the
// README.
func Bounds() []Bound {
	return []Bound{
		{"status page (-http-addr) requests", "GET and HEAD only; headers within " + headerWait.String() + ", at most " + strconv.Itoa(maxHeaderBytes>>10) + " KiB; each response or event taken within " + writeWait.String() + "; idle connections closed after " + idleWait.String()},
		{"status page connections", "2 x -http-streams + " + strconv.Itoa(extraConns) + " at once; more wait in the kernel's queue"},
		{"status page live streams", "-http-streams at once (past it the page polls /api/status), each at most " + streamFor.String() + " (the browser opens another)"},
		{"status page work", "the world drawn (counts, top 10, minimap) at most once per " + Refresh.String() + ", the scores read at most once per " + ScoresRefresh.String() + ", whatever the number of viewers; nothing while nobody looks"},
	}
}

// Server is the status page. Create it with New and run it with Serve.
// Two goroutines of Serve's build what it shows (refresh: the world, once
// a Refresh; readScores: the boards, once a ScoresRefresh) and publish it
// as one immutable snapshot; handlers, on net/http's goroutines, serve the
// newest snapshot's bytes.
type Server struct {
	cfg         Config
	log         *slog.Logger
	fingerprint string
	knownHosts  string
	assets      assets
	every       time.Duration // Refresh, or shorter in tests
	scoresEvery time.Duration // ScoresRefresh, or shorter in tests

	cur       atomic.Pointer[snapshot] // the newest snapshot; never nil after New
	boards    atomic.Pointer[boards]   // the newest read of the scores; nil before the first
	wantedAt  atomic.Int64             // when a request last asked for the page's data (UnixNano)
	streams   atomic.Int32             // live streams open
	streamSeq atomic.Uint64            // streams opened so far: each one's offset (serveEvents)
	serving   atomic.Bool

	poke       chan struct{} // one slot: a request found the snapshot stale
	pokeScores chan struct{} // one slot: likewise, the boards
	done       chan struct{} // closed when Serve shuts down: streams end

	mm minimapper // refresh's own: the minimap's buffers
}

// New checks cfg and returns a server with a first snapshot.
func New(cfg Config) (*Server, error) {
	if cfg.World == nil {
		return nil, errors.New("status: nil world")
	}
	if cfg.HostKey == nil {
		return nil, errors.New("status: no host key")
	}
	if cfg.MaxStreams < StreamsRange.Min || cfg.MaxStreams > StreamsRange.Max {
		return nil, fmt.Errorf("status: MaxStreams must be in %d..%d (got %d)", StreamsRange.Min, StreamsRange.Max, cfg.MaxStreams)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	a, err := loadAssets()
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:         cfg,
		log:         cfg.Logger,
		fingerprint: ssh.FingerprintSHA256(cfg.HostKey),
		knownHosts:  KnownHostsLine(cfg.Join, cfg.HostKey),
		assets:      a,
		every:       Refresh,
		scoresEvery: ScoresRefresh,
		poke:        make(chan struct{}, 1),
		pokeScores:  make(chan struct{}, 1),
		done:        make(chan struct{}),
	}
	s.publish(time.Now())
	return s, nil
}

// Fingerprint is the host key's SHA256 fingerprint as the page shows it.
func (s *Server) Fingerprint() string { return s.fingerprint }

// Serve serves the page on ln until ctx is cancelled, then ends the live
// streams, shuts the listener's connections down within a couple of
// seconds and returns once its goroutines have. It closes ln. It returns
// nil after a shutdown asked for by ctx, else the listener's error.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if !s.serving.CompareAndSwap(false, true) {
		ln.Close()
		return errors.New("status: Serve called twice")
	}
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: headerWait,
		IdleTimeout:       idleWait,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { s.refresh(stop) })
	wg.Go(func() { s.readScores(stop) })
	served := make(chan error, 1)
	go func() { served <- hs.Serve(newLimitListener(ln, maxConns(s.cfg.MaxStreams))) }()

	var err error
	select {
	case <-ctx.Done():
	case err = <-served:
		served <- err
	}
	close(s.done)
	sctx, cancel := context.WithTimeout(context.Background(), closeWait)
	if hs.Shutdown(sctx) != nil {
		hs.Close()
	}
	cancel()
	if e := <-served; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	close(stop)
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// want notes that a request asked for the page's data and, when the
// newest snapshot is older than two refreshes (nobody looked for a while,
// so nothing was drawn), asks for a new one and waits for it, at most a
// refresh.
func (s *Server) want(ctx context.Context) *snapshot {
	now := time.Now()
	s.wantedAt.Store(now.UnixNano())
	snap := s.cur.Load()
	if now.Sub(snap.at) < 2*s.every {
		return snap
	}
	for _, c := range []chan struct{}{s.poke, s.pokeScores} {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	t := time.NewTimer(s.every)
	defer t.Stop()
	select {
	case <-snap.next:
	case <-t.C:
	case <-ctx.Done():
	case <-s.done:
	}
	return s.cur.Load()
}

// wanted reports whether anyone looked at the page lately, or holds a
// live stream.
func (s *Server) wanted(now time.Time) bool {
	return s.streams.Load() > 0 || now.Sub(time.Unix(0, s.wantedAt.Load())) < idleAfter
}

// refresh publishes a snapshot every s.every while anyone looks, and at
// once when a request pokes it (never two within s.every), until stop.
func (s *Server) refresh(stop <-chan struct{}) {
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		case <-s.poke:
		}
		now := time.Now()
		if s.wanted(now) && now.Sub(s.cur.Load().at) >= s.every*9/10 {
			s.publish(now)
		}
	}
}

// readScores reads the boards every s.scoresEvery while anyone looks, and
// at once when poked, until stop.
func (s *Server) readScores(stop <-chan struct{}) {
	if s.cfg.Boards == nil {
		return
	}
	s.boards.Store(s.readBoards(time.Now()))
	t := time.NewTicker(s.scoresEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		case <-s.pokeScores:
		}
		now := time.Now()
		if b := s.boards.Load(); s.wanted(now) && now.Sub(b.at) >= s.scoresEvery*9/10 {
			s.boards.Store(s.readBoards(now))
		}
	}
}

// limitListener is a listener that holds at most cap(sem) connections at
// once: Accept waits for one to close.
type limitListener struct {
	net.Listener
	sem  chan struct{}
	once sync.Once
	done chan struct{}
}

func newLimitListener(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, sem: make(chan struct{}, n), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn gives its slot back when closed, once.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
