package loadtest

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

const exposition = `# HELP go_goroutines Number of goroutines.
# TYPE go_goroutines gauge
go_goroutines 42
# TYPE snaked_tick_seconds histogram
snaked_tick_seconds_bucket{le="0.001"} 10
snaked_tick_seconds_bucket{le="0.002"} 50
snaked_tick_seconds_bucket{le="0.004"} 90
snaked_tick_seconds_bucket{le="+Inf"} 100
snaked_tick_seconds_sum 0.2
snaked_tick_seconds_count 100
weird{a="x\"y",b="1,2"} 3 1700000000
# TYPE rpc_seconds summary
rpc_seconds{quantile="0.5"} 0.003
rpc_seconds{quantile="0.99"} 0.009
rpc_seconds_sum 1
rpc_seconds_count 300
snaked_frames_total 1000
snaked_bytes_sent_total 150000
snaked_frames_skipped_total 7
go_memstats_heap_inuse_bytes 2.097152e+06
go_memstats_stack_inuse_bytes 1.048576e+06
`

// series returns the samples named name.
func series(ss model.Vector, name string) []*model.Sample {
	var out []*model.Sample
	for _, s := range ss {
		if string(s.Metric[model.MetricNameLabel]) == name {
			out = append(out, s)
		}
	}
	return out
}

func TestDecodeMetrics(t *testing.T) {
	ss, err := decodeMetrics(strings.NewReader(exposition), expfmt.FmtUnknown)
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := gauge(ss, "go_goroutines"); !ok || g != 42 {
		t.Errorf("go_goroutines %v %v", g, ok)
	}
	if _, ok := gauge(ss, "nope"); ok {
		t.Error("absent metric found")
	}
	if w := series(ss, "weird"); len(w) != 1 || w[0].Metric["a"] != `x"y` || w[0].Metric["b"] != "1,2" || w[0].Value != 3 {
		t.Errorf("line with escaped labels and a timestamp parsed as %v", w)
	}
	b := histBuckets(ss, "snaked_tick_seconds")
	if len(b) != 4 || b[math.Inf(1)] != 100 || b[0.002] != 50 || b[0.001] != 10 {
		t.Errorf("buckets %v", b)
	}
	if c, _ := gauge(ss, "snaked_tick_seconds_count"); c != 100 {
		t.Errorf("histogram count %v", c)
	}
	q := map[model.LabelValue]model.SampleValue{}
	for _, s := range series(ss, "rpc_seconds") {
		q[s.Metric[model.QuantileLabel]] = s.Value
	}
	if len(q) != 2 || q["0.5"] != 0.003 || q["0.99"] != 0.009 {
		t.Errorf("summary quantiles %v", q)
	}
	// A malformed exposition is an error, not a partial read.
	for _, bad := range []string{
		exposition + "broken{a=\"x} 1\n",
		"go_goroutines forty-two\n",
		"# TYPE x histogram\nx_bucket{le=\"1\"} -1\n",
	} {
		if ss, err := decodeMetrics(strings.NewReader(bad), expfmt.FmtText); err == nil {
			t.Errorf("%q decoded: %v", bad, ss)
		}
	}
}

func TestHistQuantile(t *testing.T) {
	after := map[float64]float64{0.001: 10, 0.002: 50, 0.004: 90, math.Inf(1): 100}
	before := map[float64]float64{}
	// rank 50 is the top of the 0.002 bucket.
	if got := histQuantile(0.5, before, after); math.Abs(got-0.002) > 1e-12 {
		t.Errorf("p50 = %v", got)
	}
	// rank 70: halfway through the (0.002, 0.004] bucket.
	if got := histQuantile(0.7, before, after); math.Abs(got-0.003) > 1e-12 {
		t.Errorf("p70 = %v", got)
	}
	// rank 99 is in +Inf: the highest finite bound.
	if got := histQuantile(0.99, before, after); got != 0.004 {
		t.Errorf("p99 = %v", got)
	}
	// Only the observations between the scrapes count.
	if got := histQuantile(0.5, after, after); !math.IsNaN(got) {
		t.Errorf("no observations: %v", got)
	}
	later := map[float64]float64{0.001: 10, 0.002: 50, 0.004: 190, math.Inf(1): 200}
	if got := histQuantile(0.5, after, later); math.Abs(got-0.003) > 1e-12 {
		t.Errorf("delta p50 = %v", got)
	}
}

