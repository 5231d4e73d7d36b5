package cluster

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"snaked/game"
)

// PublisherStats are a Publisher's counters.
type PublisherStats struct {
	Deltas    uint64 // deltas published
	Bytes     uint64 // their bytes
	Snapshots uint64 // snapshots written (one answers every request waiting)
	Dropped   uint64 // snapshot requests dropped (no reply inbox, or too many at once)

	RegionMessages  uint64 // global and region messages published
	RegionBytes     uint64 // their bytes
	RegionSnapshots uint64 // region snapshots written
	RegionDropped   uint64 // region snapshot requests dropped (no reply inbox, a bad region, too many)

	SendWaits uint64 // ticks that waited for the sender, sendDepth ticks behind
}

// Stats returns the counters.
func (p *Publisher) Stats() PublisherStats {
	return PublisherStats{Deltas: p.sent.Load(), Bytes: p.bytes.Load(), Snapshots: p.snaps.Load(), Dropped: p.dropped.Load(),
		RegionMessages: p.reg.sent.Load(), RegionBytes: p.reg.bytes.Load(), RegionSnapshots: p.reg.snaps.Load(), RegionDropped: p.reg.dropped.Load(),
		SendWaits: p.out.waits.Load()}
}

// counter is a Prometheus counter read from f at each scrape.
func counter(name, help string, f func() uint64) prometheus.Collector {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(f()) })
}

// SimCollectors are the metrics of a simulation's link: joins and inputs
// served, messages dropped, gateways' snakes expired, and the stream.
func SimCollectors(s *Sim, p *Publisher) []prometheus.Collector {
	return []prometheus.Collector{
		counter("snaked_cluster_joins_total", "Join requests answered.", func() uint64 { return s.joins.Load() }),
		counter("snaked_cluster_inputs_total", "Player inputs from gateways applied to the world.", func() uint64 { return s.inputs.Load() }),
		counter("snaked_cluster_bad_total", "Link messages that did not decode, dropped.", func() uint64 { return s.bad.Load() }),
		counter("snaked_cluster_foreign_total", "Inputs for a snake the sending gateway does not own, dropped.", func() uint64 { return s.foreign.Load() }),
		counter("snaked_cluster_expired_total", "Snakes removed because their gateway went silent.", func() uint64 { return s.expired.Load() }),
		counter("snaked_cluster_deltas_total", "World deltas published.", func() uint64 { return p.sent.Load() }),
		counter("snaked_cluster_delta_bytes_total", "Bytes of world deltas published.", func() uint64 { return p.bytes.Load() }),
		counter("snaked_cluster_snapshots_total", "World snapshots written for gateways.", func() uint64 { return p.snaps.Load() }),
		counter("snaked_cluster_snapshot_requests_dropped_total", "Snapshot requests dropped.", func() uint64 { return p.dropped.Load() }),
		counter("snaked_cluster_region_messages_total", "Global and region messages published (the deltas' regional form).", func() uint64 { return p.reg.sent.Load() }),
		counter("snaked_cluster_region_bytes_total", "Bytes of global and region messages published.", func() uint64 { return p.reg.bytes.Load() }),
		counter("snaked_cluster_region_snapshots_total", "Region snapshots written for gateways.", func() uint64 { return p.reg.snaps.Load() }),
		counter("snaked_cluster_region_requests_dropped_total", "Region snapshot requests dropped.", func() uint64 { return p.reg.dropped.Load() }),
		p.out.took,
		counter("snaked_cluster_send_waits_total", "Ticks whose publishing waited for the sender, its queue full.", func() uint64 { return p.out.waits.Load() }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "snaked_cluster_send_queued", Help: "Ticks handed to the sender and not yet handed to the NATS connection."},
			func() float64 { return float64(p.out.behind.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "snaked_cluster_gateways", Help: "Gateways heard from within the lease."},
			func() float64 {
				s.mu.Lock()
				defer s.mu.Unlock()
				return float64(len(s.seen))
			}),
	}
}

// ScoreServerCollectors are the metrics of a simulation's scores service.
func ScoreServerCollectors(s *ScoreServer) []prometheus.Collector {
	return []prometheus.Collector{
		counter("snaked_cluster_scores_bad_total", "Scores requests and records that did not decode, dropped.", s.Bad),
		counter("snaked_cluster_scores_asked_total", "Scores questions answered (names, records, leaderboards).", func() uint64 { return s.asked.Load() }),
		counter("snaked_cluster_scores_recorded_total", "Finished games gateways sent, recorded once each.", func() uint64 { return s.records.Load() }),
		counter("snaked_cluster_scores_refused_total", "Finished games a gateway sent for an identity that does not play through it, refused.", func() uint64 { return s.refused.Load() }),
		counter("snaked_cluster_scores_limited_total", "Scores requests dropped: past their gateway's rate, or the pool's queue full.", func() uint64 { return s.limited.Load() }),
	}
}

// Stream is a gateway's follower of the world's stream, as its metrics
// read it: a Follower or a RegionFollower.
type Stream interface {
	Stats() FollowerStats
	Mode() FollowMode
}

