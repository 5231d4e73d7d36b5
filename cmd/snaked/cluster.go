package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"snaked/game"
	"snaked/internal/cluster"
	"snaked/internal/scores"
	"snaked/sshserver"
)

// metricsCloseWait bounds the metrics listener's shutdown.
const metricsCloseWait = 2 * time.Second

// runSim runs the simulation of a cluster: the world, its clock, the bots;
// its deltas and snapshots go out over NATS, joins and inputs come in. No
// SSH listener. It runs until a signal.
func runSim(cfg config, log *slog.Logger, stdout, stderr io.Writer) int {
	// A new world's snake IDs start from a random generation, so none
	// repeats one of the last world's that a gateway may still hold.
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		fmt.Fprintln(stderr, "snaked:", err)
		return 1
	}
	cfg.World.IDBase = binary.LittleEndian.Uint32(b[:])
	cfg.World.LazyPixels = true // nothing draws from the simulation's views; snapshots ask for their pixels
	world, err := game.New(cfg.World)
	if err != nil {
		fmt.Fprintln(stderr, "snaked:", err)
		return 2
	}
	opts := cfg.NATS
	var embedded *server.Server // the embedded NATS, when the sim runs one
	if cfg.NATSEmbed != "" {
		auth := cluster.Auth{Prefix: opts.Prefix, User: opts.User, Password: opts.Password}
		if cfg.NATSUsers != "" {
			us, err := cluster.ReadUsers(cfg.NATSUsers)
			if err != nil {
				fmt.Fprintln(stderr, "snaked:", err)
				return 2
			}
			auth = cluster.Auth{Users: us, Prefix: opts.Prefix}
			for _, u := range us {
				if u.Role == cluster.RoleSim { // the sim connects as its own user
					opts.User, opts.Password = u.Name, u.Password
				}
			}
			if strings.HasPrefix(opts.Password, "$2") {
				fmt.Fprintln(stderr, "snaked: -nats-users: the sim user's password must be plain (the sim logs in with it); gateways' may be bcrypt hashes")
				return 2
			}
		}
		ns, err := cluster.Embed(cfg.NATSEmbed, auth)
		if err != nil {
			fmt.Fprintln(stderr, "snaked:", err)
			return 1
		}
		defer ns.Shutdown()
		opts.URL = ns.ClientURL()
		embedded = ns
	}
	opts.Name, opts.Log = "snaked-sim", log
	nc, err := cluster.Connect(opts)
	if err != nil {
		fmt.Fprintln(stderr, "snaked:", err)
		return 1
	}
	defer nc.Close()
	st, closeScores := openScores(cfg, log)
	defer closeScores()
	simOpts := []cluster.SimOption{cluster.WithSimLog(log)}
	if st != nil { // every join's name is checked against the claims here
		simOpts = append(simOpts, cluster.WithNames(func(ctx context.Context, name, key string) (scores.Holding, error) {
			return st.Holding(ctx, name, key, time.Now())
		}))
	}
	if cfg.SpawnNear {
		simOpts = append(simOpts, cluster.WithGroups())
	}
	sim, err := cluster.NewSim(nc, world, opts.Prefix, 0, simOpts...)
	if err != nil {
		fmt.Fprintln(stderr, "snaked:", err)
		return 1
	}
	defer sim.Close()
	reg := prometheus.NewRegistry()
	ss, err := cluster.ServeScores(nc, opts.Prefix, st, sim) // a nil st tells the gateways scores are off
	if err != nil {
		fmt.Fprintln(stderr, "snaked:", err)
		return 1
	}
	defer ss.Close()
	reg.MustRegister(cluster.ScoreServerCollectors(ss)...)
	if st != nil {
		reg.MustRegister(sshserver.ScoresCollectors(st)...)
	}
	pub, err := cluster.NewPublisher(nc, world, opts.Prefix, sim.Instance()) // before the clock: between Steps
	if err != nil {
		fmt.Fprintln(stderr, "snaked:", err)
		return 1
	}
	defer pub.Close()
	ticks := cluster.NewTicks()
	reg.MustRegister(ticks.Collectors()...)
	reg.MustRegister(cluster.SimCollectors(sim, pub)...)
	reg.MustRegister(cluster.WorldCollectors(world)...)
	if embedded != nil {
		reg.MustRegister(cluster.NATSCollectors(embedded)...)
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if a := cfg.Server.MetricsAddr; a != "" {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			fmt.Fprintln(stderr, "snaked: metrics:", err)
			return 1
		}
		hs := &http.Server{Handler: sshserver.MetricsHandler(reg), ReadHeaderTimeout: sshserver.MetricsHeaderWait}
		served := make(chan struct{})
		go func() {
			defer close(served)
			if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("metrics", "err", err)
			}
		}()
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), metricsCloseWait)
			defer cancel()
			_ = hs.Shutdown(ctx)
			<-served
		}()
		fmt.Fprintf(stdout, "metrics on http://%s/metrics\n", ln.Addr())
	}
	fmt.Fprintf(stdout, "snaked sim: world %dx%d, bots fill to %d snakes, at least %d bots\nnats %s (prefix %s)\n",
		cfg.World.W, cfg.World.H, cfg.World.BotTarget, cfg.World.Bots, opts.URL, opts.Prefix)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	game.Clock{Hold: pub.Rounds(), OnRound: func(r game.Round) {
		t0 := time.Now()
		if err := pub.Ticked(); err != nil {
			log.Error("publish tick", "err", err)
		}
		ticks.Observe(r, time.Since(t0))
	}}.Run(ctx, world)
	world.Close() // its step workers, on the goroutine that stepped it
	log.Info("bye")
	return 0
}

