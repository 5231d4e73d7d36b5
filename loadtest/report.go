package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
)

// Compare measures the transport floor in the same run: it starts a floor
// server in a child process (exe is the loadtest command), runs the same
// swarm against it with frames of the mean size rep measured, and attaches
// the floor's report and the server/floor CPU ratio to rep.
func Compare(ctx context.Context, o Options, rep *Report, exe string) error {
	mean := rep.MeanFrameBytes
	if rep.SentFrameBytes > 0 { // the server's own count: exact
		mean = rep.SentFrameBytes
	}
	size := max(16, int(math.Round(mean)))
	fp, err := StartFloorProcess(exe, size, 10)
	if err != nil {
		return err
	}
	defer fp.Stop()
	fo := o
	fo.Addr, fo.ServerPID, fo.MetricsURL, fo.Viewers = fp.Addr, fp.Pid, "", 0
	fr, err := Run(ctx, fo)
	if err != nil {
		return err
	}
	fr.SentFrameBytes = float64(size)
	fr.perFrame()
	rep.Floor = fr
	if rep.Server != nil && fr.Server != nil && fr.Server.CPUPercent > 0 {
		rep.FloorCPURatio = rep.Server.CPUPercent / fr.Server.CPUPercent
	}
	if rep.ServerUsPerFrame > 0 && fr.ServerUsPerFrame > 0 {
		rep.FloorFrameRatio = rep.ServerUsPerFrame / fr.ServerUsPerFrame
	}
	return nil
}