func TestMetricsStatsSummaryAndScrape(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Write([]byte(exposition))
		case "/html":
			w.Write([]byte("<html>not metrics</html>\n"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ss, err := scrape(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	m := metricsStats(srv.URL, "rpc_seconds", nil, ss)
	if m.Goroutines != 42 || m.TickP50ms != 3 || m.TickP99ms != 9 || m.Error != "" {
		t.Errorf("summary stats %+v", m)
	}
	m = metricsStats(srv.URL, "snaked_tick_seconds", nil, ss)
	if m.TickCount != 100 || math.Abs(m.TickP50ms-2) > 1e-9 {
		t.Errorf("histogram stats %+v", m)
	}
	if m.FramesSent != 1000 || m.BytesSent != 150000 || m.MeanFrameBytes != 150 || m.FramesSkipped != 7 || m.HeapInuseMiB != 2 || m.StackInuseMiB != 1 {
		t.Errorf("frames/bytes sent %+v", m)
	}
	m = metricsStats(srv.URL, "nope", ss, ss)
	if m.Error == "" || m.TickP50ms != 0 {
		t.Errorf("missing metric: %+v", m)
	}
	if _, err := scrape(context.Background(), srv.URL+"/x\x00"); err == nil {
		t.Error("bad URL accepted")
	}
	if _, err := scrape(context.Background(), srv.URL+"/nope"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("404 scraped: %v", err)
	}
	if ss, err := scrape(context.Background(), srv.URL+"/html"); err == nil {
		t.Errorf("an HTML page scraped as %v", ss)
	}
}

// TestScrapeRegistry scrapes what client_golang's handler serves (the
// exporter the daemon uses, same metric names) before and after a window
// and checks the numbers the report takes from it.
func TestScrapeRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	tick := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "snaked_tick_seconds", Buckets: []float64{0.001, 0.002, 0.004},
	})
	frames := prometheus.NewCounter(prometheus.CounterOpts{Name: "snaked_frames_total"})
	bytesSent := prometheus.NewCounter(prometheus.CounterOpts{Name: "snaked_bytes_sent_total"})
	skipped := prometheus.NewCounter(prometheus.CounterOpts{Name: "snaked_frames_skipped_total"})
	sessions := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "snaked_sessions"}, []string{"kind"})
	render := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "snaked_render_seconds", Buckets: []float64{1e-5, 1e-4}})
	write := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "snaked_write_seconds", Buckets: []float64{1e-5, 1e-4}})
	renderCPU := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "snaked_render_cpu_seconds", Buckets: []float64{1e-5, 1e-4}})
	reg.MustRegister(tick, frames, bytesSent, skipped, sessions, render, write, renderCPU, collectors.NewGoCollector())
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	// Before the window: 100 ticks of 0.5 ms, and some traffic.
	for range 100 {
		tick.Observe(0.0005)
	}
	frames.Add(500)
	bytesSent.Add(10_000)
	render.Observe(0.5) // before the window: must not count
	renderCPU.Observe(0.25)
	before, err := scrape(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	// In the window: 40 ticks of 1.5 ms, 40 of 3 ms, 20 of 10 ms.
	for i := range 100 {
		switch {
		case i < 40:
			tick.Observe(0.0015)
		case i < 80:
			tick.Observe(0.003)
		default:
			tick.Observe(0.010)
		}
	}
	frames.Add(2000)
	bytesSent.Add(300_000)
	skipped.Add(3)
	for _, us := range []float64{10, 20, 30, 40} {
		render.Observe(us / 1e6)
		write.Observe(us / 2e6)
	}
	renderCPU.Observe(8e-6) // one frame of the four sampled
	renderCPU.Observe(12e-6)
	sessions.WithLabelValues("player").Set(7)
	sessions.WithLabelValues("spectator").Set(2)
	after, err := scrape(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	m := metricsStats(srv.URL, "snaked_tick_seconds", before, after)
	if m.Error != "" || m.TickCount != 100 {
		t.Errorf("window ticks %+v", m)
	}
	// Rank 50 of the window's 100: 10 of the 40 in (0.002, 0.004] = 2.5 ms.
	// Rank 99 is past 0.004 (+Inf): the highest finite bound, 4 ms.
	if math.Abs(m.TickP50ms-2.5) > 1e-9 || m.TickP99ms != 4 {
		t.Errorf("tick p50 %v p99 %v, want 2.5 and 4", m.TickP50ms, m.TickP99ms)
	}
	if m.FramesSent != 2000 || m.BytesSent != 300_000 || m.MeanFrameBytes != 150 || m.FramesSkipped != 3 {
		t.Errorf("frames/bytes in the window %+v", m)
	}
	if math.Abs(m.RenderUs-25) > 1e-6 || math.Abs(m.WriteUs-12.5) > 1e-6 {
		t.Errorf("render / write us %v / %v, want the window's means 25 / 12.5", m.RenderUs, m.WriteUs)
	}
	if math.Abs(m.RenderCPUUs-10) > 1e-6 {
		t.Errorf("render CPU us %v, want the window's mean of the samples, 10", m.RenderCPUUs)
	}
	if m.Goroutines < 1 || m.HeapInuseMiB <= 0 || m.StackInuseMiB <= 0 {
		t.Errorf("Go collector %+v", m)
	}
	if g, ok := gauge(after, "snaked_sessions"); !ok || g != 9 {
		t.Errorf("sessions summed over kinds: %v %v", g, ok)
	}
}
