package loadtest

import (
	"errors"
	"io"
	"time"
)

// Options configures a swarm run.
type Options struct {
	Addr     string        // host:port of the SSH server, or several comma-separated (gateways): sessions are dealt evenly (see deal); the only addresses dialled
	N        int           // sessions to open
	Ramp     time.Duration // sessions start evenly spread over the ramp
	Duration time.Duration // measurement window after the ramp

	SpectatorShare float64 // share of sessions that log in as SpectatorUser (0..1)
	CheckShare     float64 // share of sessions whose screens internal/vtmodel checks; >0 means at least one
	// KeyShare is the share of sessions that authenticate with a public
	// key (an ed25519 key of their own, made before the ramp); the others
	// log in without one, as keyless players do (keyboard-interactive,
	// no questions).
	KeyShare float64

	Pty [2]int // every session's terminal, cols x rows; zero: the usual mix (mostly 80x24)

	PerAddr          int           // sessions per loopback source address (default 64)
	DialConcurrency  int           // dials in flight at once (default 64)
	DialPerAddr      int           // dials in flight per source address (default 2)
	HandshakeTimeout time.Duration // dial to shell reply, and shell to first byte (default 15 s)

	ServerPID  int    // measure this local process's CPU and RSS (0: off)
	MetricsURL string // scrape this Prometheus endpoint at window start and end ("": off)
	TickMetric string // histogram (seconds) of the daemon's tick duration

	Seed          uint64 // seeds every player script
	NamePrefix    string // player usernames are NamePrefix + index (default "load"; the daemon reserves "botN" for its bots)
	SpectatorUser string // default "watch"
	DeathMarker   string // text that only the death overlay writes (default "respawn")
	BannerMarker  string // text the banner shows on checked screens ("": not checked)

	// Viewers status page viewers (ViewersURL, the daemon's -http-addr)
	// start over the ramp beside the sessions and hold the page's live
	// stream open until the run ends (viewers.go).
	Viewers    int
	ViewersURL string

	Log io.Writer // progress lines every 5 s; nil: quiet
}

// DefaultOptions returns the defaults of cmd/loadtest.
func DefaultOptions() Options {
	return Options{
		Addr:             "127.0.0.1:2222",
		N:                500,
		Ramp:             10 * time.Second,
		Duration:         30 * time.Second,
		SpectatorShare:   0.05,
		CheckShare:       0.01,
		PerAddr:          64,
		DialConcurrency:  64,
		DialPerAddr:      2,
		HandshakeTimeout: 15 * time.Second,
		TickMetric:       "snaked_tick_seconds",
		Seed:             1,
		NamePrefix:       "load",
		SpectatorUser:    "watch",
		DeathMarker:      "respawn",
		BannerMarker:     "snake",
	}
}

// fill replaces zero fields that have a default and validates the rest.
func (o *Options) fill() error {
	d := DefaultOptions()
	if o.Addr == "" {
		return errors.New("loadtest: no address")
	}
	if o.N < 1 {
		return errors.New("loadtest: N must be at least 1")
	}
	if o.Ramp < 0 || o.Duration <= 0 {
		return errors.New("loadtest: ramp must be >= 0 and duration > 0")
	}
	if o.SpectatorShare < 0 || o.SpectatorShare > 1 || o.CheckShare < 0 || o.CheckShare > 1 || o.KeyShare < 0 || o.KeyShare > 1 {
		return errors.New("loadtest: shares must be within 0..1")
	}
	if o.Pty != [2]int{} && (o.Pty[0] < 1 || o.Pty[1] < 1 || o.Pty[0] > 1000 || o.Pty[1] > 1000) {
		return errors.New("loadtest: pty size must be within 1x1..1000x1000")
	}
	if o.Viewers < 0 || o.Viewers > 0 && o.ViewersURL == "" {
		return errors.New("loadtest: viewers need >= 0 and a URL")
	}
	if o.PerAddr <= 0 {
		o.PerAddr = d.PerAddr
	}
	if o.DialConcurrency <= 0 {
		o.DialConcurrency = d.DialConcurrency
	}
	if o.DialPerAddr <= 0 {
		o.DialPerAddr = d.DialPerAddr
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = d.HandshakeTimeout
	}
	if o.TickMetric == "" {
		o.TickMetric = d.TickMetric
	}
	if o.NamePrefix == "" {
		o.NamePrefix = d.NamePrefix
	}
	if o.SpectatorUser == "" {
		o.SpectatorUser = d.SpectatorUser
	}
	if o.DeathMarker == "" {
		o.DeathMarker = d.DeathMarker
	}
	return nil
}
