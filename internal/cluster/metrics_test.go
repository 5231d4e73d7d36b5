package cluster

import (
	"math"
	"testing"
	"time"

	"snaked/game"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestTicksRound: a round's histogram takes its steps and its publishing
// together, once a round, while the step's takes each step.
func TestTicksRound(t *testing.T) {
	tk := NewTicks()
	tk.Observe(game.Round{Tick: 7, Steps: 2, Took: 60 * time.Millisecond}, 30*time.Millisecond)
	tk.Observe(game.Round{Tick: 8, Steps: 1, Took: 20 * time.Millisecond}, 5*time.Millisecond)
	reg := prometheus.NewRegistry()
	reg.MustRegister(tk.Collectors()...)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*dto.Histogram{}
	for _, f := range fams {
		if h := f.GetMetric()[0].GetHistogram(); h != nil {
			got[f.GetName()] = h
		}
	}
	for _, c := range []struct {
		name  string
		count uint64
		sum   float64
	}{
		{"snaked_tick_seconds", 3, 0.080},
		{"snaked_cluster_publish_seconds", 2, 0.035},
		{"snaked_cluster_round_seconds", 2, 0.115},
	} {
		h := got[c.name]
		if h == nil {
			t.Fatalf("no histogram %s among %d families", c.name, len(fams))
		}
		if h.GetSampleCount() != c.count || math.Abs(h.GetSampleSum()-c.sum) > 1e-9 {
			t.Errorf("%s: %d samples summing to %g, want %d summing to %g", c.name, h.GetSampleCount(), h.GetSampleSum(), c.count, c.sum)
		}
	}
}