// gatewayLink is a gateway's link to its simulation: the world streamed
// in (the follower, which signals wake at each view), joins and inputs
// sent out (the gateway: the server's world and its cluster), and the
// scores asked of the simulation.
type gatewayLink struct {
	nc     *nats.Conn
	name   string // the gateway's name on the link
	wake   *sshserver.Wake
	f      follower
	rf     *cluster.RegionFollower // f, when it follows regions; else nil
	gw     *cluster.Gateway
	scores *cluster.RemoteScores
}

// follower is a gateway's follower of the world: a cluster.Follower or a
// cluster.RegionFollower.
type follower interface {
	cluster.Views
	cluster.Stream
	Close()
}

// startGateway connects a gateway to the simulation named by cfg, in the
// order each part needs the last: the Wake the server will draw at, the
// follower that signals it, the gateway on the follower's views, the
// remote scores under the gateway's name. The server comes last (main).
func startGateway(cfg config, log *slog.Logger) (*gatewayLink, error) {
	opts := cfg.NATS
	name, err := cluster.GatewayName(cfg.GatewayName, opts.User)
	if err != nil {
		return nil, err
	}
	opts.Name, opts.Log, opts.Wait, opts.Gateway = "snaked-gateway-"+name, log, true, name
	nc, err := cluster.Connect(opts)
	if err != nil {
		return nil, err
	}
	l := &gatewayLink{nc: nc, name: name, wake: sshserver.NewWake()}
	if cfg.Follow == cluster.FollowRegions {
		l.rf, err = cluster.NewRegionFollower(nc, opts.Prefix, name, cfg.FollowMaxPixels, l.wake.Tick)
		l.f = l.rf
	} else {
		l.f, err = cluster.NewFollower(nc, opts.Prefix, name, cfg.FollowMaxPixels, l.wake.Tick)
	}
	if err != nil {
		nc.Close()
		return nil, err
	}
	l.gw, err = cluster.NewGateway(nc, opts.Prefix, name, l.f, 0, cluster.WithGatewayLog(log))
	if err != nil {
		l.f.Close()
		nc.Close()
		return nil, err
	}
	l.scores = cluster.NewRemoteScores(nc, opts.Prefix, name, l.gw.ID())
	return l, nil
}

// configure sets up sc for a server of this gateway: its cluster, the Wake it
// draws at, the simulation's scores and the link's metrics; following
// regions, which views cover a camera.
func (l *gatewayLink) configure(sc *sshserver.Config) {
	sc.Cluster, sc.Wake, sc.Scores = l.gw, l.wake, l.scores
	sc.Collectors = append(sc.Collectors, cluster.GatewayCollectors(l.gw, l.f)...)
	if l.rf != nil {
		sc.Coverage = l.rf
	}
}

// serve tells a follower of regions where srv's sessions look.
func (l *gatewayLink) serve(srv *sshserver.Server) {
	if l.rf == nil {
		return
	}
	l.rf.SetCameras(srv.Cameras)
}

func (l *gatewayLink) close() {
	l.scores.Close()
	l.gw.Close()
	l.f.Close()
	l.nc.Close()
}
