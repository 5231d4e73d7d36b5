package loadtest

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"time"
)

// clockTicks is USER_HZ, the unit of utime/stime in /proc/PID/stat. It is
// 100 on every Linux build Go supports.
const clockTicks = 100

// procSample is one reading of a process's CPU time and memory.
type procSample struct {
	at    time.Time
	cpu   time.Duration // utime + stime
	rss   int64         // bytes (VmRSS)
	peak  int64         // bytes (VmHWM)
	valid bool
}

// readProc reads /proc/PID/{stat,status}; pid 0 means this process.
func readProc(pid int) (procSample, error) {
	dir := "/proc/self"
	if pid > 0 {
		dir = "/proc/" + strconv.Itoa(pid)
	}
	s := procSample{at: time.Now()}
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return s, err
	}
	cpu, err := parseStatCPU(stat)
	if err != nil {
		return s, err
	}
	s.cpu = cpu
	status, err := os.ReadFile(dir + "/status")
	if err != nil {
		return s, err
	}
	s.rss = statusKB(status, "VmRSS:") * 1024
	s.peak = statusKB(status, "VmHWM:") * 1024
	s.valid = true
	return s, nil
}

// parseStatCPU returns utime+stime from the contents of /proc/PID/stat.
// The command name (field 2) may contain spaces and parentheses, so fields
// are counted after the last ')'.
func parseStatCPU(stat []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("malformed stat")
	}
	f := bytes.Fields(stat[i+1:])
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, errors.New("short stat")
	}
	u, err1 := strconv.ParseUint(string(f[11]), 10, 64)
	s, err2 := strconv.ParseUint(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("bad utime/stime")
	}
	return time.Duration(u+s) * time.Second / clockTicks, nil
}

// statusKB returns the value in kB of a /proc/PID/status line, 0 if absent.
func statusKB(status []byte, key string) int64 {
	i := bytes.Index(status, []byte(key))
	if i < 0 {
		return 0
	}
	rest := status[i+len(key):]
	if j := bytes.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	f := bytes.Fields(rest)
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseInt(string(f[0]), 10, 64)
	return v
}

// ProcStats is a process's cost over the measurement window.
type ProcStats struct {
	PID        int     `json:"pid,omitempty"`
	CPUPercent float64 `json:"cpu_percent"` // of one core, averaged over the window
	CPUSeconds float64 `json:"cpu_seconds"` // user+system over the window
	RSSMiB     float64 `json:"rss_mib"`     // at the end of the window
	MaxRSSMiB  float64 `json:"max_rss_mib"` // highest sampled during the window
	BaseRSSMiB float64 `json:"base_rss_mib"`
	// RSS growth from before the first session to the end of the window,
	// per established session.
	KiBPerSession float64 `json:"kib_per_session,omitempty"`
	Error         string  `json:"error,omitempty"`
}

// procWatch follows one process through a run.
type procWatch struct {
	pid         int
	base        procSample // before any session
	start, last procSample // window start, latest
	maxRSS      int64
	err         error
}

func (w *procWatch) sample() procSample {
	s, err := readProc(w.pid)
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
		st.BaseRSSMiB = mib(w.base.rss)
		if established > 0 {
			st.KiBPerSession = float64(w.last.rss-w.base.rss) / 1024 / float64(established)
		}
	}
	return st
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
