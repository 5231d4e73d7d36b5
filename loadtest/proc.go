package loadtest

import (
	"math"
	"time"

	"github.com/prometheus/procfs"
)

// procSample is one reading of a process's CPU time and memory.
type procSample struct {
	at    time.Time
	cpu   time.Duration // utime + stime
	rss   int64         // bytes (VmRSS)
	valid bool
}

// readProc reads the CPU time (/proc/PID/stat) and the resident memory
// (VmRSS in /proc/PID/status) of process pid under fs; pid 0 means this
// process.
func readProc(fs procfs.FS, pid int) (procSample, error) {
	s := procSample{at: time.Now()}
	var p procfs.Proc
	var err error
	if pid > 0 {
		p, err = fs.Proc(pid)
	} else {
		p, err = fs.Self()
	}
	if err != nil {
		return s, err
	}
	stat, err := p.Stat()
	if err != nil {
		return s, err
	}
	// CPUTime is in seconds, counted in clock ticks: round off the float.
	s.cpu = time.Duration(math.Round(stat.CPUTime() * float64(time.Second)))
	status, err := p.NewStatus()
	if err != nil {
		return s, err
	}
	s.rss = int64(status.VmRSS)
	s.valid = true
	return s, nil
}

// ProcStats is a process's cost over the measurement window.
type ProcStats struct {
	PID        int     `json:"pid,omitempty"`
	CPUPercent float64 `json:"cpu_percent"` // of one core, averaged over the window
	CPUSeconds float64 `json:"cpu_seconds"` // user+system over the window
	RSSMiB     float64 `json:"rss_mib"`     // at the end of the window
	MaxRSSMiB  float64 `json:"max_rss_mib"` // highest sampled during the window
	BaseRSSMiB float64 `json:"base_rss_mib"`
	// RampCPUSeconds is user+system from before the first session to the
	// window start: every handshake of the ramp, plus the play of the
	// sessions already in.
	RampCPUSeconds float64 `json:"ramp_cpu_seconds"`
	// RSS growth from before the first session to the end of the window,
	// per established session.
	KiBPerSession float64 `json:"kib_per_session,omitempty"`
	Error         string  `json:"error,omitempty"`
}

// procWatch follows one process through a run. Not safe for concurrent
// use: the run samples it from one goroutine at a time.
type procWatch struct {
	fs          procfs.FS
	pid         int        // 0: this process
	base        procSample // before any session
	start, last procSample // window start, latest
	maxRSS      int64
	err         error // the first error met
}

// newProcWatch follows process pid (0: this process) under /proc.
func newProcWatch(pid int) *procWatch {
	fs, err := procfs.NewDefaultFS()
	return &procWatch{fs: fs, pid: pid, err: err}
}

func (w *procWatch) sample() procSample {
	s, err := readProc(w.fs, w.pid)
	if err != nil && w.err == nil {
		w.err = err
	}
	return s
}

func (w *procWatch) stats(established int) ProcStats {
	st := ProcStats{PID: w.pid}
	if w.err != nil {
		st.Error = w.err.Error()
	}
	if !w.start.valid || !w.last.valid {
		return st
	}
	wall := w.last.at.Sub(w.start.at)
	cpu := w.last.cpu - w.start.cpu
	st.CPUSeconds = cpu.Seconds()
	if wall > 0 {
		st.CPUPercent = 100 * cpu.Seconds() / wall.Seconds()
	}
	st.RSSMiB = mib(w.last.rss)
	st.MaxRSSMiB = mib(max(w.maxRSS, w.last.rss))
	if w.base.valid {
		st.RampCPUSeconds = (w.start.cpu - w.base.cpu).Seconds()
		st.BaseRSSMiB = mib(w.base.rss)
		if established > 0 {
			st.KiBPerSession = float64(w.last.rss-w.base.rss) / 1024 / float64(established)
		}
	}
	return st
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