// GatewayCollectors are the metrics of a gateway's link: the stream as
// its follower applies it, and the cluster's counts.
func GatewayCollectors(g *Gateway, f Stream) []prometheus.Collector {
	stat := func(get func(s FollowerStats) uint64) func() uint64 { return func() uint64 { return get(f.Stats()) } }
	return []prometheus.Collector{
		counter("snaked_cluster_deltas_applied_total", "World deltas applied to the replica.", stat(func(s FollowerStats) uint64 { return s.Applied })),
		counter("snaked_cluster_gaps_total", "Deltas (or regions' messages) that did not follow the replica (a resync followed).", stat(func(s FollowerStats) uint64 { return s.Gaps })),
		counter("snaked_cluster_foreign_ticks_total", "Ticks of another simulation instance than the replica's, never applied (a resync followed).", stat(func(s FollowerStats) uint64 { return s.Foreign })),
		counter("snaked_cluster_bad_total", "Stream and link messages that did not decode (deltas, snapshots, heartbeats, join answers), dropped.",
			func() uint64 { return f.Stats().Bad + g.bad.Load() }),
		counter("snaked_cluster_leaves_acked_total", "Leaves and join cancels the simulation acknowledged.", func() uint64 { return g.acked.Load() }),
		counter("snaked_cluster_heartbeats_late_total", "Heartbeats that went out more than the lease after the one before (a gateway short of CPU): the simulation may have removed this gateway's snakes.",
			func() uint64 { return g.late.Load() }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "snaked_follow_bytes_total",
			Help:        "Bytes of the world's stream received (deltas or their regional form, and snapshots), by the form followed.",
			ConstLabels: prometheus.Labels{"kind": f.Mode().String()}}, func() float64 { return float64(f.Stats().Bytes) }),
		counter("snaked_cluster_region_snapshots_total", "Region snapshots the replica took in (following regions).", stat(func(s FollowerStats) uint64 { return s.Regions })),
		counter("snaked_cluster_leaves_lost_total", "Leaves the simulation did not acknowledge in time (their snakes may stay until they die).", func() uint64 { return g.lost.Load() }),
		counter("snaked_cluster_snapshots_total", "Snapshots the replica was built from.", stat(func(s FollowerStats) uint64 { return s.Snapshots })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "snaked_cluster_live", Help: "1 while ticks arrive from the simulation, 0 while the world is restarting."},
			func() float64 {
				if g.views.Live(restartingAfter) {
					return 1
				}
				return 0
			}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "snaked_cluster_behind_ticks",
			Help: "Ticks the gateway's views are behind the newest received (about that many, following regions); the banner says catching up from 20."},
			func() float64 { return float64(g.views.Behind()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "snaked_cluster_queued_messages",
			Help: "Stream messages received and not yet applied (deltas; following regions, messages of any kind): a gateway short of CPU falls behind by these."},
			func() float64 { return float64(f.Stats().Queued) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "snaked_cluster_players", Help: "Players on every gateway of the cluster, as heard."},
			func() float64 { p, _ := g.localCounts(); q, _ := g.Others(); return float64(p + q) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "snaked_cluster_spectators", Help: "Spectators on every gateway of the cluster, as heard."},
			func() float64 { _, s := g.localCounts(); _, r := g.Others(); return float64(s + r) }),
	}
}

// Ticks times a simulation's rounds: Step, as a single process's
// snaked_tick_seconds does, the publishing after it (the delta's
// encoding and sending, snapshots when asked), and the whole round, which
// must fit the tick's 100 ms to keep the clock's rate.
type Ticks struct {
	step, publish, round prometheus.Histogram
	dropped              prometheus.Counter
}

// tickBuckets are the buckets of the tick's histograms: 5us .. 19ms by
// factors of 2.5, as the sessions' server has, then every 10 ms to 200 ms
// (a large world's tick against its 100 ms budget), then 0.3, 0.5 and
// 0.75 s.
func tickBuckets() []float64 {
	b := prometheus.ExponentialBuckets(5e-6, 2.5, 10)
	b = append(b, prometheus.LinearBuckets(0.02, 0.01, 19)...)
	return append(b, 0.3, 0.5, 0.75)
}

// NewTicks returns the histograms, empty.
func NewTicks() *Ticks {
	fast := tickBuckets()
	return &Ticks{
		step: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "snaked_tick_seconds", Help: "Time spent in one World.Step.", Buckets: fast}),
		publish: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "snaked_cluster_publish_seconds", Help: "Time to encode one round's delta and its regional form and hand them to the sender (and any snapshot asked for to the writer).", Buckets: fast}),
		round: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "snaked_cluster_round_seconds", Help: "Time of one round of the clock: its steps, then the encoding and the hand-off to the sender.", Buckets: fast}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "snaked_ticks_dropped_total", Help: "Ticks dropped because the loop fell too far behind."}),
	}
}

// Observe records one round of the clock and the time its publishing took.
func (t *Ticks) Observe(r game.Round, publish time.Duration) {
	if r.Steps > 0 {
		per := r.Took.Seconds() / float64(r.Steps)
		for range r.Steps {
			t.step.Observe(per)
		}
	}
	t.dropped.Add(float64(r.Dropped))
	t.publish.Observe(publish.Seconds())
	t.round.Observe((r.Took + publish).Seconds())
}

// Collectors are the histograms and the counter.
func (t *Ticks) Collectors() []prometheus.Collector {
	return []prometheus.Collector{t.step, t.publish, t.round, t.dropped}
}

// WorldCollectors are gauges of the world's population, read from its
// newest view at each scrape.
func WorldCollectors(w *game.World) []prometheus.Collector {
	gauge := func(name, help string, f func(v *game.View) int) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
			v := w.Acquire()
			defer v.Release()
			return float64(f(v))
		})
	}
	return []prometheus.Collector{
		gauge("snaked_world_players", "Snakes driven by people, alive or dead.", func(v *game.View) int { return v.Players }),
		gauge("snaked_world_bots", "Snakes driven by the server.", func(v *game.View) int { return v.Bots }),
		gauge("snaked_world_tick", "The world's newest tick.", func(v *game.View) int { return int(v.Tick) }),
	}
}
