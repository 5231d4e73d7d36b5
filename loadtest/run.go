package loadtest

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"maps"
	"math"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/common/model"
	"golang.org/x/crypto/ssh"
)

// runner holds the shared state of one swarm run.
type runner struct {
	o   Options
	sem chan struct{} // bounds dials in flight
	// addrSem bounds dials in flight per source address, below the
	// daemon's cap on unauthenticated connections per address.
	addrSem map[netip.Addr]chan struct{}
	wg      sync.WaitGroup
	t0      time.Time
	win0    time.Time // measurement window start (t0 + ramp)
	ctx     context.Context

	gaps     *Histogram // players' frame gaps while alive, inside the window
	specGaps *Histogram // spectators' frame gaps inside the window
	keyFrame *Histogram // checked players' key-to-frame latencies inside the window
	per      []*target  // each server's share, when the swarm has several

	requested, established, cancelled   atomic.Int64
	skippedGaps, checks, screenFailures atomic.Int64
	turns, deaths, respawns             atomic.Int64
	staleRespawns, joins                atomic.Int64
	probesLost                          atomic.Int64 // turns pressed, never seen on screen within a second

	mu            sync.Mutex // guards everything below
	sessions      []*session
	handshakes    []float64
	firstFrames   []float64
	failReasons   map[string]int
	endReasons    map[string]int
	endSamples    []string
	screenReports []string
}

func (r *runner) inWindow(now time.Time) bool {
	return !now.Before(r.win0) && r.ctx.Err() == nil
}

var addrRE = regexp.MustCompile(`\[?[0-9a-fA-F:.]*[0-9]+\]?:[0-9]+|\b\d+\.\d+\.\d+\.\d+\b`)

// reason normalises an error text so that equal causes count together.
func reason(s string) string {
	s = addrRE.ReplaceAllString(s, "ADDR")
	if len(s) > 160 {
		s = s[:160]
	}
	return s
}

func (r *runner) fail(why string) {
	r.mu.Lock()
	r.failReasons[reason(why)]++
	r.mu.Unlock()
}

func (r *runner) unexpectedEnd(why, sample string) {
	r.mu.Lock()
	r.endReasons[reason(why)]++
	if len(r.endSamples) < 5 {
		r.endSamples = append(r.endSamples, sample)
	}
	r.mu.Unlock()
}

func (r *runner) screenProblem(msg string) {
	r.mu.Lock()
	if len(r.screenReports) < 20 {
		r.screenReports = append(r.screenReports, msg)
	}
	r.mu.Unlock()
}

func (r *runner) addHandshake(d time.Duration) {
	r.mu.Lock()
	r.handshakes = append(r.handshakes, ms(d))
	r.mu.Unlock()
}

func (r *runner) addFirstFrame(d time.Duration) {
	r.mu.Lock()
	r.firstFrames = append(r.firstFrames, ms(d))
	r.mu.Unlock()
}

// target is one server of a swarm spread over several, and what its
// sessions saw.
type target struct {
	addr                string
	established, failed atomic.Int64
	gaps                *Histogram // players' frame gaps inside the window
	keyFrame            *Histogram // checked players' key-to-frame latencies
}

// AddrReport is one server's share of a run over several (-addr a,b,...).
type AddrReport struct {
	Addr        string `json:"addr"`
	Established int    `json:"established"`
	Failed      int    `json:"failed"`
	Gap         Dist   `json:"frame_gap_ms"`
	KeyToFrame  Dist   `json:"key_to_frame_ms"`
}

