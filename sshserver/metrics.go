package sshserver

import (
	"net/http"
	"net/http/pprof"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"snaked/internal/scores"
)

// metrics are the server's Prometheus collectors, on a registry of its own
// so that several servers (tests) can live in one process.
type metrics struct {
	reg *prometheus.Registry

	sessions   *prometheus.GaugeVec   // by kind: player, spectator, joining
	joins      *prometheus.CounterVec // by kind
	rejoins    prometheus.Counter     // players who joined again after the world lost their snake
	rejections *prometheus.CounterVec // by reason
	disconn    *prometheus.CounterVec // by reason
	handshake  *prometheus.CounterVec // failures by stage: error, timeout, evicted
	tick       prometheus.Histogram
	ticksLate  prometheus.Counter
	render     prometheus.Histogram
	renderCPU  prometheus.Histogram
	write      prometheus.Histogram
	bytes      prometheus.Counter
	frames     prometheus.Counter
	skipped    prometheus.Counter
	castFrames prometheus.Counter // frames rendered once for the spectators of a cast
	castSnaps  prometheus.Counter // whole screens sent to spectators joining a cast or behind it
	stalls     prometheus.Counter
	turns      prometheus.Counter // steering keys handed to the world
	dashes     prometheus.Counter
	respawns   prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	fast := prometheus.ExponentialBuckets(5e-6, 2.5, 14) // 5us .. 0.75s
	m.sessions = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "snaked_sessions", Help: "Live sessions by kind (player, spectator, joining).",
	}, []string{"kind"})
	m.joins = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "snaked_joins_total", Help: "Sessions that entered the world, by kind.",
	}, []string{"kind"})
	m.rejoins = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "snaked_rejoins_total", Help: "Players who joined again because the world they played in lost their snake (a restarted simulation).",
	})
	m.rejections = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "snaked_rejections_total", Help: "Connections, channels, requests and joins refused, by reason.",
	}, []string{"reason"})
	m.disconn = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "snaked_disconnects_total", Help: "Sessions ended, by reason.",
	}, []string{"reason"})
	m.handshake = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "snaked_handshake_failures_total", Help: "SSH handshakes that did not complete, by cause.",
	}, []string{"cause"})
	m.tick = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "snaked_tick_seconds", Help: "Time spent in one World.Step.", Buckets: fast,
	})
	m.ticksLate = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "snaked_ticks_dropped_total", Help: "Ticks dropped because the loop fell too far behind.",
	})
	m.render = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "snaked_render_seconds", Help: "Time to render one frame for one session, one frame in " + strconv.Itoa(renderCPUEvery) + " sampled.", Buckets: fast,
	})
	m.renderCPU = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "snaked_render_cpu_seconds", Help: "CPU time (the thread's) to render one frame for one session, one frame in " + strconv.Itoa(cpuEvery) + " sampled.", Buckets: fast,
	})
	m.write = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "snaked_write_seconds", Help: "Time of one frame's channel write, one frame in " + strconv.Itoa(renderCPUEvery) + " sampled.", Buckets: fast,
	})
	m.bytes = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "snaked_bytes_sent_total", Help: "Bytes written to session channels.",
	})
	m.frames = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "snaked_frames_total", Help: "Frames written to sessions.",
	})
	m.castFrames = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "snaked_cast_frames_total", Help: "Frames rendered once for all the spectators who follow the same place on the leaderboard on the same screen.",
	})
	m.castSnaps = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "snaked_cast_snapshots_total", Help: "Whole screens sent to spectators joining a shared stream of frames, or too far behind it.",
	})
	m.skipped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "snaked_frames_skipped_total", Help: "Ticks a session did not draw: its writer was busy (latest wins), or it waited for a view that covers its camera, or no view showed them (every buffer held; a gateway catching up).",
	})
	m.stalls = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "snaked_stall_disconnects_total", Help: "Sessions dropped because a write stalled past the bound.",
	})
	inputs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "snaked_inputs_total", Help: "Player intents handed to the world, by kind (turn, dash, respawn).",
	}, []string{"kind"})
	m.turns = inputs.WithLabelValues("turn")
	m.dashes = inputs.WithLabelValues("dash")
	m.respawns = inputs.WithLabelValues("respawn")
	m.reg.MustRegister(inputs, m.sessions, m.joins, m.rejoins, m.rejections, m.disconn, m.handshake, m.tick, m.ticksLate,
		m.render, m.renderCPU, m.write, m.bytes, m.frames, m.skipped, m.castFrames, m.castSnaps, m.stalls,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// MetricsHeaderWait bounds how long a metrics listener waits for a
// request's header.
const MetricsHeaderWait = 5 * time.Second

// handler serves /metrics and /debug/pprof/.
func (m *metrics) handler() http.Handler { return MetricsHandler(m.reg) }

// MetricsHandler serves g's metrics on /metrics and the runtime's profiles
// on /debug/pprof/ (a cluster's simulation serves its own with it).
func MetricsHandler(g prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// scores exports the scores store's counters.
func (m *metrics) scores(st Scores) { m.reg.MustRegister(ScoresCollectors(st)...) }

// ScoresCollectors are the scores store's metrics: what was recorded,
// written and dropped, database errors, and whether the store works at
// all (an unwritable database leaves the game running without scores).
func ScoresCollectors(st Scores) []prometheus.Collector {
	counter := func(name, help string, f func(scores.Stats) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return float64(f(st.Stats())) })
	}
	return []prometheus.Collector{
		counter("snaked_scores_recorded_total", "Finished games queued for the scores database.", func(s scores.Stats) uint64 { return s.Recorded }),
		counter("snaked_scores_dropped_total", "Finished games not recorded: queue full, or no database.", func(s scores.Stats) uint64 { return s.Dropped }),
		counter("snaked_scores_written_total", "Finished games committed to the scores database.", func(s scores.Stats) uint64 { return s.Written }),
		counter("snaked_scores_errors_total", "Failed scores database operations.", func(s scores.Stats) uint64 { return s.Errors }),
		counter("snaked_scores_invalid_total", "Finished games refused: not storable, or (through a gateway) a player the simulation does not know.", func(s scores.Stats) uint64 { return s.Invalid }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "snaked_scores_enabled", Help: "1 when the scores database is in use, 0 when the game runs without it."},
			func() float64 {
				if st.Stats().Disabled {
					return 0
				}
				return 1
			}),
	}
}
