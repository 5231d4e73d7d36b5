package sshserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/crypto/ssh"

	"snaked/game"
	"snaked/internal/scores"
	"snaked/render"
)

// Config configures a Server. Start from DefaultConfig: it holds every
// default, and New refuses numeric fields outside their Range (below). The
// daemon's flags take their defaults and ranges from here.
type Config struct {
	HostSigners        []ssh.Signer           // host keys; at least one
	MaxSessions        int                    // established connections (players + spectators)
	MaxPerIP           int                    // established connections per IPv4 address / IPv6 /64
	MaxHandshakes      int                    // connections not yet admitted (in the handshake or queued for it); past it the oldest is dropped
	MaxHandshakesPerIP int                    // handshakes running at once per address
	HandshakeQueue     int                    // connections per address waiting for a handshake slot; 0 refuses at once
	SpectatorUser      string                 // user name that spectates
	ShutdownGrace      time.Duration          // shutdown countdown; 0 says goodbye at once
	HandshakeTimeout   time.Duration          // SSH handshake, the wait for a handshake slot, and the shell request
	KeepAlive          time.Duration          // keepalive interval, 3 unanswered => drop; 0 = off
	IdleTimeout        time.Duration          // players without input are dropped; 0 = never
	StallTimeout       time.Duration          // a write blocked longer is dropped
	SendBuffer         int                    // SO_SNDBUF bytes per connection; 0 = the kernel's default
	MaxCells           int                    // renderer cells one session may hold (see render.Fit)
	MaxCellsTotal      int                    // renderer cells all sessions may hold together
	JoinHint           string                 // how to join, shown in banners, e.g. "ssh -p 2222 host"
	MetricsAddr        string                 // "" = off; else Prometheus /metrics and /debug/pprof/ there
	Collectors         []prometheus.Collector // more metrics served with the server's (a gateway's link)
	Logger             *slog.Logger           // nil = slog.Default()
	Scores             Scores                 // finished games, name claims and the scores command; nil = none
	Cluster            Cluster                // the cluster this server is a gateway of; nil = a single process
	Wake               *Wake                  // signalled at each new view of the world that Ticked does not announce (a gateway's follower); nil = a Wake of the server's own
	Coverage           Coverage               // which views hold the world where a camera may show (a gateway following regions); nil = every view everywhere
}

// Coverage says whether a view holds the world's pixels wherever a
// session's camera may show: a gateway that follows only the regions its
// cameras need has them only there, and a camera that jumps waits for
// its regions. Every session's frame calls Covers (follow is the snake the
// camera follows, else 0 and at is the free camera's centre; cols x rows
// the terminal): it may not block.
type Coverage interface {
	Covers(v *game.View, follow game.ID, at game.Point, cols, rows int) bool
}

// Cluster is the cluster a server is a gateway of, as its sessions see it:
// a gateway's link to its simulation and to the other gateways. Every
// session's frame calls Notice and Others, and each join and leave calls
// SetLocal: none may block.
type Cluster interface {
	// Notice is what the banner says about the link ("world restarting"
	// while no tick comes from the simulation), or "".
	Notice() string
	// Others returns the players and spectators on the cluster's other
	// gateways, as last heard.
	Others() (players, spectators int)
	// SetLocal tells the cluster this server's players and spectators;
	// the server calls it each time they change, in order.
	SetLocal(players, spectators int)
}

// Scores is what sessions ask of the scores: a *scores.Store in one
// process, or a gateway's link to its simulation's store. An error that is
// scores.ErrOff says the store keeps no scores (a cluster's simulation
// run with -scores off): names are then not claimed; any other error
// means nothing is known, and a name that cannot be checked is not
// handed out.
type Scores interface {
	Record(r scores.Result) bool
	Holding(ctx context.Context, name, fp string, now time.Time) (scores.Holding, error)
	Claim(ctx context.Context, name, fp, from string, now time.Time) (scores.ClaimResult, error)
	Player(ctx context.Context, id scores.ID) (scores.Record, bool, error)
	Top(ctx context.Context, n int) ([]scores.Entry, error)
	TopToday(ctx context.Context, n int, now time.Time) ([]scores.Entry, error)
	Err() error          // non-nil: no scores (the game goes on without)
	Stats() scores.Stats // counters for the metrics
}

var _ Scores = (*scores.Store)(nil)

// DefaultConfig returns the defaults (without host keys).
func DefaultConfig() Config {
	return Config{
		MaxSessions:        3000,
		MaxPerIP:           64,
		MaxHandshakes:      256,
		MaxHandshakesPerIP: 4,
		HandshakeQueue:     64,
		SpectatorUser:      "watch",
		ShutdownGrace:      5 * time.Second,
		HandshakeTimeout:   10 * time.Second,
		KeepAlive:          15 * time.Second,
		IdleTimeout:        5 * time.Minute,
		StallTimeout:       5 * time.Second,
		SendBuffer:         64 << 10,
		MaxCells:           20000,
		MaxCellsTotal:      16 << 20,
		JoinHint:           "ssh -p 2222 localhost",
	}
}

// Range is the allowed interval of a numeric setting, both ends included.
type Range struct{ Min, Max int64 }

// Check reports whether v is in r, as an error that names what and r.
func (r Range) Check(what string, v int64) error {
	if v < r.Min || v > r.Max {
		return fmt.Errorf("%s must be in %s (got %d)", what, r, v)
	}
	return nil
}