// Report is the outcome of a run. Times are milliseconds unless the name
// says otherwise.
type Report struct {
	Addr            string  `json:"addr"`
	N               int     `json:"n"`
	Players         int     `json:"players"`
	Spectators      int     `json:"spectators"`
	Checked         int     `json:"checked"`
	Keyed           int     `json:"keyed"`        // sessions that authenticate with a public key
	SourceAddrs     int     `json:"source_addrs"` // 0: kernel-chosen
	RampSeconds     float64 `json:"ramp_seconds"`
	DurationSeconds float64 `json:"duration_seconds"`
	WindowSeconds   float64 `json:"window_seconds"` // as measured (shorter when interrupted)
	Interrupted     bool    `json:"interrupted"`

	Requested   int `json:"requested"`
	Established int `json:"established"` // shell open and first bytes received
	Failed      int `json:"failed"`
	Cancelled   int `json:"cancelled"` // still connecting when the run ended
	// Late counts sessions whose first byte came after the window opened
	// (the ramp slipped: dials queued behind slow handshakes).
	Late        int            `json:"late"`
	FailReasons map[string]int `json:"fail_reasons,omitempty"`
	Unexpected  int            `json:"unexpected_disconnects"`
	EndReasons  map[string]int `json:"unexpected_reasons,omitempty"`
	EndSamples  []string       `json:"unexpected_samples,omitempty"`

	Handshake  Dist `json:"handshake_ms"`   // dial to shell reply
	FirstFrame Dist `json:"first_frame_ms"` // dial to the first byte
	Gap        Dist `json:"frame_gap_ms"`   // players while alive, in the window
	SpecGap    Dist `json:"spectator_frame_gap_ms"`
	// KeyToFrame is the checked players' time from a turn's key to the
	// frame that shows the new heading (probe.go); KeyProbesLost counts
	// turns pressed and not seen within a second.
	KeyToFrame    Dist         `json:"key_to_frame_ms"`
	KeyProbesLost int64        `json:"key_probes_lost"`
	PerAddr       []AddrReport `json:"per_addr,omitempty"` // each server's share, when there were several
	// Gaps not counted: across a death or a join screen.
	SkippedGaps int64 `json:"skipped_gaps"`

	BytesPerSec    Dist    `json:"bytes_per_sec"`    // per session over its time in the window
	MeanFrameBytes float64 `json:"mean_frame_bytes"` // window bytes / bursts (coalesced frames count once)
	// SentFrameBytes is the true mean frame size: from the server's
	// metrics, or the floor's configured size; 0 when unknown.
	SentFrameBytes float64 `json:"sent_frame_bytes,omitempty"`
	// ServerUsPerFrame is the server's CPU per frame delivered: CPU time
	// / (window bytes / SentFrameBytes). It does not flatter a server that
	// skips frames, as the plain CPU ratio does.
	ServerUsPerFrame float64 `json:"server_us_per_frame,omitempty"`
	windowBytes      int64
	Frames           int64 `json:"frames"`

	Turns         int64 `json:"turns"`
	Deaths        int64 `json:"deaths"`
	Respawns      int64 `json:"respawns"`
	StaleRespawns int64 `json:"stale_respawns"` // space sent after 2 s without a frame
	JoinScreens   int64 `json:"join_screens"`

	ScreenChecks   int64    `json:"screen_checks"`
	ScreenFailures int64    `json:"screen_failures"`
	ScreenProblems []string `json:"screen_problems,omitempty"`

	Swarm   ProcStats     `json:"swarm"`
	Server  *ProcStats    `json:"server,omitempty"`
	Metrics *MetricsStats `json:"metrics,omitempty"`

	// Series is the run second by second (the ramp included), and
	// GapCDF the players' frame gaps as a cumulative distribution: what
	// WriteHTML draws.
	Series []Sample   `json:"series,omitempty"`
	GapCDF []CDFPoint `json:"frame_gap_cdf,omitempty"`

	// Targets as checked by CheckTargets, filled by WriteJSON.
	Targets []Target `json:"targets,omitempty"`

	// Viewers is the status page viewers' part (Options.Viewers).
	Viewers *ViewerReport `json:"viewers,omitempty"`

	// Filled by Compare: the same swarm against the transport floor.
	Floor         *Report `json:"floor,omitempty"`
	FloorCPURatio float64 `json:"floor_cpu_ratio,omitempty"` // server CPU / floor CPU
	// FloorFrameRatio compares CPU per frame delivered (ServerUsPerFrame).
	FloorFrameRatio float64 `json:"floor_frame_ratio,omitempty"`
}

