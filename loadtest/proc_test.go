package loadtest

import (
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// The command name may hold spaces and parentheses.
	stat := "1234 (my (odd) cmd) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 8 0 5000 100000 300 18446744073709551615\n"
	got, err := parseStatCPU([]byte(stat))
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * time.Second; got != want {
		t.Errorf("cpu %v, want %v", got, want)
	}
	for _, bad := range []string{"", "1 (x S 1", "1 (x) S 1 2 3"} {
		if _, err := parseStatCPU([]byte(bad)); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
}

func TestStatusKB(t *testing.T) {
	st := []byte("Name:\tx\nVmHWM:\t  2048 kB\nVmRSS:\t   1500 kB\n")
	if got := statusKB(st, "VmRSS:"); got != 1500 {
		t.Errorf("VmRSS %d", got)
	}
	if got := statusKB(st, "VmHWM:"); got != 2048 {
		t.Errorf("VmHWM %d", got)
	}
	if got := statusKB(st, "VmSwap:"); got != 0 {
		t.Errorf("absent key %d", got)
	}
}

func TestReadProcSelf(t *testing.T) {
	s, err := readProc(0)
	if err != nil {
		t.Skip("no /proc here:", err)
	}
	if !s.valid || s.rss <= 0 {
		t.Fatalf("sample %+v", s)
	}
	if _, err := readProc(1 << 30); err == nil {
		t.Error("no error for a missing pid")
	}
}

func TestProcWatchStats(t *testing.T) {
	t0 := time.Unix(100, 0)
	w := procWatch{
		base:   procSample{at: t0, rss: 10 << 20, valid: true},
		start:  procSample{at: t0, cpu: time.Second, rss: 20 << 20, valid: true},
		last:   procSample{at: t0.Add(10 * time.Second), cpu: 6 * time.Second, rss: 30 << 20, valid: true},
		maxRSS: 40 << 20,
	}
	st := w.stats(100)
	if st.CPUPercent != 50 || st.CPUSeconds != 5 || st.RSSMiB != 30 || st.MaxRSSMiB != 40 || st.KiBPerSession != 204.8 {
		t.Fatalf("stats %+v", st)
	}
}
