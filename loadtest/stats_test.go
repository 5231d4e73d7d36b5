package loadtest

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestPercentileNearestRank(t *testing.T) {
	v := []float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	for _, c := range []struct{ p, want float64 }{
		{0, 10}, {1, 10}, {10, 10}, {11, 20}, {50, 50}, {51, 60}, {95, 100}, {99, 100}, {100, 100},
	} {
		if got := Percentile(v, c.p); got != c.want {
			t.Errorf("Percentile(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if Percentile(nil, 50) != 0 {
		t.Error("empty slice")
	}
	if got := Percentile([]float64{7}, 99); got != 7 {
		t.Errorf("single value: %v", got)
	}
}

func TestSummarize(t *testing.T) {
	d := Summarize([]float64{5, 1, 4, 2, 3})
	if d.Count != 5 || d.Mean != 3 || d.P50 != 3 || d.Max != 5 || d.P99 != 5 {
		t.Fatalf("Summarize = %+v", d)
	}
	if (Summarize(nil) != Dist{}) {
		t.Fatal("empty Summarize not zero")
	}
}

func TestHistogramMatchesExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	h := new(Histogram)
	var exact []float64
	for range 20000 {
		// Mostly ~100 ms with a tail, like frame gaps.
		d := 95*time.Millisecond + time.Duration(rng.ExpFloat64()*float64(8*time.Millisecond))
		if rng.IntN(500) == 0 {
			d = time.Duration(rng.IntN(3000)) * time.Millisecond
		}
		h.Add(d)
		exact = append(exact, ms(d))
	}
	slices.Sort(exact)
	for _, p := range []float64{1, 50, 95, 99, 99.9, 100} {
		got, want := ms(h.Quantile(p)), Percentile(exact, p)
		if got < want || got > want+0.1 {
			t.Errorf("p%v = %.3f ms, exact %.3f ms (resolution 0.1 ms)", p, got, want)
		}
	}
	d := h.Dist()
	if d.Count != len(exact) || d.Max != exact[len(exact)-1] {
		t.Errorf("Dist %+v, want count %d max %v", d, len(exact), exact[len(exact)-1])
	}
}

func TestHistogramOverflowAndEmpty(t *testing.T) {
	h := new(Histogram)
	if h.Quantile(50) != 0 || (h.Dist() != Dist{}) {
		t.Fatal("empty histogram not zero")
	}
	h.Add(-time.Second) // counts as 0
	h.Add(time.Minute)  // beyond the buckets
	if got := h.Quantile(100); got != time.Minute {
		t.Errorf("max quantile %v, want 1m", got)
	}
	if got := h.Quantile(50); got > histRes {
		t.Errorf("p50 %v, want <= %v", got, histRes)
	}
}