// Run opens o.N sessions over o.Ramp, keeps them playing for o.Duration
// after the ramp and reports what they saw. It returns early, with a
// report of what was measured, when ctx is cancelled. The error is only
// for options that cannot work. From a test:
//
//	o := loadtest.DefaultOptions()
//	o.Addr, o.N, o.Ramp, o.Duration = addr, 50, time.Second, 5*time.Second
//	rep, err := loadtest.Run(ctx, o) // rep.Failed, rep.Unexpected, rep.Gap.P50, ...
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.fill(); err != nil {
		return nil, err
	}
	addrs := strings.Split(o.Addr, ",")
	loopback4 := true
	for _, a := range addrs {
		host, _, err := net.SplitHostPort(a)
		if err != nil {
			return nil, fmt.Errorf("loadtest: address %q: %w", a, err)
		}
		ip, err := netip.ParseAddr(host)
		loopback4 = loopback4 && err == nil && ip.Is4() && ip.IsLoopback()
	}
	r := &runner{
		o:           o,
		sem:         make(chan struct{}, o.DialConcurrency),
		gaps:        new(Histogram),
		specGaps:    new(Histogram),
		keyFrame:    new(Histogram),
		failReasons: map[string]int{},
		endReasons:  map[string]int{},
		addrSem:     map[netip.Addr]chan struct{}{},
	}
	// Spread source addresses only when every target is IPv4 loopback.
	nAddrs := 0
	if loopback4 {
		nAddrs = Addrs(o.N, o.PerAddr)
	}
	if len(addrs) > 1 {
		r.per = make([]*target, len(addrs))
		for i, a := range addrs {
			r.per[i] = &target{addr: a, gaps: new(Histogram), keyFrame: new(Histogram)}
		}
	}

	rep := &Report{
		Addr:            o.Addr,
		N:               o.N,
		SourceAddrs:     nAddrs,
		RampSeconds:     o.Ramp.Seconds(),
		DurationSeconds: o.Duration.Seconds(),
	}
	nChecked := 0
	if o.CheckShare > 0 {
		nChecked = max(1, int(math.Round(float64(o.N)*o.CheckShare)))
	}
	checkEvery := max(1, o.N/max(nChecked, 1))

	swarm := newProcWatch(0)
	var server *procWatch
	if o.ServerPID > 0 {
		server = newProcWatch(o.ServerPID)
	}
	swarm.base = swarm.sample()
	if server != nil {
		server.base = server.sample()
	}

	r.t0 = time.Now()
	r.win0 = r.t0.Add(o.Ramp)
	runCtx, cancel := context.WithDeadline(ctx, r.win0.Add(o.Duration))
	defer cancel()
	r.ctx = runCtx

	// The dispatcher starts sessions on schedule.
	var sessions []*session
	for i := range o.N {
		s := &session{
			r:      r,
			i:      i,
			events: make(chan event, 4),
			p:      NewPlayer(o.Seed*1_000_003 + uint64(i)),
			addr:   addrs[deal(i, len(addrs))],
		}
		if r.per != nil {
			s.target = r.per[deal(i, len(addrs))]
		}
		sz := ptySizes[i%len(ptySizes)]
		if o.Pty != [2]int{} {
			sz = o.Pty
		}
		s.cols, s.rows = sz[0], sz[1]
		s.spectator = math.Floor(float64(i+1)*o.SpectatorShare) > math.Floor(float64(i)*o.SpectatorShare)
		s.checked = nChecked > 0 && i%checkEvery == 0 && i/checkEvery < nChecked
		if s.spectator {
			s.user = o.SpectatorUser
			rep.Spectators++
		} else {
			s.user = fmt.Sprintf("%s%d", o.NamePrefix, i)
			rep.Players++
		}
		if s.checked {
			rep.Checked++
			if !s.spectator {
				s.pr = &probe{}
			}
		}
		if math.Floor(float64(i+1)*o.KeyShare) > math.Floor(float64(i)*o.KeyShare) {
			var err error
			if s.key, err = newKey(); err != nil {
				return nil, err
			}
			rep.Keyed++
		}
		if nAddrs > 0 {
			s.src = SourceAddr(i, nAddrs)
			if r.addrSem[s.src] == nil {
				r.addrSem[s.src] = make(chan struct{}, o.DialPerAddr)
			}
		}
		sessions = append(sessions, s)
	}
	r.sessions = sessions
	var vw *viewers
	viewed := make(chan struct{})
	if o.Viewers > 0 {
		var err error
		if vw, err = newViewers(r, o.ViewersURL, o.Viewers); err != nil {
			return nil, err
		}
		go func() {
			defer close(viewed)
			vw.run(runCtx, o.Viewers)
		}()
	} else {
		close(viewed)
	}
	dispatched := make(chan struct{})
	go func() {
		defer close(dispatched)
		t := time.NewTimer(0)
		defer t.Stop()
		<-t.C
		for i, s := range sessions {
			at := r.t0.Add(time.Duration(int64(o.Ramp) * int64(i) / int64(o.N)))
			if d := time.Until(at); d > 0 {
				t.Reset(d)
				select {
				case <-t.C:
				case <-runCtx.Done():
					return
				}
			}
			if runCtx.Err() != nil {
				return
			}
			r.wg.Add(1)
			go s.run(runCtx)
		}
	}()

	// Sample both processes every second; scrape metrics at window start.
	var before model.Vector
	var scrapeErr error
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		progress := r.t0
		started := false
		prevSwarm, prevServer := swarm.base, procSample{}
		if server != nil {
			prevServer = server.base
		}
		for {
			now := time.Now()
			if now.After(r.t0) {
				rep.Series = append(rep.Series, r.second(now, swarm, server, &prevSwarm, &prevServer))
			}
			if !started && !now.Before(r.win0) {
				started = true
				swarm.start = swarm.sample()
				if server != nil {
					server.start = server.sample()
				}
				if o.MetricsURL != "" {
					before, scrapeErr = scrape(runCtx, o.MetricsURL)
				}
			}
			if started {
				if vw != nil {
					vw.sample(now)
				}
				for _, w := range []*procWatch{swarm, server} {
					if w != nil {
						if s := w.sample(); s.valid {
							w.maxRSS = max(w.maxRSS, s.rss)
						}
					}
				}
			}
			if o.Log != nil && now.Sub(progress) >= 5*time.Second {
				progress = now
				fmt.Fprintf(o.Log, "loadtest: +%2.0fs requested %d established %d failed %d unexpected %d frames %d\n",
					now.Sub(r.t0).Seconds(), r.requested.Load(), r.established.Load(),
					r.failCount(), r.endCount(), r.gaps.Count()+r.specGaps.Count())
			}
			select {
			case <-runCtx.Done():
				return
			case <-tick.C:
			}
		}
	}()

	<-runCtx.Done()
	winEnd := time.Now()
	<-sampled
	swarm.last = swarm.sample()
	if server != nil {
		server.last = server.sample()
	}
	if !swarm.start.valid { // interrupted during the ramp
		swarm.start = swarm.base
		if server != nil {
			server.start = server.base
		}
	}
	var after model.Vector
	if o.MetricsURL != "" && scrapeErr == nil {
		after, scrapeErr = scrape(context.Background(), o.MetricsURL)
	}
	rep.Interrupted = ctx.Err() != nil
	rep.WindowSeconds = max(0, winEnd.Sub(r.win0).Seconds())

	// Let sessions quit (q, then hang up), bounded; then force the rest.
	<-viewed
	if vw != nil {
		rep.Viewers = vw.report(o.Viewers)
	}
	<-dispatched
	if !waitTimeout(&r.wg, quitWait+3*time.Second) {
		for _, s := range sessions {
			s.hangUp()
		}
		waitTimeout(&r.wg, 5*time.Second)
	}

	r.fill(rep, sessions, winEnd)
	rep.GapCDF = r.gaps.CDF()
	rep.Swarm = swarm.stats(rep.Established)
	if server != nil {
		st := server.stats(rep.Established)
		rep.Server = &st
	}
	if o.MetricsURL != "" {
		m := MetricsStats{URL: o.MetricsURL, TickMetric: o.TickMetric}
		if scrapeErr != nil {
			m.Error = scrapeErr.Error()
		} else {
			m = metricsStats(o.MetricsURL, o.TickMetric, before, after)
		}
		rep.Metrics = &m
		rep.SentFrameBytes = m.MeanFrameBytes
	}
	rep.perFrame()
	return rep, nil
}

