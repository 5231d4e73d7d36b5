package loadtest

import (
	"math"
	"slices"
	"sync/atomic"
	"time"
)

// Percentile returns the p-th percentile (0..100) of sorted values using
// the nearest-rank method: the smallest value with at least p % of the
// values at or below it. It returns 0 for an empty slice.
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if p <= 0 {
		return sorted[0]
	}
	if p >= 100 {
		return sorted[n-1]
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}

// Dist summarises a set of values (milliseconds unless said otherwise).
type Dist struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// Summarize computes a Dist over values; values is sorted in place.
func Summarize(values []float64) Dist {
	if len(values) == 0 {
		return Dist{}
	}
	slices.Sort(values)
	sum := 0.0
	for _, v := range values {
		sum += v
	}
	return Dist{
		Count: len(values),
		Mean:  sum / float64(len(values)),
		P50:   Percentile(values, 50),
		P95:   Percentile(values, 95),
		P99:   Percentile(values, 99),
		Max:   values[len(values)-1],
	}
}

// histogram resolution: gaps are counted in 0.1 ms buckets up to 10 s;
// longer gaps land in the last bucket and the exact maximum is kept apart.
const (
	histRes = 100 * time.Microsecond
	histN   = 100_000 // 10 s
)

// Histogram counts durations in fixed 0.1 ms buckets up to 10 s. It is safe
// for concurrent use: every method may be called from any goroutine.
type Histogram struct {
	counts [histN + 1]atomic.Uint64 // last bucket: >= 10 s
	n      atomic.Uint64
	sum    atomic.Int64 // nanoseconds
	max    atomic.Int64 // nanoseconds
}

// Add records one duration; negative durations count as zero.
func (h *Histogram) Add(d time.Duration) {
	if d < 0 {
		d = 0
	}
	i := int(d / histRes)
	if i > histN {
		i = histN
	}
	h.counts[i].Add(1)
	h.n.Add(1)
	h.sum.Add(int64(d))
	for {
		m := h.max.Load()
		if int64(d) <= m || h.max.CompareAndSwap(m, int64(d)) {
			break
		}
	}
}

// Count is the number of durations recorded.
func (h *Histogram) Count() uint64 { return h.n.Load() }

// Quantile returns the duration at percentile p (0..100), nearest rank,
// reported as the upper edge of its bucket (so never below the true value
// by more than the 0.1 ms resolution) and never above the exact maximum.
func (h *Histogram) Quantile(p float64) time.Duration {
	n := h.n.Load()
	if n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(p / 100 * float64(n)))
	if rank < 1 {
		rank = 1
	}
	if rank > n {
		rank = n
	}
	max := time.Duration(h.max.Load())
	var seen uint64
	for i := range h.counts {
		seen += h.counts[i].Load()
		if seen >= rank {
			if i == histN {
				return max
			}
			return min(time.Duration(i+1)*histRes, max)
		}
	}
	return max
}

// Dist summarises the histogram in milliseconds.
func (h *Histogram) Dist() Dist {
	n := h.n.Load()
	if n == 0 {
		return Dist{}
	}
	return Dist{
		Count: int(n),
		Mean:  ms(time.Duration(h.sum.Load() / int64(n))),
		P50:   ms(h.Quantile(50)),
		P95:   ms(h.Quantile(95)),
		P99:   ms(h.Quantile(99)),
		Max:   ms(time.Duration(h.max.Load())),
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// CDFPoint is one point of a cumulative distribution: the share of the
// values at or below a duration.
type CDFPoint struct {
	Ms    float64 `json:"ms"`
	Share float64 `json:"share"` // 0..1
}

// CDF returns the distribution at 40 points a decade from 1 ms to 10 s
// (empty when nothing was recorded).
func (h *Histogram) CDF() []CDFPoint {
	n := h.n.Load()
	if n == 0 {
		return nil
	}
	var out []CDFPoint
	var seen uint64
	next := 0 // buckets counted so far
	for k := 0; k <= 160; k++ {
		edge := time.Duration(math.Round(float64(time.Millisecond) * math.Pow(10, float64(k)/40)))
		upto := min(int(edge/histRes), histN) // buckets below the edge
		for ; next < upto; next++ {
			seen += h.counts[next].Load()
		}
		out = append(out, CDFPoint{Ms: ms(edge), Share: float64(seen) / float64(n)})
	}
	return out
}
