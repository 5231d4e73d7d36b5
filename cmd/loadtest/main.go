// Command loadtest runs a scripted SSH swarm against a snaked daemon and
// reports what its players saw; with -floor it is the bare SSH transport
// floor server instead. See the loadtest package and docs/BENCHMARKS.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"snaked/loadtest"
)

func main() {
	d := loadtest.DefaultOptions()
	o := d
	flag.StringVar(&o.Addr, "addr", d.Addr, "SSH address of the server, or several comma-separated (a cluster's gateways: sessions dealt evenly, each reported); the only addresses dialled")
	flag.IntVar(&o.N, "n", d.N, "sessions to open")
	flag.DurationVar(&o.Ramp, "ramp", d.Ramp, "spread the session starts over this long")
	flag.DurationVar(&o.Duration, "duration", d.Duration, "measure for this long after the ramp")
	flag.Float64Var(&o.SpectatorShare, "spectators", d.SpectatorShare, "share of sessions that spectate (0..1)")
	flag.Float64Var(&o.CheckShare, "check", d.CheckShare, "share of sessions whose screens are checked (0..1)")
	flag.Float64Var(&o.KeyShare, "keys", d.KeyShare, "share of sessions that authenticate with an ed25519 key of their own (0..1); the rest log in keyless")
	pty := flag.String("pty", "", "every session's terminal size, COLSxROWS (default: a mix, mostly 80x24)")
	flag.IntVar(&o.PerAddr, "per-addr", d.PerAddr, "sessions per loopback source address")
	flag.IntVar(&o.DialConcurrency, "dial-concurrency", d.DialConcurrency, "dials in flight at once")
	flag.IntVar(&o.DialPerAddr, "dial-per-addr", d.DialPerAddr, "dials in flight per source address (keep below the server's unauthenticated per-address cap)")
	flag.DurationVar(&o.HandshakeTimeout, "handshake-timeout", d.HandshakeTimeout, "limit from dial to shell, and from shell to first output")
	flag.IntVar(&o.ServerPID, "server-pid", 0, "measure CPU and RSS of this local server process")
	flag.StringVar(&o.MetricsURL, "metrics", "", "Prometheus URL of the server (e.g. http://127.0.0.1:9100/metrics)")
	flag.StringVar(&o.TickMetric, "tick-metric", d.TickMetric, "histogram of the server's tick duration in seconds")
	flag.Uint64Var(&o.Seed, "seed", d.Seed, "seed of the player scripts")
	flag.StringVar(&o.NamePrefix, "name-prefix", d.NamePrefix, "player names are this prefix plus the session index")
	flag.StringVar(&o.SpectatorUser, "spectator-user", d.SpectatorUser, "SSH user that spectates")
	flag.StringVar(&o.DeathMarker, "death-marker", d.DeathMarker, "text only the death screen shows")
	flag.StringVar(&o.BannerMarker, "banner-marker", d.BannerMarker, "text the banner shows (checked screens)")
	flag.IntVar(&o.Viewers, "viewers", 0, "status page viewers to hold open beside the sessions (each loads the page, holds its live stream and fetches each minimap), started over the ramp")
	flag.StringVar(&o.ViewersURL, "viewers-url", "", "the status page the viewers load, e.g. http://127.0.0.1:8080/ (the daemon's -http-addr)")
	jsonPath := flag.String("json", "", "also write the report as JSON to this file")
	htmlPath := flag.String("report", "", "also write the report as a self-contained HTML page with charts (frame gaps, CPU and RSS over time, sessions over time; the floor beside the server with -compare) to this file")
	compare := flag.Bool("compare", false, "then run the same swarm against the transport floor at the measured mean frame size and report the CPU ratio")
	quiet := flag.Bool("q", false, "no progress lines on stderr")
	floor := flag.Bool("floor", false, "run the transport floor server instead of a swarm")
	listen := flag.String("listen", "127.0.0.1:0", "floor: listen address")
	frame := flag.Int("frame", 150, "floor: bytes per frame")
	hz := flag.Int("hz", 10, "floor: frames per second")
	freePort := flag.Bool("free-port", false, "print a free loopback TCP port and exit")
	followers := flag.Int("followers", 0, "run this many headless region followers on -nats instead of a swarm (each stands for a gateway; see -cameras), for -duration once all have a replica")
	natsURL := flag.String("nats", "", "followers: the NATS URL (loopback only)")
	cameras := flag.Int("cameras", 60, "followers: cameras a follower, each an 80x24 terminal following a random live snake")
	cpuProfile := flag.String("cpuprofile", "", "write the swarm's (or the floor's) CPU profile to this file")
	flag.Parse()
	if *pty != "" {
		if _, err := fmt.Sscanf(*pty, "%dx%d", &o.Pty[0], &o.Pty[1]); err != nil {
			fatal(fmt.Errorf("-pty %q: want COLSxROWS, e.g. 200x60", *pty))
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fatal(err)
		}
		defer pprof.StopCPUProfile()
	}

	switch {
	case *freePort:
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fatal(err)
		}
		fmt.Println(l.Addr().(*net.TCPAddr).Port)
		l.Close()
		return
	case *followers > 0:
		r, err := loadtest.Follow(ctx, loadtest.FollowOptions{NATS: *natsURL, N: *followers, Cameras: *cameras, Duration: o.Duration, Seed: o.Seed,
			Ready: func() { fmt.Println(loadtest.FollowersReady) }})
		if err != nil {
			fatal(err)
		}
		fmt.Println(r)
		return
	case *floor:
		f, err := loadtest.StartFloor(loadtest.FloorOptions{Listen: *listen, Frame: *frame, Hz: *hz})
		if err != nil {
			fatal(err)
		}
		fmt.Println(loadtest.FloorReady + f.Addr())
		<-ctx.Done()
		f.Close()
		return
	}

	if !*quiet {
		o.Log = os.Stderr
	}
	rep, err := loadtest.Run(ctx, o)
	if err != nil {
		fatal(err)
	}
	if *compare && ctx.Err() == nil {
		exe, err := os.Executable()
		if err == nil {
			err = loadtest.Compare(ctx, o, rep, exe)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadtest: floor comparison:", err)
		}
	}
	if err := rep.WriteTable(os.Stdout); err != nil {
		fatal(err)
	}
	if *jsonPath != "" {
		if err := rep.WriteJSON(*jsonPath); err != nil {
			fatal(err)
		}
	}
	if *htmlPath != "" {
		if err := rep.WriteHTML(*htmlPath); err != nil {
			fatal(err)
		}
	}
}

func fatal(err error) {
	pprof.StopCPUProfile()
	fmt.Fprintln(os.Stderr, "loadtest:", err)
	os.Exit(1)
}
