package loadtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"snaked/game"
	"snaked/internal/cluster"
)

// FollowOptions configures headless region followers: each stands for a
// gateway whose sessions' cameras follow random live snakes (bots stand
// in for players), so that the simulation and NATS carry the regions
// that many gateways would ask for, without SSH sessions.
type FollowOptions struct {
	NATS     string        // the NATS URL; must be on loopback
	Prefix   string        // subjects' prefix ("" = cluster.DefaultPrefix)
	N        int           // followers, each on a connection of its own
	Cameras  int           // cameras a follower, each an 80x24 terminal on one snake
	Duration time.Duration // how long to follow once every follower has a replica
	Sync     time.Duration // how long to wait for every follower's first replica
	Seed     uint64
	Ready    func() // if not nil, called as the window starts
}

// FollowersReady is the line bin/loadtest -followers prints as the
// followers' window starts (every follower has its replica).
const FollowersReady = "followers ready"

// FollowReport is what the followers took in over the window.
type FollowReport struct {
	Followers int     // followers that had a replica in the window
	Seconds   float64 // the window
	Bytes     uint64  // stream bytes taken in over the window, all followers
	Applied   uint64  // ticks applied over the window, all followers
	Gaps      uint64  // gaps (each a whole snapshot after it)
	Regions   float64 // regions followed at the end, mean a follower
	Share     float64 // of the world's regions, mean a follower (0..1)
	SyncSec   float64 // from start until the last follower's first replica
}

// String is the report on one line.
func (r FollowReport) String() string {
	per, all := 0.0, 0.0
	if r.Seconds > 0 {
		all = float64(r.Bytes) / r.Seconds
	}
	if r.Followers > 0 {
		per = all / float64(r.Followers)
	}
	return fmt.Sprintf("followers %d: %.0f B/s each (%.1f KB/s all), %d ticks applied, %d gaps, %.1f regions each (%.0f %% of the world), all synced in %.1f s",
		r.Followers, per, all/1000, r.Applied, r.Gaps, r.Regions, 100*r.Share, r.SyncSec)
}

// follower is one headless follower and the snakes its cameras follow.
type follower struct {
	f    *cluster.RegionFollower
	nc   interface{ Close() }
	cams atomic.Pointer[[]game.Camera]
}

// Follow runs o.N region followers until o.Duration has passed after they
// all have a replica (or ctx ends), and reports what they took in.
func Follow(ctx context.Context, o FollowOptions) (FollowReport, error) {
	if err := loopbackURL(o.NATS); err != nil {
		return FollowReport{}, err
	}
	if o.N < 1 || o.N > 1000 || o.Cameras < 1 || o.Cameras > 10000 {
		return FollowReport{}, errors.New("loadtest: followers 1..1000, cameras 1..10000")
	}
	if o.Sync <= 0 {
		o.Sync = time.Minute
	}
	start := time.Now()
	fs := make([]*follower, 0, o.N)
	defer func() {
		for _, x := range fs {
			x.f.Close()
			x.nc.Close()
		}
	}()
	for i := range o.N {
		name := fmt.Sprintf("follow%d", i)
		nc, err := cluster.Connect(cluster.Options{URL: o.NATS, Prefix: o.Prefix, Name: "snaked-loadtest-" + name, Gateway: name})
		if err != nil {
			return FollowReport{}, err
		}
		f, err := cluster.NewRegionFollower(nc, o.Prefix, name, 0, nil)
		if err != nil {
			nc.Close()
			return FollowReport{}, err
		}
		f.Headless() // nothing draws its views
		x := &follower{f: f, nc: nc}
		none := []game.Camera{}
		x.cams.Store(&none)
		f.SetCameras(func(dst []game.Camera) []game.Camera { return append(dst, *x.cams.Load()...) })
		fs = append(fs, x)
	}
	// Cameras are picked once a second: a follower's camera on a snake that
	// died moves to another live one, as a player respawns elsewhere.
	var wg sync.WaitGroup
	pickCtx, stopPicking := context.WithCancel(ctx)
	defer func() { stopPicking(); wg.Wait() }()
	for i, x := range fs {
		wg.Add(1)
		go func(rng *rand.Rand) {
			defer wg.Done()
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				x.pick(rng, o.Cameras)
				select {
				case <-pickCtx.Done():
					return
				case <-t.C:
				}
			}
		}(rand.New(rand.NewPCG(o.Seed, uint64(i))))
	}
	// Wait for every follower's first replica.
	deadline := time.Now().Add(o.Sync)
	for {
		synced := 0
		for _, x := range fs {
			if x.f.Synced() {
				synced++
			}
		}
		if synced == len(fs) {
			break
		}
		if time.Now().After(deadline) {
			return FollowReport{}, fmt.Errorf("loadtest: %d of %d followers had no replica within %v", len(fs)-synced, len(fs), o.Sync)
		}
		select {
		case <-ctx.Done():
			return FollowReport{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	rep := FollowReport{Followers: len(fs), SyncSec: time.Since(start).Seconds()}
	// Two seconds for the cameras' regions to come, then the window.
	select {
	case <-ctx.Done():
		return FollowReport{}, ctx.Err()
	case <-time.After(2 * time.Second):
	}
	before := make([]cluster.FollowerStats, len(fs))
	for i, x := range fs {
		before[i] = x.f.Stats()
	}
	t0 := time.Now()
	if o.Ready != nil {
		o.Ready()
	}
	select {
	case <-ctx.Done():
	case <-time.After(o.Duration):
	}
	rep.Seconds = time.Since(t0).Seconds()
	for i, x := range fs {
		s := x.f.Stats()
		rep.Bytes += s.Bytes - before[i].Bytes
		rep.Applied += s.Applied - before[i].Applied
		rep.Gaps += s.Gaps - before[i].Gaps
		rep.Regions += float64(x.f.Followed()) / float64(len(fs))
	}
	v := fs[0].f.Acquire()
	if n := cluster.Regions(v.W, v.H); n > 0 {
		rep.Share = rep.Regions / float64(n)
	}
	v.Release()
	return rep, nil
}

// pick points the follower's cameras at n live snakes chosen at random,
// keeping the cameras whose snake still lives.
func (x *follower) pick(rng *rand.Rand, n int) {
	v := x.f.Acquire()
	defer v.Release()
	alive := map[game.ID]bool{}
	var live []game.ID
	for i := range v.Snakes {
		if s := &v.Snakes[i]; s.Used && s.Alive {
			alive[s.ID] = true
			live = append(live, s.ID)
		}
	}
	if len(live) == 0 {
		return
	}
	old := *x.cams.Load()
	cams := make([]game.Camera, 0, n)
	for _, c := range old {
		if alive[c.Follow] && len(cams) < n {
			cams = append(cams, c)
		}
	}
	for len(cams) < n {
		cams = append(cams, game.Camera{Follow: live[rng.IntN(len(live))], Cols: 80, Rows: 24})
	}
	x.cams.Store(&cams)
}

// loopbackURL refuses a NATS URL whose host is not a loopback address:
// the followers' traffic stays on this machine.
func loopbackURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "nats" {
		return fmt.Errorf("loadtest: NATS URL %q: want nats://127.x.y.z:PORT", s)
	}
	h := u.Hostname()
	if h != "localhost" && !strings.HasPrefix(h, "127.") && h != "::1" {
		return fmt.Errorf("loadtest: NATS URL %q is not on loopback", s)
	}
	return nil
}
