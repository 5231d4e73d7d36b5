package loadtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"os"
	"strconv"
	"strings"
)

// WriteHTML writes the report as one self-contained HTML file (inline
// SVG, no scripts, nothing fetched): the players' frame-gap distribution,
// the server's and the swarm's CPU and the server's RSS over time, and
// sessions established, failed and ended over time, for the server and,
// when Compare ran, the transport floor side by side; then the table and
// the report as JSON.
func (r *Report) WriteHTML(path string) error {
	var b bytes.Buffer
	b.WriteString("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>snaked loadtest</title>\n<style>" +
		"body{font:14px system-ui,sans-serif;margin:24px;color:#222}h1{font-size:20px}h2{font-size:16px;margin:24px 0 4px}" +
		"svg{background:#fff;border:1px solid #ddd}pre{background:#f6f6f6;padding:8px;overflow:auto}" +
		".charts{display:flex;flex-wrap:wrap;gap:16px}</style></head><body>\n")
	fmt.Fprintf(&b, "<h1>snaked loadtest: %d sessions against %s</h1>\n", r.N, html.EscapeString(r.Addr))
	fmt.Fprintf(&b, "<p>ramp %.0f s, window %.1f s%s.</p>\n", r.RampSeconds, r.WindowSeconds, cond(r.Interrupted, " (interrupted)", ""))

	runs := []struct {
		name string
		rep  *Report
		dash string
	}{{"server", r, ""}}
	if r.Floor != nil {
		runs = append(runs, struct {
			name string
			rep  *Report
			dash string
		}{"floor", r.Floor, "6,4"})
	}
	var gaps, cpu, rss, sess chart
	gaps = chart{id: "gaps", title: "Players' frame gaps: share at or below", x: "ms (log)", y: "share", logX: true, yMax: 1}
	cpu = chart{id: "cpu", title: "CPU, % of one core", x: "s since the first session", y: "%"}
	rss = chart{id: "rss", title: "Resident memory", x: "s since the first session", y: "MiB"}
	sess = chart{id: "sessions", title: "Sessions established, failed, ended by the server", x: "s since the first session", y: "sessions"}
	for _, run := range runs {
		var g []point
		for _, p := range run.rep.GapCDF {
			g = append(g, point{p.Ms, p.Share})
		}
		gaps.add(run.name, "#1f77b4", run.dash, g)
		var sc, wc, sr, est, fail, end []point
		for _, s := range run.rep.Series {
			if s.ServerCPU >= 0 {
				sc = append(sc, point{s.T, s.ServerCPU})
			}
			if s.SwarmCPU >= 0 {
				wc = append(wc, point{s.T, s.SwarmCPU})
			}
			if s.ServerRSS >= 0 {
				sr = append(sr, point{s.T, s.ServerRSS})
			}
			est = append(est, point{s.T, float64(s.Established)})
			fail = append(fail, point{s.T, float64(s.Failed)})
			end = append(end, point{s.T, float64(s.Unexpected)})
		}
		cpu.add(run.name, "#d62728", run.dash, sc)
		cpu.add(run.name+"'s swarm", "#7f7f7f", run.dash, wc)
		rss.add(run.name, "#2ca02c", run.dash, sr)
		sess.add(run.name+" established", "#1f77b4", run.dash, est)
		sess.add(run.name+" failed", "#d62728", run.dash, fail)
		sess.add(run.name+" ended", "#ff7f0e", run.dash, end)
	}
	b.WriteString("<div class=\"charts\">\n")
	for _, c := range []*chart{&gaps, &cpu, &rss, &sess} {
		c.svg(&b)
	}
	b.WriteString("</div>\n<h2>Report</h2>\n<pre>")
	var t bytes.Buffer
	if err := r.WriteTable(&t); err != nil {
		return err
	}
	b.WriteString(html.EscapeString(t.String()))
	b.WriteString("</pre>\n<h2>Data</h2>\n<script type=\"application/json\" id=\"report\">\n")
	c := *r
	c.Targets = r.CheckTargets()
	j, err := json.Marshal(&c)
	if err != nil {
		return err
	}
	// Inside a script element only "</" could end it early.
	b.Write(bytes.ReplaceAll(j, []byte("</"), []byte(`<\/`)))
	b.WriteString("\n</script>\n</body></html>\n")
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func cond(ok bool, a, b string) string {
	if ok {
		return a
	}
	return b
}

type point struct{ x, y float64 }

// line is one series of a chart.
type line struct {
	name, colour, dash string
	pts                []point
}

// chart is a line chart drawn as SVG.
type chart struct {
	id, title, x, y string
	logX            bool
	yMax            float64 // 0: from the data
	lines           []line
}

func (c *chart) add(name, colour, dash string, pts []point) {
	c.lines = append(c.lines, line{name: name, colour: colour, dash: dash, pts: pts})
}

// Chart geometry, in SVG units.
const (
	chartW, chartH           = 560, 300
	padL, padR, padT, padB   = 56, 24, 28, 72
	plotW, plotH             = chartW - padL - padR, chartH - padT - padB
	legendRow, legendPerLine = 16, 2
)

func (c *chart) svg(b *bytes.Buffer) {
	x0, x1, y1 := math.Inf(1), math.Inf(-1), 0.0
	for _, l := range c.lines {
		for _, p := range l.pts {
			x := p.x
			if c.logX {
				if x <= 0 {
					continue
				}
				x = math.Log10(x)
			}
			x0, x1, y1 = math.Min(x0, x), math.Max(x1, x), math.Max(y1, p.y)
		}
	}
	if c.yMax > 0 {
		y1 = c.yMax
	}
	empty := math.IsInf(x0, 1)
	if empty {
		x0, x1 = 0, 1
	}
	if x1 <= x0 {
		x1 = x0 + 1
	}
	y1 = niceCeil(y1)
	fmt.Fprintf(b, "<svg id=%q xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-size=\"11\">\n",
		c.id, chartW, chartH, chartW, chartH)
	fmt.Fprintf(b, "<text x=\"%d\" y=\"18\" font-size=\"13\" font-weight=\"bold\">%s</text>\n", padL, html.EscapeString(c.title))
	sx := func(x float64) float64 { return padL + (x-x0)/(x1-x0)*plotW }
	sy := func(y float64) float64 { return padT + plotH - y/y1*plotH }
	// axes, grid and ticks
	fmt.Fprintf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n", padL, padT, plotW, plotH)
	for i := 0; i <= 4; i++ {
		v := y1 * float64(i) / 4
		y := sy(v)
		fmt.Fprintf(b, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>", padL, padL+plotW, y, y)
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", padL-4, y+4, num(v))
	}
	for _, v := range xTicks(x0, x1, c.logX) {
		x := sx(v)
		label := num(v)
		if c.logX {
			label = num(math.Pow(10, v))
		}
		fmt.Fprintf(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#eee\"/>", x, x, padT, padT+plotH)
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x, padT+plotH+14, label)
	}
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", padL+plotW/2, padT+plotH+30, html.EscapeString(c.x))
	fmt.Fprintf(b, "<text x=\"12\" y=\"%d\" transform=\"rotate(-90 12 %d)\" text-anchor=\"middle\">%s</text>\n",
		padT+plotH/2, padT+plotH/2, html.EscapeString(c.y))
	if empty {
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#999\">no data</text>\n", padL+plotW/2, padT+plotH/2)
	}
	for i, l := range c.lines {
		if len(l.pts) > 0 {
			fmt.Fprintf(b, "<polyline class=\"series\" data-name=%q fill=\"none\" stroke=%q stroke-width=\"1.5\"", l.name, l.colour)
			if l.dash != "" {
				fmt.Fprintf(b, " stroke-dasharray=%q", l.dash)
			}
			b.WriteString(" points=\"")
			for _, p := range l.pts {
				x := p.x
				if c.logX {
					if x <= 0 {
						continue
					}
					x = math.Log10(x)
				}
				fmt.Fprintf(b, "%.1f,%.1f ", sx(x), sy(math.Min(p.y, y1)))
			}
			b.WriteString("\"/>\n")
		}
		// legend below the axis label
		lx := padL + (i%legendPerLine)*(plotW/legendPerLine)
		ly := padT + plotH + 46 + (i/legendPerLine)*legendRow
		fmt.Fprintf(b, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=%q stroke-width=\"2\"", lx, lx+20, ly-4, ly-4, l.colour)
		if l.dash != "" {
			fmt.Fprintf(b, " stroke-dasharray=%q", l.dash)
		}
		fmt.Fprintf(b, "/><text x=\"%d\" y=\"%d\">%s</text>\n", lx+24, ly, html.EscapeString(l.name))
	}
	b.WriteString("</svg>\n")
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten (1 when v <= 0).
func niceCeil(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p*(1+1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// xTicks returns about five tick positions across [x0, x1]: whole decades
// on a log axis (x given as log10), round steps otherwise.
func xTicks(x0, x1 float64, logX bool) []float64 {
	var out []float64
	if logX {
		for d := math.Ceil(x0); d <= x1+1e-9; d++ {
			out = append(out, d)
		}
		return out
	}
	step := niceCeil((x1 - x0) / 5)
	for v := math.Ceil(x0/step) * step; v <= x1+1e-9; v += step {
		out = append(out, v)
	}
	return out
}

// num formats a tick label: no trailing zeros.
func num(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		s = "0"
	}
	return s
}