// String is "min..max".
func (r Range) String() string {
	return strconv.FormatInt(r.Min, 10) + ".." + strconv.FormatInt(r.Max, 10)
}

// DurationString is "min..max" as durations.
func (r Range) DurationString() string {
	return time.Duration(r.Min).String() + ".." + time.Duration(r.Max).String()
}

// Ranges of Config's numeric fields (durations in nanoseconds).
var (
	SessionsRange   = Range{1, 100000} // MaxSessions, MaxPerIP
	HandshakesRange = Range{1, 65536}  // MaxHandshakes, MaxHandshakesPerIP
	QueueRange      = Range{0, 4096}   // HandshakeQueue
	GraceRange      = Range{0, int64(10 * time.Minute)}
	HandshakeRange  = Range{int64(100 * time.Millisecond), int64(10 * time.Minute)} // HandshakeTimeout
	KeepAliveRange  = Range{0, int64(time.Hour)}
	IdleRange       = Range{0, int64(7 * 24 * time.Hour)}
	StallRange      = Range{int64(100 * time.Millisecond), int64(10 * time.Minute)}
	SendBufferRange = Range{0, 16 << 20}
	CellsRange      = Range{render.MinCols * render.MinRows, render.MaxCols * render.MaxRows} // MaxCells
	CellsTotalRange = Range{render.MinCols * render.MinRows, 1 << 30}                         // MaxCellsTotal
)

// check refuses a Config with a field outside its range.
func (c *Config) check() error {
	if len(c.HostSigners) == 0 {
		return errors.New("sshserver: no host key")
	}
	for _, k := range c.HostSigners {
		if k == nil {
			return errors.New("sshserver: nil host key")
		}
	}
	if c.SpectatorUser == "" {
		return errors.New("sshserver: SpectatorUser must not be empty")
	}
	for _, f := range []struct {
		name string
		r    Range
		v    int64
	}{
		{"MaxSessions", SessionsRange, int64(c.MaxSessions)},
		{"MaxPerIP", SessionsRange, int64(c.MaxPerIP)},
		{"MaxHandshakes", HandshakesRange, int64(c.MaxHandshakes)},
		{"MaxHandshakesPerIP", HandshakesRange, int64(c.MaxHandshakesPerIP)},
		{"HandshakeQueue", QueueRange, int64(c.HandshakeQueue)},
		{"ShutdownGrace", GraceRange, int64(c.ShutdownGrace)},
		{"HandshakeTimeout", HandshakeRange, int64(c.HandshakeTimeout)},
		{"KeepAlive", KeepAliveRange, int64(c.KeepAlive)},
		{"IdleTimeout", IdleRange, int64(c.IdleTimeout)},
		{"StallTimeout", StallRange, int64(c.StallTimeout)},
		{"SendBuffer", SendBufferRange, int64(c.SendBuffer)},
		{"MaxCells", CellsRange, int64(c.MaxCells)},
		{"MaxCellsTotal", CellsTotalRange, int64(c.MaxCellsTotal)},
	} {
		if err := f.r.Check(f.name, f.v); err != nil {
			return errors.New("sshserver: " + err.Error())
		}
	}
	return nil
}

// Bounds on client requests that are not worth a knob.
const (
	maxEnvReqs  = 64  // env requests answered per session; later ones refused
	maxEnvKept  = 8   // env variables kept for profile detection
	maxEnvValue = 256 // longer values are refused
	maxTerm     = 64  // longest TERM kept

	maxRefusedChannels = 16 // channel opens refused before the connection is closed

	// escWait is how long a lone ESC waits for the rest of an escape
	// sequence before it counts as the Esc key (tcell waits 50 ms too).
	escWait = 50 * time.Millisecond
)

// Bound is one fixed bound, for the daemon's -h and the README.
type Bound struct{ What, Value string }

// FixedBounds lists the bounds on clients that are not settings.
func FixedBounds() []Bound {
	return []Bound{
		{"session channels per connection", "1"},
		{"exec, subsystem, port forwarding, agent, X11", "refused"},
		{"channel opens refused before the connection is closed", strconv.Itoa(maxRefusedChannels)},
		{"env requests per session", strconv.Itoa(maxEnvReqs) + " answered, " + strconv.Itoa(maxEnvKept) + " kept (colour detection only), values up to " + strconv.Itoa(maxEnvValue) + " bytes"},
		{"terminal size", "clamped to 1.." + strconv.Itoa(render.MaxCols) + " columns, 1.." + strconv.Itoa(render.MaxRows) + " rows"},
		{"TERM", "up to " + strconv.Itoa(maxTerm) + " bytes of [A-Za-z0-9._+-], else ignored"},
		{"frames per session", "at most one per tick, whatever the client sends"},
		{"lone Esc", "a key after " + escWait.String() + " without the rest of a sequence"},
		{"join-screen tries", "one per " + paceGap.String() + ", the wait doubling after each refused name up to " + paceMax.String()},
		{"failed authentication attempts per connection", strconv.Itoa(maxAuthFailures) + ", then the connection is closed (the first \"none\" probe does not count)"},
		{"RSA keys", "up to " + strconv.Itoa(maxRSABits) + " bits, certified keys too; a larger key is declined and the client goes on to its next key or keyless"},
	}
}
