package loadtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// maxScrape bounds the bytes read from a metrics endpoint.
const maxScrape = 64 << 20

// scrape fetches a metrics endpoint and returns its samples, flattened the
// way Prometheus stores them: a histogram becomes its _bucket (label le),
// _sum and _count series, a summary its quantile series, _sum and _count.
func scrape(ctx context.Context, url string) (model.Vector, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	// The text format; a server that answers in protobuf anyway is
	// decoded as such (ResponseFormat).
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("metrics: %s", resp.Status)
	}
	ss, err := decodeMetrics(io.LimitReader(resp.Body, maxScrape), expfmt.ResponseFormat(resp.Header))
	if err != nil {
		return nil, fmt.Errorf("metrics: %s: %w", url, err)
	}
	return ss, nil
}

// decodeMetrics reads a whole exposition in format f (FmtUnknown is read
// as text). An exposition that does not parse is an error: the daemon's
// exporter writes none, so one means the URL is not what it should be.
func decodeMetrics(r io.Reader, f expfmt.Format) (model.Vector, error) {
	dec := expfmt.SampleDecoder{
		Dec:  expfmt.NewDecoder(r, f),
		Opts: &expfmt.DecodeOptions{},
	}
	var all model.Vector
	// One metric family per Decode; the input is bounded, and so is this.
	for range maxScrape {
		var v model.Vector
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return all, nil
		}
		if err != nil {
			return nil, err
		}
		all = append(all, v...)
	}
	return nil, errors.New("too many metric families")
}

// gauge sums the samples named name (all label sets); ok is false if none.
func gauge(ss model.Vector, name string) (float64, bool) {
	sum, ok := 0.0, false
	for _, s := range ss {
		if string(s.Metric[model.MetricNameLabel]) == name {
			sum += float64(s.Value)
			ok = true
		}
	}
	return sum, ok
}

// histBuckets sums the cumulative buckets of histogram name over all label
// sets, keyed by upper bound.
func histBuckets(ss model.Vector, name string) map[float64]float64 {
	b := map[float64]float64{}
	for _, s := range ss {
		if string(s.Metric[model.MetricNameLabel]) != name+"_bucket" {
			continue
		}
		le, err := strconv.ParseFloat(string(s.Metric[model.BucketLabel]), 64)
		if err != nil {
			continue
		}
		b[le] += float64(s.Value)
	}
	return b
}

// histQuantile estimates quantile q (0..1) of the observations that fell
// between two scrapes of a cumulative histogram (bucket upper bound ->
// cumulative count), interpolating linearly inside the bucket like
// Prometheus' histogram_quantile. It returns NaN without observations.
func histQuantile(q float64, before, after map[float64]float64) float64 {
	les := make([]float64, 0, len(after))
	for le := range after {
		les = append(les, le)
	}
	slices.Sort(les)
	if len(les) == 0 {
		return math.NaN()
	}
	total := after[les[len(les)-1]] - before[les[len(les)-1]]
	if total <= 0 {
		return math.NaN()
	}
	rank := q * total
	prevLE, prevCum := 0.0, 0.0
	for _, le := range les {
		cum := after[le] - before[le]
		if cum >= rank {
			if math.IsInf(le, 1) {
				return prevLE
			}
			if cum == prevCum {
				return le
			}
			return prevLE + (le-prevLE)*(rank-prevCum)/(cum-prevCum)
		}
		prevLE, prevCum = le, cum
	}
	return prevLE
}

// MetricsStats is what the daemon's metrics endpoint said about the window.
type MetricsStats struct {
	URL        string  `json:"url"`
	Goroutines float64 `json:"goroutines"`
	TickMetric string  `json:"tick_metric"`
	TickP50ms  float64 `json:"tick_p50_ms"`
	TickP99ms  float64 `json:"tick_p99_ms"`
	TickCount  float64 `json:"tick_count"`
	// Frames and bytes the server says it wrote in the window, when it
	// exports snaked_frames_total and snaked_bytes_sent_total.
	FramesSent     float64 `json:"frames_sent,omitempty"`
	BytesSent      float64 `json:"bytes_sent,omitempty"`
	MeanFrameBytes float64 `json:"mean_frame_bytes,omitempty"`
	// Ticks sessions skipped because their writer was busy (latest wins).
	FramesSkipped float64 `json:"frames_skipped,omitempty"`
	// Mean wall time of one frame's rendering and of its write, in the
	// window (snaked_render_seconds and snaked_write_seconds): where a
	// session's time goes, read without a profiler.
	RenderUs float64 `json:"render_us,omitempty"`
	WriteUs  float64 `json:"write_us,omitempty"`
	// Mean CPU time (the rendering thread's) of the frames the server
	// sampled for it in the window (snaked_render_cpu_seconds): unlike the
	// wall times, not inflated when the machine is busy, so that runs of
	// two builds compare.
	RenderCPUUs float64 `json:"render_cpu_us,omitempty"`
	// Go heap and goroutine stacks in use at the end (client_golang's Go
	// collector), to tell what the RSS is made of.
	HeapInuseMiB  float64 `json:"heap_inuse_mib,omitempty"`
	StackInuseMiB float64 `json:"stack_inuse_mib,omitempty"`
	Error         string  `json:"error,omitempty"`
}