// Sample is one second of a run.
type Sample struct {
	T           float64 `json:"t"`              // seconds since the run started
	ServerCPU   float64 `json:"server_cpu"`     // % of a core over the second before; -1 unknown
	ServerRSS   float64 `json:"server_rss_mib"` // -1 unknown
	SwarmCPU    float64 `json:"swarm_cpu"`
	SwarmRSS    float64 `json:"swarm_rss_mib"`
	Established int64   `json:"established"` // sessions that received their first bytes, so far
	Failed      int     `json:"failed"`      // sessions that never got in, so far
	Unexpected  int     `json:"unexpected"`  // sessions the server ended, so far
}

// second samples the processes and the counters at now; prev holds each
// process's previous sample and is updated.
func (r *runner) second(now time.Time, swarm, server *procWatch, prevSwarm, prevServer *procSample) Sample {
	s := Sample{T: now.Sub(r.t0).Seconds(), ServerCPU: -1, ServerRSS: -1,
		Established: r.established.Load(), Failed: r.failCount(), Unexpected: r.endCount()}
	read := func(w *procWatch, prev *procSample) (cpu, rss float64) {
		x := w.sample()
		if !x.valid {
			return -1, -1
		}
		cpu = -1
		if prev.valid && x.at.After(prev.at) {
			cpu = 100 * (x.cpu - prev.cpu).Seconds() / x.at.Sub(prev.at).Seconds()
		}
		*prev = x
		return cpu, mib(x.rss)
	}
	s.SwarmCPU, s.SwarmRSS = read(swarm, prevSwarm)
	if server != nil {
		s.ServerCPU, s.ServerRSS = read(server, prevServer)
	}
	return s
}

