package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"snaked/hostkeys"
)

// config is everything the daemon is started with.
type config struct {
	Addr          string
	StateDir      string
	MaxSessions   int
	MaxPerIP      int
	Bots          int
	WorldW        int
	WorldH        int
	Seed          uint64
	SpectatorUser string
	ShutdownGrace time.Duration
	IdleTimeout   time.Duration
	StallTimeout  time.Duration
	MetricsAddr   string
	JoinHint      string
	LogLevel      slog.Level
}

// envName is the environment twin of a flag: -max-sessions is SNAKED_MAX_SESSIONS.
func envName(flagName string) string {
	return "SNAKED_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// worldSize is a flag.Value for WxH.
type worldSize struct{ w, h *int }

func (s worldSize) String() string {
	if s.w == nil {
		return ""
	}
	return fmt.Sprintf("%dx%d", *s.w, *s.h)
}

func (s worldSize) Set(v string) error {
	a, b, ok := strings.Cut(strings.ToLower(v), "x")
	if !ok {
		return errors.New("want WxH in pixels, e.g. 1024x512")
	}
	w, err1 := strconv.Atoi(a)
	h, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || w < 16 || h < 16 || w > 16384 || h > 16384 {
		return errors.New("want WxH with each side between 16 and 16384 pixels")
	}
	*s.w, *s.h = w, h
	return nil
}

// parseConfig reads flags from args and, for every flag not given there, its
// SNAKED_* environment twin. defW and defH are the world's default size.
func parseConfig(args []string, getenv func(string) string, out io.Writer, defW, defH int) (config, error) {
	c := config{WorldW: defW, WorldH: defH}
	fs := flag.NewFlagSet("snaked", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&c.Addr, "addr", ":2222", "address to listen on for SSH")
	fs.StringVar(&c.StateDir, "state-dir", hostkeys.DefaultDir(), "directory holding the host key (created 0700)")
	fs.IntVar(&c.MaxSessions, "max-sessions", 3000, "most concurrent sessions, players and spectators together")
	fs.IntVar(&c.MaxPerIP, "max-per-ip", 64, "most concurrent connections from one IPv4 address or IPv6 /64")
	fs.IntVar(&c.Bots, "bots", 6, "server-side snakes kept in the world")
	fs.Var(worldSize{&c.WorldW, &c.WorldH}, "world", "world size in pixels, WxH (a cell is 1x2 pixels)")
	fs.Uint64Var(&c.Seed, "seed", 0, "world seed; 0 picks one from the clock")
	fs.StringVar(&c.SpectatorUser, "spectator-user", "watch", "SSH user name that spectates instead of playing")
	fs.DurationVar(&c.ShutdownGrace, "shutdown-grace", 5*time.Second, "countdown shown to players before shutdown")
	fs.DurationVar(&c.IdleTimeout, "afk", 5*time.Minute, "disconnect players who send no input for this long")
	fs.DurationVar(&c.StallTimeout, "stall", 5*time.Second, "disconnect a session whose writes block this long")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", "", "serve Prometheus metrics and pprof here (e.g. 127.0.0.1:9222); empty = off")
	fs.StringVar(&c.JoinHint, "join-hint", "", "how to join, shown in the banner (default: ssh -p PORT localhost)")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	fs.Usage = func() {
		fmt.Fprintf(out, "Usage: snaked [flags]\n\nEvery flag can also be set by its environment twin, e.g. -max-sessions by SNAKED_MAX_SESSIONS.\n\n")
		fs.VisitAll(func(f *flag.Flag) {
			fmt.Fprintf(out, "  -%s (env %s)\n    \t%s (default %q)\n", f.Name, envName(f.Name), f.Usage, f.DefValue)
		})
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || envErr != nil {
			return
		}
		if v := getenv(envName(f.Name)); v != "" {
			if err := fs.Set(f.Name, v); err != nil {
				envErr = fmt.Errorf("%s=%q: %v", envName(f.Name), v, err)
			}
		}
	})
	if envErr != nil {
		return c, envErr
	}
	if err := c.Level(*level); err != nil {
		return c, err
	}
	switch {
	case c.MaxSessions < 1:
		return c, errors.New("-max-sessions must be at least 1")
	case c.MaxPerIP < 1:
		return c, errors.New("-max-per-ip must be at least 1")
	case c.Bots < 0:
		return c, errors.New("-bots must not be negative")
	case c.ShutdownGrace < 0 || c.ShutdownGrace > 10*time.Minute:
		return c, errors.New("-shutdown-grace must be between 0 and 10m")
	case c.IdleTimeout <= 0 || c.StallTimeout <= 0:
		return c, errors.New("-afk and -stall must be positive")
	case c.SpectatorUser == "":
		return c, errors.New("-spectator-user must not be empty")
	}
	return c, nil
}

// Level sets c.LogLevel from its name.
func (c *config) Level(name string) error {
	if err := c.LogLevel.UnmarshalText([]byte(name)); err != nil {
		return fmt.Errorf("-log-level: %v", err)
	}
	return nil
}

// defaultJoinHint is the banner's "how to join" for a daemon listening on
// addr when the operator gave none.
func defaultJoinHint(addr string) string {
	p := "2222"
	if i := strings.LastIndexByte(addr, ':'); i >= 0 && i+1 < len(addr) {
		p = addr[i+1:]
	}
	if p == "22" {
		return "ssh localhost"
	}
	return "ssh -p " + p + " localhost"
}

// spectateHint turns "ssh -p 2222 localhost" into "ssh -p 2222 watch@localhost".
func spectateHint(join, user string) string {
	for i := len(join) - 1; i >= 0; i-- {
		if join[i] == ' ' {
			return join[:i+1] + user + "@" + join[i+1:]
		}
	}
	return user + "@" + join
}
