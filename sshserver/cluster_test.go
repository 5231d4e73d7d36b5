package sshserver

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"snaked/internal/cluster"
	"snaked/internal/testkit"
	"snaked/internal/vtmodel"
)

// gatewayHarness is a gateway of an in-process cluster: its own NATS
// connection, a follower of the simulation's stream and a server whose
// sessions read the follower's replica.
type gatewayHarness struct {
	srv *Server
	gw  *cluster.Gateway
	f   *cluster.Follower
	h   *harness
}

var _ Cluster = (*cluster.Gateway)(nil)

// startGateway serves a gateway of the world streamed on url under prefix
// "t", on 127.0.0.1:0, wired as the daemon's gateway role wires one: a
// Wake first, signalled by the follower at each delta applied; the
// gateway on the follower's views; the server on the gateway, as its
// world and its cluster.
func startGateway(t *testing.T, url string, opts ...func(*Config, *nats.Conn, *cluster.Gateway)) *gatewayHarness {
	t.Helper()
	name, err := cluster.GatewayName("", "")
	if err != nil {
		t.Fatal(err)
	}
	nc, err := cluster.Connect(cluster.Options{URL: url, Name: "gateway", Prefix: "t", Gateway: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	g := &gatewayHarness{}
	wake := NewWake()
	g.f, err = cluster.NewFollower(nc, "t", name, 0, wake.Tick)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.f.Close)
	g.gw, err = cluster.NewGateway(nc, "t", name, g.f, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.gw.Close)
	cfg := testConfig(t)
	cfg.Collectors = cluster.GatewayCollectors(g.gw, g.f)
	cfg.Cluster, cfg.Wake = g.gw, wake
	for _, o := range opts {
		o(&cfg, nc, g.gw)
	}
	logs := &testkit.SyncBuf{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	g.srv, err = New(cfg, g.gw)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	g.h = &harness{t: t, srv: g.srv, addr: ln.Addr().String(), logs: logs, cancel: cancel, served: make(chan error, 1)}
	go func() { g.h.served <- g.srv.Serve(ctx, ln) }()
	t.Cleanup(func() { g.h.stop(cfg.ShutdownGrace + 6*time.Second) })
	return g
}

// pixelCell is what a playfield cell shows: two pixels' colours, or a
// text glyph (a name tag, the radar, a hint) that hides them.
type pixelCell struct {
	top, bottom vtmodel.Color
	text        bool
}

// playfield decodes the rows of a screen between its banner (row 0) and
// its status row (the last).
func (tm *term) playfield() [][]pixelCell {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	cols, rows := tm.vt.Size()
	out := make([][]pixelCell, 0, rows-2)
	for y := 1; y < rows-1; y++ {
		row := make([]pixelCell, cols)
		for x := range cols {
			c := tm.vt.Cell(x, y)
			switch c.Ch {
			case ' ':
				row[x] = pixelCell{top: c.BG, bottom: c.BG}
			case '▀':
				row[x] = pixelCell{top: c.FG, bottom: c.BG}
			case '▄':
				row[x] = pixelCell{top: c.BG, bottom: c.FG}
			case '█':
				row[x] = pixelCell{top: c.FG, bottom: c.FG}
			default:
				row[x] = pixelCell{text: true}
			}
		}
		// a space between two text glyphs is text too (the hint's words)
		for x := 1; x+1 < cols; x++ {
			if !row[x].text && row[x-1].text && row[x+1].text {
				row[x].text = true
			}
		}
		out = append(out, row)
	}
	return out
}

// align finds the offset (a's cell x+dx, y+dy is b's cell x, y) at which
// the pixels two screens both show agree, and returns how many cells
// agreed there that are not background, and how many disagreed. Cells
// hidden by text on either screen are left out, and so are a's cells
// showing the colour mine (a player's own head: only she sees it white).
func align(a, b [][]pixelCell, bg, mine vtmodel.Color) (dx, dy, same, differ int) {
	best := -1
	for oy := -len(a) + 1; oy < len(b); oy++ {
		for ox := -len(a[0]) + 1; ox < len(b[0]); ox++ {
			s, d := 0, 0
			for y := range a {
				by := y - oy
				if by < 0 || by >= len(b) {
					continue
				}
				for x := range a[y] {
					bx := x - ox
					if bx < 0 || bx >= len(b[by]) {
						continue
					}
					p, q := a[y][x], b[by][bx]
					switch {
					case p.text || q.text || p.top == mine || p.bottom == mine:
					case p != q:
						d++
					case p.top != bg || p.bottom != bg:
						s++
					}
				}
			}
			if s-d*4 > best {
				best, dx, dy, same, differ = s-d*4, ox, oy, s, d
			}
		}
	}
	return dx, dy, same, differ
}

// settle waits until tm received nothing for quiet (at most 5 s).
func (tm *term) settle(quiet time.Duration) {
	last, since := tm.bytes(), time.Now()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if n := tm.bytes(); n != last {
			last, since = n, time.Now()
		} else if time.Since(since) >= quiet {
			return
		}
	}
}

// TestGatewaysSamePlayfield: an in-process cluster (embedded NATS, one
// simulation stepped by the test, two gateways) with real SSH clients. A
// player on one gateway and a spectator on the other, who follows her,
// see the same playfield: at every tick checked, the pixels their screens
// both show agree cell for cell once aligned (their cameras differ), and
// that overlap holds her whole snake. The banner of each gateway counts
// the cluster: one playing, one watching.
func TestGatewaysSamePlayfield(t *testing.T) {
	ns, err := cluster.Embed("127.0.0.1:0", cluster.Auth{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	snc, err := cluster.Connect(cluster.Options{URL: ns.ClientURL(), Name: "sim"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(snc.Close)
	w := testWorld(t, 0)
	sim, err := cluster.NewSim(snc, w, "t", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	pub, err := cluster.NewPublisher(snc, w, "t", sim.Instance())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pub.Close)
	var tick uint64
	step := func() {
		t.Helper()
		tick++
		w.Step(tick)
		if err := pub.Ticked(); err != nil {
			t.Fatal(err)
		}
	}

	a, b := startGateway(t, ns.ClientURL()), startGateway(t, ns.ClientURL())
	// both followers synced (a snapshot, then deltas)
	synced := func(g *gatewayHarness) bool {
		v := g.f.Acquire()
		defer v.Release()
		return v.Tick == tick && v.W > 0
	}
	for i := 0; i < 100 && !(synced(a) && synced(b)); i++ {
		step()
		time.Sleep(20 * time.Millisecond)
	}
	if !synced(a) || !synced(b) {
		t.Fatal("the gateways never followed the world")
	}

	player := play(t, a.h.dial("alice"), 80, 24)
	watcher := play(t, b.h.dial("watch"), 80, 24)
	// steps until cond holds (the sessions render what each tick brought)
	until := func(what string, cond func() bool) {
		t.Helper()
		for i := 0; i < 200 && !cond(); i++ {
			step()
			time.Sleep(20 * time.Millisecond)
		}
		if !cond() {
			t.Fatalf("never: %s\nplayer:\n%s\nwatcher:\n%s", what, player.screen(), watcher.screen())
		}
	}
	until("alice on the watcher's screen, the cluster counted on both banners", func() bool {
		return strings.Contains(watcher.screen(), "alice") &&
			strings.Contains(player.screen(), "1 playing, 1 watching") && strings.Contains(watcher.screen(), "1 playing, 1 watching")
	})
	player.send("w") // she steers: no hint over the playfield, and a turn to follow

	// the playfield's background (the terminal's default) and the
	// player's own head (bright white), as the renderer draws them
	const bg, ownHead = vtmodel.Default, vtmodel.Color(15)
	for k := range 12 {
		step()
		for _, g := range []*gatewayHarness{a, b} {
			for end := time.Now().Add(5 * time.Second); !synced(g) && time.Now().Before(end); {
				time.Sleep(5 * time.Millisecond)
			}
		}
		info, ok := testkit.SnakeNamed(w, "alice")
		if !ok {
			t.Fatal("alice is not in the world")
		}
		if !info.Alive {
			step() // a new life; nothing to compare this tick
			continue
		}
		// The world holds still until the next step: both screens settle
		// on this tick (a loaded machine may take a while to send them).
		var dx, dy, same, differ int
		for try := 0; try < 40; try++ {
			player.settle(100 * time.Millisecond)
			watcher.settle(100 * time.Millisecond)
			if dx, dy, same, differ = align(player.playfield(), watcher.playfield(), bg, ownHead); differ == 0 && same >= info.Length/2 {
				break
			}
		}
		if differ != 0 || same < info.Length/2 {
			pa, pb := player.playfield(), watcher.playfield()
			for y := range pa {
				for x := range pa[y] {
					if by, bx := y-dy, x-dx; by >= 0 && by < len(pb) && bx >= 0 && bx < len(pb[by]) && pa[y][x] != pb[by][bx] {
						t.Logf("cell %d,%d: player %+v, watcher %+v", x, y, pa[y][x], pb[by][bx])
					}
				}
			}
			t.Fatalf("tick %d (check %d): the two screens differ (offset %d,%d: %d cells agree, %d differ; alice is %d pixels long)\nplayer:\n%s\nwatcher:\n%s",
				tick, k, dx, dy, same, differ, info.Length, player.screen(), watcher.screen())
		}
	}
	if bad := fmt.Sprint(sim.Stats().Bad, sim.Stats().Foreign); bad != "0 0" {
		t.Errorf("the simulation dropped messages (bad, foreign): %s", bad)
	}
}

// TestGatewayJoinFlood: TestJoinFlood through a gateway, whose sessions
// ask the simulation's scores over the link: the flood is paced, a
// keyless client never gets a claimed name, and its owner gets in.
func TestGatewayJoinFlood(t *testing.T) {
	ns, err := cluster.Embed("127.0.0.1:0", cluster.Auth{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	snc, err := cluster.Connect(cluster.Options{URL: ns.ClientURL(), Name: "sim"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(snc.Close)
	w := testWorld(t, 0)
	sim, err := cluster.NewSim(snc, w, "t", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	st := testStore(t)
	ss, err := cluster.ServeScores(snc, "t", st, sim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ss.Close)
	pub, err := cluster.NewPublisher(snc, w, "t", sim.Instance())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pub.Close)
	stop := make(chan struct{})
	ticking := make(chan struct{})
	go func() { // the simulation's clock, as -role sim runs it
		defer close(ticking)
		tk := time.NewTicker(20 * time.Millisecond)
		defer tk.Stop()
		for tick := uint64(1); ; tick++ {
			select {
			case <-stop:
				return
			case <-tk.C:
			}
			w.Step(tick)
			_ = pub.Ticked()
		}
	}()
	t.Cleanup(func() { close(stop); <-ticking })
	var cs *countingScores
	g := startGateway(t, ns.ClientURL(), func(cfg *Config, nc *nats.Conn, gw *cluster.Gateway) {
		rs := cluster.NewRemoteScores(nc, "t", gw.Name(), gw.ID())
		t.Cleanup(rs.Close)
		cs = &countingScores{Scores: rs}
		cfg.Scores = cs
	})
	owner := newSigner(t)
	tm := play(t, g.h.keyedDial("vip", owner), 80, 24)
	tm.waitScreen("1 playing")
	tm.send("q")
	tm.wait()
	floodJoins(t, g.h, cs, "vip", owner)
}