// metricsStats compares two scrapes taken at the start and end of the
// window. The tick metric may be a histogram (seconds) or a summary with
// quantile labels.
func metricsStats(url, tick string, before, after model.Vector) MetricsStats {
	m := MetricsStats{URL: url, TickMetric: tick, TickP50ms: math.NaN(), TickP99ms: math.NaN()}
	m.Goroutines, _ = gauge(after, "go_goroutines")
	f1, ok1 := gauge(after, "snaked_frames_total")
	b1, ok2 := gauge(after, "snaked_bytes_sent_total")
	if ok1 && ok2 {
		f0, _ := gauge(before, "snaked_frames_total")
		b0, _ := gauge(before, "snaked_bytes_sent_total")
		m.FramesSent, m.BytesSent = f1-f0, b1-b0
		if m.FramesSent > 0 {
			m.MeanFrameBytes = m.BytesSent / m.FramesSent
		}
	}
	if v, ok := gauge(after, "go_memstats_heap_inuse_bytes"); ok {
		m.HeapInuseMiB = v / (1 << 20)
	}
	if v, ok := gauge(after, "go_memstats_stack_inuse_bytes"); ok {
		m.StackInuseMiB = v / (1 << 20)
	}
	if k1, ok := gauge(after, "snaked_frames_skipped_total"); ok {
		k0, _ := gauge(before, "snaked_frames_skipped_total")
		m.FramesSkipped = k1 - k0
	}
	m.RenderUs = 1e6 * meanDelta(before, after, "snaked_render_seconds")
	m.WriteUs = 1e6 * meanDelta(before, after, "snaked_write_seconds")
	m.RenderCPUUs = 1e6 * meanDelta(before, after, "snaked_render_cpu_seconds")
	if b := histBuckets(after, tick); len(b) > 0 {
		a0 := histBuckets(before, tick)
		m.TickP50ms = 1000 * histQuantile(0.50, a0, b)
		m.TickP99ms = 1000 * histQuantile(0.99, a0, b)
		c1, _ := gauge(after, tick+"_count")
		c0, _ := gauge(before, tick+"_count")
		m.TickCount = c1 - c0
		return m.finite()
	}
	for _, s := range after {
		if string(s.Metric[model.MetricNameLabel]) != tick {
			continue
		}
		switch s.Metric[model.QuantileLabel] {
		case "0.5":
			m.TickP50ms = 1000 * float64(s.Value)
		case "0.99":
			m.TickP99ms = 1000 * float64(s.Value)
		}
	}
	if math.IsNaN(m.TickP50ms) {
		m.Error = fmt.Sprintf("no histogram or summary named %q", tick)
	}
	return m.finite()
}

// meanDelta is the mean of the observations of histogram or summary name
// between two scrapes (the growth of its _sum over that of its _count); 0
// when there were none.
func meanDelta(before, after model.Vector, name string) float64 {
	c1, ok := gauge(after, name+"_count")
	if !ok {
		return 0
	}
	c0, _ := gauge(before, name+"_count")
	s1, _ := gauge(after, name+"_sum")
	s0, _ := gauge(before, name+"_sum")
	if c1 <= c0 {
		return 0
	}
	return (s1 - s0) / (c1 - c0)
}

// finite replaces NaN (no observations) with 0, which JSON can carry.
func (m MetricsStats) finite() MetricsStats {
	if math.IsNaN(m.TickP50ms) || math.IsNaN(m.TickP99ms) {
		m.TickP50ms, m.TickP99ms = 0, 0
		if m.Error == "" {
			m.Error = "no tick observations in the window"
		}
	}
	return m
}
