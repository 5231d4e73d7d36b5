// Command snaked is the SSH snake daemon: it parses its configuration,
// builds the parts of its role (one process: the world, the SSH server and
// the world's clock; a simulation: the world, its clock and the link that
// publishes it; a gateway: the link that follows a world and the SSH
// server on it; either SSH role: the status page, when asked for), each
// with what it needs, and runs until SIGINT or SIGTERM, then shuts down
// within the grace period plus a hard deadline.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"

	"snaked/game"
	"snaked/hostkeys"
	"snaked/internal/scores"
	"snaked/sshserver"
)

// hardDeadline is how long after the shutdown countdown the process may take
// to close everything before it exits regardless.
const hardDeadline = 5 * time.Second

// gcPercent is the GC target the daemon runs with unless GOGC is set. Its
// heap is mostly live per-session state (renderers, SSH buffers), so a
// target tighter than Go's 100 keeps less garbage beside it: less memory
// per session, for a few more collections (docs/BENCHMARKS.md).
const gcPercent = 50

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, err := parseConfig(args, getenv, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "snaked:", err)
		return 2
	}
	if cfg.Version {
		fmt.Fprintln(stdout, "snaked", version())
		return 0
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	if cfg.World.Seed == 0 {
		cfg.World.Seed = uint64(time.Now().UnixNano())
	}
	if cfg.Role == roleSim {
		return runSim(cfg, log, stdout, stderr)
	}

	key, err := hostkeys.Load(cfg.stateDir())
	if err != nil {
		fmt.Fprintln(stderr, "snaked:", err)
		return 1
	}
	if key.Created {
		log.Info("created host key", "path", key.Path)
	}

	var host game.Host
	var world *game.World // nil on a gateway: the world is elsewhere
	var link *gatewayLink
	if cfg.Role == roleGateway {
		if link, err = startGateway(cfg, log); err != nil {
			fmt.Fprintln(stderr, "snaked:", err)
			return 1
		}
		defer link.close()
		host = link.gw
	} else {
		if world, err = game.New(cfg.World); err != nil {
			fmt.Fprintln(stderr, "snaked:", err)
			return 2
		}
		host = world.Host()
	}

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		fmt.Fprintln(stderr, "snaked:", err)
		return 1
	}
	sc := cfg.Server
	switch {
	case link != nil: // the scores live with the simulation
		link.configure(&sc)
	default:
		if st, closeScores := openScores(cfg, log); st != nil {
			sc.Scores = st
			defer closeScores()
		}
	}
	if sc.JoinHint == "" {
		sc.JoinHint = defaultJoinHint(ln.Addr().String())
	}
	sc.HostSigners = []ssh.Signer{key.Signer}
	sc.Logger = log
	srv, err := sshserver.New(sc, host)
	if err != nil {
		ln.Close()
		fmt.Fprintln(stderr, "snaked:", err)
		return 2
	}
	var page *statusPage
	if cfg.HTTPAddr != "" {
		if page, err = newStatusPage(cfg, host, srv, sc, key.Signer.PublicKey(), log); err != nil {
			ln.Close()
			fmt.Fprintln(stderr, "snaked:", err)
			return 1
		}
	}
	if link != nil {
		link.serve(srv)
		fmt.Fprintf(stdout, "snaked gateway %s listening on %s (world from %s, prefix %s, following %s)\nhost key %s\nplay:     %s\nspectate: %s\n",
			link.name, ln.Addr(), cfg.NATS.URL, cfg.NATS.Prefix, cfg.Follow, key.Fingerprint, sc.JoinHint, spectateHint(sc.JoinHint, sc.SpectatorUser))
	} else {
		fmt.Fprintf(stdout, "snaked listening on %s (world %dx%d, bots fill to %d snakes, at least %d bots)\nhost key %s\nplay:     %s\nspectate: %s\n",
			ln.Addr(), cfg.World.W, cfg.World.H, cfg.World.BotTarget, cfg.World.Bots, key.Fingerprint,
			sc.JoinHint, spectateHint(sc.JoinHint, sc.SpectatorUser))
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if page != nil {
		fmt.Fprintf(stdout, "page:     %s\n", page.url)
		defer page.run(ctx)()
	}

	// The world's clock runs until the server has said goodbye: players
	// play through the shutdown countdown.
	clockCtx, stopClock := context.WithCancel(context.Background())
	clockDone := make(chan struct{})
	go func() {
		defer close(clockDone)
		if world != nil { // a gateway's ticks come from its simulation
			game.Clock{OnRound: srv.Ticked}.Run(clockCtx, world)
			world.Close() // its step workers, on the goroutine that stepped it
		}
	}()
	defer func() {
		stopClock()
		<-clockDone
	}()

	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()

	select {
	case err := <-done:
		if err != nil {
			log.Error("server stopped", "err", err)
			return 1
		}
		return 0
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", sc.ShutdownGrace.String())
	stop() // a second signal now kills the process the default way
	select {
	case err := <-done:
		if err != nil {
			log.Error("shutdown", "err", err)
			return 1
		}
		log.Info("bye")
		return 0
	case <-time.After(sc.ShutdownGrace + hardDeadline):
		log.Error("shutdown deadline passed; exiting with sessions still open")
		return 1
	}
}

// openScores opens the scores database the configuration names, if any;
// an unusable one comes back disabled (logged) and keeps trying to open in
// the background, and the game runs without scores meanwhile. The function
// closes it within the hard deadline.
func openScores(cfg config, log *slog.Logger) (*scores.Store, func()) {
	path := cfg.scoresPath()
	if path == "" {
		return nil, func() {}
	}
	st, err := scores.Open(path, scores.Options{Log: log, ClaimTTL: cfg.ClaimTTL, NamesPerKey: cfg.NamesPerKey, ClaimsPerHour: cfg.ClaimsPerHour})
	if err != nil {
		log.Error("scores are off; trying again", "every", scores.DefaultRetryEvery.String(), "path", path, "err", err)
	}
	return st, func() {
		ctx, cancel := context.WithTimeout(context.Background(), hardDeadline)
		defer cancel()
		if err := st.Close(ctx); err != nil {
			log.Error("scores: close", "err", err)
		}
	}
}
