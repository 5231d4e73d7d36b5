package loadtest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

// fakeProc lays out /proc/PID/{stat,status} for pid under a temporary
// directory and returns that directory as a procfs.FS.
func fakeProc(t *testing.T, pid, stat, status string) procfs.FS {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, pid)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"stat": stat, "status": status} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := procfs.NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// A Linux 6.x /proc/PID/stat line (52 fields) for a process whose command
// name holds spaces and parentheses: utime 250 and stime 50 clock ticks.
const fakeStat = "1234 (my (odd) cmd) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 8 0 5000 100000 300 18446744073709551615 " +
	"94220908011520 94220908031401 140731098170624 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 " +
	"94220908047408 94220908049024 94221138948096 140731098172046 140731098172066 140731098172066 140731098173419 0\n"

const fakeStatus = "Name:\tmy (odd) cmd\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t1234\nPid:\t1234\n" +
	"Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nVmPeak:\t  9000 kB\nVmHWM:\t  2048 kB\nVmRSS:\t   1500 kB\nThreads:\t8\n"

func TestReadProcFake(t *testing.T) {
	fs := fakeProc(t, "1234", fakeStat, fakeStatus)
	s, err := readProc(fs, 1234)
	if err != nil {
		t.Fatal(err)
	}
	if !s.valid || s.cpu != 3*time.Second || s.rss != 1500<<10 {
		t.Fatalf("sample %+v, want cpu 3s, rss 1500 KiB", s)
	}
	if _, err := readProc(fs, 99); err == nil {
		t.Error("no error for a missing pid")
	}
	// A status without VmRSS (a kernel thread, a zombie) reads as 0 bytes.
	noRSS := fakeProc(t, "7", fakeStat, "Name:\tkworker\nVmHWM:\t  2048 kB\n")
	if s, err := readProc(noRSS, 7); err != nil || s.rss != 0 || !s.valid {
		t.Errorf("no VmRSS: %+v %v", s, err)
	}
	for _, bad := range []string{"", "1 (x S 1", "1 (x) S 1 2 3\n"} {
		if s, err := readProc(fakeProc(t, "1", bad, fakeStatus), 1); err == nil || s.valid {
			t.Errorf("stat %q: no error (%+v)", bad, s)
		}
	}
}

func TestReadProcSelf(t *testing.T) {
	w := newProcWatch(0)
	s := w.sample()
	if w.err != nil || !s.valid || s.rss <= 0 || s.cpu <= 0 {
		t.Fatalf("sample %+v, error %v", s, w.err)
	}
	// CPU time only grows: burn some and read again.
	for t0 := time.Now(); time.Since(t0) < 50*time.Millisecond; {
	}
	if s2 := w.sample(); !s2.valid || s2.cpu <= s.cpu {
		t.Errorf("cpu %v then %v", s.cpu, s2.cpu)
	}
	missing := newProcWatch(1 << 30)
	if s := missing.sample(); s.valid || missing.err == nil {
		t.Error("no error for a missing pid")
	}
	if st := missing.stats(1); st.Error == "" || st.CPUSeconds != 0 {
		t.Errorf("stats of a missing process %+v", st)
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
