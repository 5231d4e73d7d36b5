package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ViewerReport is what the status page viewers (Options.Viewers) saw.
type ViewerReport struct {
	N          int   `json:"n"`
	MaxStreams int64 `json:"max_streams"` // live streams open at once, at most
	MinStreams int64 `json:"min_streams"` // the fewest open at any second of the window
	Refused    int64 `json:"refused"`     // streams the server refused (over its cap); those viewers polled
	Events     int64 `json:"events"`      // status events received in the window
	Polls      int64 `json:"polls"`       // /api/status polls in the window
	Minimaps   int64 `json:"minimaps"`    // minimap images fetched in the window
	Errors     int64 `json:"errors"`      // requests that failed (the run's end aside)
	// EventGap is the time between one viewer's status events in the
	// window: the page's refresh as its viewers get it.
	EventGap Dist `json:"event_gap_ms"`
}

// viewerRetry is how long a viewer waits before it opens a new stream
// after one ended or was refused (the page's EventSource retry), polling
// once meanwhile.
const viewerRetry = 3 * time.Second

// viewerWait bounds each request other than a stream.
const viewerWait = 10 * time.Second

// viewers holds the status page's viewers of a run: each loads the page
// (its HTML, stylesheet and script), then holds its live stream open and
// fetches each new minimap the stream names, as the page does in a
// browser.
type viewers struct {
	r      *runner
	base   *url.URL
	client *http.Client
	gaps   *Histogram

	open, maxOpen                            atomic.Int64
	refused, events, polls, minimaps, errors atomic.Int64
	minOpen                                  int64 // the run's sampler's own: -1 before the window
}

func newViewers(r *runner, base string, n int) (*viewers, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("loadtest: viewers URL %q: want http://host:port/", base)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 2*n + 8, IdleConnTimeout: 30 * time.Second}
	return &viewers{r: r, base: u, client: &http.Client{Transport: tr}, gaps: new(Histogram), minOpen: -1}, nil
}

// run starts n viewers over the ramp and returns when every one has
// stopped, once ctx ends.
func (v *viewers) run(ctx context.Context, n int) {
	var wg sync.WaitGroup
	t := time.NewTimer(0)
	defer t.Stop()
	<-t.C
	for i := range n {
		at := v.r.t0.Add(time.Duration(int64(v.r.o.Ramp) * int64(i) / int64(n)))
		if d := time.Until(at); d > 0 {
			t.Reset(d)
			select {
			case <-t.C:
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() { v.view(ctx) })
	}
	wg.Wait()
	v.client.CloseIdleConnections()
}

// report is the viewers' report; n viewers were asked for.
func (v *viewers) report(n int) *ViewerReport {
	return &ViewerReport{N: n, MaxStreams: v.maxOpen.Load(), MinStreams: max(0, v.minOpen), Refused: v.refused.Load(),
		Events: v.events.Load(), Polls: v.polls.Load(), Minimaps: v.minimaps.Load(), Errors: v.errors.Load(), EventGap: v.gaps.Dist()}
}

// sample notes the streams open at now, in the window (the run's sampler
// calls it once a second); the window's first second is left out, while
// the last viewers of the ramp may still be loading the page.
func (v *viewers) sample(now time.Time) {
	if now.Before(v.r.win0.Add(time.Second)) {
		return
	}
	if n := v.open.Load(); v.minOpen < 0 || n < v.minOpen {
		v.minOpen = n
	}
}

// view is one viewer, until ctx ends.
func (v *viewers) view(ctx context.Context) {
	for _, p := range []string{"/", "/static/status.css", "/static/status.js"} {
		v.fetch(ctx, p)
	}
	minimap := ""
	for ctx.Err() == nil {
		if !v.stream(ctx, &minimap) {
			v.poll(ctx, &minimap)
		}
		t := time.NewTimer(viewerRetry)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
}

// stream reads the live stream until it ends; it reports whether the
// server took it.
func (v *viewers) stream(ctx context.Context, minimap *string) bool {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, v.base.JoinPath("/events").String(), nil)
	resp, err := v.client.Do(req)
	if err != nil {
		v.failed(ctx)
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		v.refused.Add(1)
		return false
	}
	v.maxOpen.Store(max(v.maxOpen.Load(), v.open.Add(1)))
	defer v.open.Add(-1)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 16<<10), 1<<20)
	kind, last := "", time.Time{}
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.HasPrefix(line, []byte("event: ")):
			kind = string(line[len("event: "):])
		case bytes.HasPrefix(line, []byte("data: ")) && kind == "status":
			now := time.Now()
			if v.r.inWindow(now) {
				v.events.Add(1)
				if !last.IsZero() {
					v.gaps.Add(now.Sub(last))
				}
			}
			last = now
			v.status(ctx, line[len("data: "):], minimap)
		}
	}
	return true
}

// poll reads /api/status once, as the page does when it has no stream.
func (v *viewers) poll(ctx context.Context, minimap *string) {
	if b := v.fetch(ctx, "/api/status"); b != nil {
		if v.r.inWindow(time.Now()) {
			v.polls.Add(1)
		}
		v.status(ctx, b, minimap)
	}
}

// status fetches the minimap a status names when it is a new one.
func (v *viewers) status(ctx context.Context, data []byte, minimap *string) {
	var st struct {
		Minimap string `json:"minimap"`
	}
	if json.Unmarshal(data, &st) != nil || st.Minimap == "" || st.Minimap == *minimap {
		return
	}
	*minimap = st.Minimap
	if v.fetch(ctx, st.Minimap) != nil && v.r.inWindow(time.Now()) {
		v.minimaps.Add(1)
	}
}

// fetch GETs path (with its query) and returns the body, or nil when the
// request failed.
func (v *viewers) fetch(ctx context.Context, path string) []byte {
	ctx, cancel := context.WithTimeout(ctx, viewerWait)
	defer cancel()
	p, q, _ := strings.Cut(path, "?")
	u := v.base.JoinPath(p)
	u.RawQuery = q
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	resp, err := v.client.Do(req)
	if err != nil {
		v.failed(ctx)
		return nil
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		v.failed(ctx)
		return nil
	}
	return b
}

// failed counts a failed request, unless the run is ending.
func (v *viewers) failed(ctx context.Context) {
	if v.r.ctx.Err() == nil && ctx.Err() == nil {
		v.errors.Add(1)
	}
}