// WriteJSON writes the report as indented JSON to path.
func (r *Report) WriteJSON(path string) error {
	c := *r
	c.Targets = r.CheckTargets()
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// WriteTable prints the report as a table; with a floor run attached, the
// floor's figures stand in a second column.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	cols := []*Report{r}
	head := "metric\tserver"
	if r.Floor != nil {
		cols = append(cols, r.Floor)
		head += "\tfloor"
	}
	fmt.Fprintln(tw, head+"\t")
	row := func(name string, f func(*Report) string) {
		cells := []string{name}
		for _, c := range cols {
			cells = append(cells, f(c))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	d3 := func(d Dist) string {
		if d.Count == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f / %.1f / %.1f / %.1f (n=%d)", d.P50, d.P95, d.P99, d.Max, d.Count)
	}
	row("address", func(c *Report) string { return c.Addr })
	row("sessions (players+spectators, checked)", func(c *Report) string {
		return fmt.Sprintf("%d (%d+%d, %d)", c.N, c.Players, c.Spectators, c.Checked)
	})
	row("source addresses", func(c *Report) string { return fmt.Sprint(c.SourceAddrs) })
	row("sessions with a key (the rest keyless)", func(c *Report) string { return fmt.Sprint(c.Keyed) })
	row("ramp / window s", func(c *Report) string {
		s := fmt.Sprintf("%.0f / %.1f", c.RampSeconds, c.WindowSeconds)
		if c.Interrupted {
			s += " (interrupted)"
		}
		return s
	})
	row("requested / established / failed / cancelled", func(c *Report) string {
		return fmt.Sprintf("%d / %d / %d / %d", c.Requested, c.Established, c.Failed, c.Cancelled)
	})
	row("established after the ramp (late)", func(c *Report) string { return fmt.Sprint(c.Late) })
	row("unexpected disconnects", func(c *Report) string { return fmt.Sprint(c.Unexpected) })
	row("handshake ms p50 / p95 / p99 / max", func(c *Report) string { return d3(c.Handshake) })
	row("first output ms p50 / p95 / p99 / max", func(c *Report) string { return d3(c.FirstFrame) })
	row("frame gap ms p50 / p95 / p99 / max (players)", func(c *Report) string { return d3(c.Gap) })
	row("frame gap ms p50 / p95 / p99 / max (spectators)", func(c *Report) string { return d3(c.SpecGap) })
	row("key to frame ms p50 / p95 / p99 / max (checked players)", func(c *Report) string {
		if c.KeyToFrame.Count == 0 && c.KeyProbesLost == 0 {
			return "-"
		}
		return fmt.Sprintf("%s, %d not seen", d3(c.KeyToFrame), c.KeyProbesLost)
	})
	n := 0
	for _, c := range cols {
		n = max(n, len(c.PerAddr))
	}
	for i := range n {
		row(fmt.Sprintf("server %d of %d: established / failed / gap p50 / p99 / key to frame p50 ms", i+1, n), func(c *Report) string {
			if i >= len(c.PerAddr) {
				return "-"
			}
			a := c.PerAddr[i]
			return fmt.Sprintf("%s: %d / %d / %.1f / %.1f / %.1f (n=%d)", a.Addr, a.Established, a.Failed, a.Gap.P50, a.Gap.P99,
				a.KeyToFrame.P50, a.KeyToFrame.Count)
		})
	}
	if r.Viewers != nil {
		row("page viewers: streams min / max / refused; events, polls, minimaps; errors", func(c *Report) string {
			v := c.Viewers
			if v == nil {
				return "-"
			}
			return fmt.Sprintf("%d: %d / %d / %d; %d, %d, %d; %d", v.N, v.MinStreams, v.MaxStreams, v.Refused, v.Events, v.Polls, v.Minimaps, v.Errors)
		})
		row("page event gap ms p50 / p95 / p99 / max", func(c *Report) string {
			if c.Viewers == nil {
				return "-"
			}
			return d3(c.Viewers.EventGap)
		})
	}
	row("gaps not counted (death, join)", func(c *Report) string { return fmt.Sprint(c.SkippedGaps) })
	row("bytes/s per session mean / p99", func(c *Report) string {
		return fmt.Sprintf("%.0f / %.0f", c.BytesPerSec.Mean, c.BytesPerSec.P99)
	})
	row("mean frame bytes (per burst / as sent)", func(c *Report) string {
		if c.SentFrameBytes > 0 {
			return fmt.Sprintf("%.0f / %.0f", c.MeanFrameBytes, c.SentFrameBytes)
		}
		return fmt.Sprintf("%.0f / -", c.MeanFrameBytes)
	})
	row("turns / deaths / respawns / stale / joins", func(c *Report) string {
		return fmt.Sprintf("%d / %d / %d / %d / %d", c.Turns, c.Deaths, c.Respawns, c.StaleRespawns, c.JoinScreens)
	})
	row("screen checks / failures", func(c *Report) string {
		return fmt.Sprintf("%d / %d", c.ScreenChecks, c.ScreenFailures)
	})
	row("swarm CPU % of a core / RSS MiB", func(c *Report) string {
		return fmt.Sprintf("%.1f / %.0f", c.Swarm.CPUPercent, c.Swarm.RSSMiB)
	})
	row("server CPU % of a core", func(c *Report) string {
		if c.Server == nil {
			return "-"
		}
		if c.Server.Error != "" && c.Server.CPUSeconds == 0 {
			return "error: " + c.Server.Error
		}
		return fmt.Sprintf("%.1f", c.Server.CPUPercent)
	})
	row("server CPU s over the ramp (handshakes and play)", func(c *Report) string {
		if c.Server == nil {
			return "-"
		}
		return fmt.Sprintf("%.2f", c.Server.RampCPUSeconds)
	})
	row("server RSS MiB end / max (KiB per session)", func(c *Report) string {
		if c.Server == nil {
			return "-"
		}
		return fmt.Sprintf("%.0f / %.0f (%.0f)", c.Server.RSSMiB, c.Server.MaxRSSMiB, c.Server.KiBPerSession)
	})
	row("server CPU us per frame delivered", func(c *Report) string {
		if c.ServerUsPerFrame <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f", c.ServerUsPerFrame)
	})
	if r.Metrics != nil {
		row("server goroutines / tick ms p50 / p99", func(c *Report) string {
			m := c.Metrics
			if m == nil {
				return "-"
			}
			if m.Error != "" && m.Goroutines == 0 {
				return "error: " + m.Error
			}
			return fmt.Sprintf("%.0f / %.2f / %.2f", m.Goroutines, m.TickP50ms, m.TickP99ms)
		})
		row("server Go heap / stacks MiB", func(c *Report) string {
			m := c.Metrics
			if m == nil || m.HeapInuseMiB == 0 {
				return "-"
			}
			return fmt.Sprintf("%.0f / %.0f", m.HeapInuseMiB, m.StackInuseMiB)
		})
		row("server render / write us per frame (mean wall time)", func(c *Report) string {
			m := c.Metrics
			if m == nil || m.RenderUs == 0 {
				return "-"
			}
			return fmt.Sprintf("%.1f / %.1f", m.RenderUs, m.WriteUs)
		})
		row("server render CPU us per frame (thread time, sampled)", func(c *Report) string {
			m := c.Metrics
			if m == nil || m.RenderCPUUs == 0 {
				return "-"
			}
			return fmt.Sprintf("%.1f", m.RenderCPUUs)
		})
		row("server frames sent / skipped (latest wins)", func(c *Report) string {
			m := c.Metrics
			if m == nil || m.FramesSent == 0 {
				return "-"
			}
			return fmt.Sprintf("%.0f / %.0f", m.FramesSent, m.FramesSkipped)
		})
	}
	if r.Floor != nil {
		row("server CPU / floor CPU", func(c *Report) string {
			if c != r {
				return ""
			}
			return fmt.Sprintf("%.2fx", c.FloorCPURatio)
		})
		row("server / floor CPU per frame delivered", func(c *Report) string {
			if c != r || c.FloorFrameRatio == 0 {
				return ""
			}
			return fmt.Sprintf("%.2fx", c.FloorFrameRatio)
		})
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, t := range r.CheckTargets() {
		verdict := "ok  "
		if !t.OK {
			verdict = "MISS"
		}
		fmt.Fprintf(w, "target %s %s: %s\n", verdict, t.Name, t.Got)
	}
	for _, c := range cols {
		label := "server"
		if c != r {
			label = "floor"
		}
		list := func(title string, m map[string]int) {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				fmt.Fprintf(w, "%s %s: %dx %s\n", label, title, m[k], k)
			}
		}
		list("failure", c.FailReasons)
		list("unexpected disconnect", c.EndReasons)
		for _, s := range c.EndSamples {
			fmt.Fprintf(w, "%s disconnect sample: %s\n", label, s)
		}
		for _, s := range c.ScreenProblems {
			fmt.Fprintf(w, "%s screen: %s\n", label, s)
		}
		if c.Server != nil && c.Server.Error != "" {
			fmt.Fprintf(w, "%s process: %s\n", label, c.Server.Error)
		}
		if c.Metrics != nil && c.Metrics.Error != "" {
			fmt.Fprintf(w, "%s metrics: %s\n", label, c.Metrics.Error)
		}
	}
	return nil
}

// Target is one of the capacity targets (CheckTargets) checked against a
// report.
type Target struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	Got  string `json:"got"`
}

// CheckTargets checks the report against the capacity targets: no
// join failures or unexpected disconnects, frame gap p50 within 100 +/- 5 ms
// and p99 at most 150 ms, daemon CPU at most 1.5x the floor's (with a floor
// run) and daemon RSS at most 100 KiB per session (with -server-pid).
func (r *Report) CheckTargets() []Target {
	t := []Target{
		{"no failed sessions", r.Failed == 0 && r.Established == r.N, fmt.Sprintf("%d failed, %d/%d established", r.Failed, r.Established, r.N)},
		{"no unexpected disconnects", r.Unexpected == 0, fmt.Sprint(r.Unexpected)},
		{"frame gap p50 100 +/- 5 ms", r.Gap.Count > 0 && math.Abs(r.Gap.P50-100) <= 5, fmt.Sprintf("%.1f ms", r.Gap.P50)},
		{"frame gap p99 <= 150 ms", r.Gap.Count > 0 && r.Gap.P99 <= 150, fmt.Sprintf("%.1f ms", r.Gap.P99)},
	}
	if r.Floor != nil && r.FloorCPURatio > 0 {
		got := fmt.Sprintf("%.2fx", r.FloorCPURatio)
		if r.FloorFrameRatio > 0 {
			got += fmt.Sprintf(" (per frame delivered %.2fx)", r.FloorFrameRatio)
		}
		t = append(t, Target{"server CPU <= 1.5x floor", r.FloorCPURatio <= 1.5, got})
		t = append(t, Target{"frame gap p99 <= floor's", r.Gap.P99 <= r.Floor.Gap.P99, fmt.Sprintf("%.1f vs %.1f ms", r.Gap.P99, r.Floor.Gap.P99)})
	}
	if r.Server != nil && r.Server.Error == "" {
		t = append(t, Target{"server RSS <= 100 KiB/session", r.Server.KiBPerSession <= 100, fmt.Sprintf("%.0f KiB", r.Server.KiBPerSession)})
	}
	return t
}
