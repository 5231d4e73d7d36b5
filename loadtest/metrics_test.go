package loadtest

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
broken{a="x} 1
rpc_seconds{quantile="0.5"} 0.003
rpc_seconds{quantile="0.99"} 0.009
snaked_frames_total 1000
snaked_bytes_sent_total 150000
snaked_frames_skipped_total 7
go_memstats_heap_inuse_bytes 2.097152e+06
go_memstats_stack_inuse_bytes 1.048576e+06
`

func TestParseMetrics(t *testing.T) {
	ss := parseMetrics(strings.NewReader(exposition))
	if g, ok := gauge(ss, "go_goroutines"); !ok || g != 42 {
		t.Errorf("go_goroutines %v %v", g, ok)
	}
	found := false
	for _, s := range ss {
		if s.name == "weird" {
			found = true
			if s.labels["a"] != `x"y` || s.labels["b"] != "1,2" || s.value != 3 {
				t.Errorf("weird parsed as %+v", s)
			}
		}
		if s.name == "broken" {
			t.Errorf("malformed line parsed: %+v", s)
		}
	}
	if !found {
		t.Error("line with escaped labels and a timestamp lost")
	}
	b := histBuckets(ss, "snaked_tick_seconds")
	if len(b) != 4 || b[math.Inf(1)] != 100 || b[0.002] != 50 {
		t.Errorf("buckets %v", b)
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
		w.Write([]byte(exposition))
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
}