// newKey returns a fresh ed25519 key (the swarm's client key, the floor's
// host key): nothing keeps it past the run.
func newKey() (ssh.Signer, error) {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	return ssh.NewSignerFromKey(key)
}

func (r *runner) failCount() int { return r.total(r.failReasons) }

func (r *runner) endCount() int { return r.total(r.endReasons) }

// total sums one of the runner's counts by reason.
func (r *runner) total(byReason map[string]int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range byReason {
		n += c
	}
	return n
}

// fill copies the runner's counters into the report.
func (r *runner) fill(rep *Report, sessions []*session, winEnd time.Time) {
	rep.Requested = int(r.requested.Load())
	rep.Established = int(r.established.Load())
	rep.Cancelled = int(r.cancelled.Load())
	rep.Failed = r.failCount()
	rep.Unexpected = r.endCount()
	r.mu.Lock()
	rep.FailReasons = maps.Clone(r.failReasons)
	rep.EndReasons = maps.Clone(r.endReasons)
	rep.EndSamples = slices.Clone(r.endSamples)
	rep.ScreenProblems = slices.Clone(r.screenReports)
	rep.Handshake = Summarize(slices.Clone(r.handshakes))
	rep.FirstFrame = Summarize(slices.Clone(r.firstFrames))
	r.mu.Unlock()
	rep.Gap = r.gaps.Dist()
	for _, t := range r.per {
		rep.PerAddr = append(rep.PerAddr, AddrReport{Addr: t.addr, Established: int(t.established.Load()),
			Failed: int(t.failed.Load()), Gap: t.gaps.Dist(), KeyToFrame: t.keyFrame.Dist()})
	}
	rep.SpecGap = r.specGaps.Dist()
	rep.KeyToFrame = r.keyFrame.Dist()
	rep.KeyProbesLost = r.probesLost.Load()
	rep.SkippedGaps = r.skippedGaps.Load()
	rep.Turns = r.turns.Load()
	rep.Deaths = r.deaths.Load()
	rep.Respawns = r.respawns.Load()
	rep.StaleRespawns = r.staleRespawns.Load()
	rep.JoinScreens = r.joins.Load()
	rep.ScreenChecks = r.checks.Load()
	rep.ScreenFailures = r.screenFailures.Load()

	var rates []float64
	var bytes, frames int64
	for _, s := range sessions {
		b, f := s.winBytes.Load(), s.winFrames.Load()
		bytes += b
		frames += f
		s.mu.Lock()
		est, closed := s.established, s.closed
		s.mu.Unlock()
		if est.IsZero() {
			continue
		}
		if est.After(r.win0) {
			rep.Late++
		}
		from := est
		if from.Before(r.win0) {
			from = r.win0
		}
		to := winEnd
		if !closed.IsZero() && closed.Before(to) {
			to = closed
		}
		if span := to.Sub(from); span >= time.Second {
			rates = append(rates, float64(b)/span.Seconds())
		}
	}
	rep.BytesPerSec = Summarize(rates)
	rep.Frames = frames
	rep.windowBytes = bytes
	if frames > 0 {
		rep.MeanFrameBytes = float64(bytes) / float64(frames)
	}
}

// perFrame fills ServerUsPerFrame when the server's CPU and the true
// frame size are known.
func (r *Report) perFrame() {
	if r.Server == nil || r.SentFrameBytes <= 0 || r.windowBytes <= 0 {
		return
	}
	frames := float64(r.windowBytes) / r.SentFrameBytes
	r.ServerUsPerFrame = r.Server.CPUSeconds * 1e6 / frames
}

// waitTimeout waits for wg at most d and reports whether it finished.
func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// deal returns the server of session i among n: round robin, shifted by
// one every 7n sessions (each block of 7n splits evenly), so that kinds of
// session that recur with a period (spectators, checked players, terminal
// sizes) spread over the servers instead of all landing on one.
func deal(i, n int) int { return (i + i/(7*n)) % n }
