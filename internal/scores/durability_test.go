package scores

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"snaked/internal/testkit"
	"strconv"
	"strings"
	"testing"
	"time"
)

// helperEnv names the directory the durability helper writes in; set only
// in the subprocess TestKill9Durability starts.
const helperEnv = "SCORES_DURABILITY_DIR"

// TestDurabilityHelper is the subprocess of TestKill9Durability: it records a
// game with a new identity (g0000000, g0000001, ...) every millisecond (4 ms
// under the race detector), its
// End the wall clock, and prints
//
//	rec <i> <unix ns>   every 20 games: game i was handed to Record at that time
//	ok <n>              the writer has committed games 0..n-1
//
// until it is killed (or 30 s have passed).
func TestDurabilityHelper(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		t.Skip("the subprocess of TestKill9Durability")
	}
	s, err := Open(filepath.Join(dir, "scores.db"), Options{Log: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		fmt.Fprintln(os.Stdout, "error", err)
		os.Exit(2)
	}
	every := time.Millisecond
	if raceEnabled {
		every = 4 * time.Millisecond // the writer is ~25x slower: stay well under its capacity
	}
	out := bufio.NewWriter(os.Stdout)
	var written uint64
	start := time.Now()
	for i := 0; time.Since(start) < 30*time.Second; i++ {
		now := time.Now()
		s.Record(Result{ID: NameID(fmt.Sprintf("g%07d", i)), Name: "g", Length: i % 100, Died: true, Duration: time.Second, End: now})
		if i%20 == 0 {
			fmt.Fprintf(out, "rec %d %d\n", i, now.UnixNano())
		}
		st := s.Stats()
		if st.Dropped+st.Invalid+st.Lost+st.Errors > 0 {
			fmt.Fprintf(out, "error stats %+v\n", st)
		}
		if st.Written != written {
			written = st.Written
			fmt.Fprintf(out, "ok %d\n", written)
		}
		out.Flush() // one write per line group: the parent sees what was committed when it kills
		time.Sleep(every)
	}
	fmt.Fprintln(os.Stdout, "error not killed")
	os.Exit(2)
}

// TestKill9Durability kills a process that records games continuously with
// SIGKILL, reopens its database, and checks that every game it reported
// committed is there, in order, and that at most about a second of games
// (FlushEvery) before the kill is missing.
func TestKill9Durability(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a subprocess for about 3 s")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDurabilityHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	type rec struct {
		i  int
		at time.Time
	}
	lines := make(chan string, 1024)
	readDone := make(chan struct{})
	go func() { // owned here: ends at EOF, which the kill below brings
		defer close(readDone)
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		io.Copy(io.Discard, stdout)
	}()
	var recs []rec
	committed, oks := 0, 0
	parse := func(l string) {
		f := strings.Fields(l)
		switch {
		case len(f) == 3 && f[0] == "rec":
			i, _ := strconv.Atoi(f[1])
			ns, _ := strconv.ParseInt(f[2], 10, 64)
			recs = append(recs, rec{i, time.Unix(0, ns)})
		case len(f) == 2 && f[0] == "ok":
			n, _ := strconv.Atoi(f[1])
			if n < committed {
				t.Errorf("committed count went down: %d after %d", n, committed)
			}
			committed = n
			oks++
		case strings.HasPrefix(l, "error"):
			t.Errorf("helper: %s", l)
		}
	}
	// Let two batches commit, then kill at a point of the third second that
	// varies from run to run.
	deadline := time.After(15 * time.Second)
	for oks < 2 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("helper exited before committing twice")
			}
			parse(l)
		case <-deadline:
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("helper committed %d batches in 15 s", oks)
		}
	}
	time.Sleep(time.Duration(100+time.Now().UnixNano()%800) * time.Millisecond)
	killed := time.Now()
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	werr := cmd.Wait()
	for l := range lines {
		parse(l)
	}
	<-readDone
	if !strings.Contains(fmt.Sprint(werr), "killed") {
		t.Errorf("helper ended with %v, want killed", werr)
	}
	if committed == 0 || len(recs) == 0 {
		t.Fatalf("helper reported %d committed, %d recs", committed, len(recs))
	}

	var log testkit.SyncBuf
	s := openT(t, filepath.Join(dir, "scores.db"), testOpts(&log))
	if strings.Contains(log.String(), "CORRUPT") {
		t.Fatalf("the killed database was taken for corrupt:\n%s", log.String())
	}
	var n int
	var maxID string
	if err := s.conns().r.QueryRowContext(context.Background(), `SELECT count(*), coalesce(max(ident), '') FROM players`).Scan(&n, &maxID); err != nil {
		t.Fatal(err)
	}
	// Batches commit in Record's order: the rows must be g0000000..g<n-1>.
	if want := fmt.Sprintf("g%07d", n-1); maxID != want {
		t.Errorf("%d rows but the last is %s, want %s: a gap", n, maxID, want)
	}
	if n < committed {
		t.Errorf("%d games in the database, but the helper saw %d committed before the kill", n, committed)
	}
	// Everything handed to Record more than FlushEvery before the kill,
	// plus a margin for the commit in flight (games recorded while it runs
	// wait for the next one) on a loaded machine, is there.
	margin := 500 * time.Millisecond
	if raceEnabled {
		margin = time.Second // commits take several times longer
	}
	cut := killed.Add(-DefaultFlushEvery - margin)
	mustHave := -1
	for _, r := range recs {
		if r.at.Before(cut) {
			mustHave = r.i
		}
	}
	// The newest game in the file, to the resolution of the rec lines.
	last, kept := recs[len(recs)-1], recs[0]
	for _, r := range recs {
		if r.i < n {
			kept = r
		}
	}
	t.Logf("killed %v after the first game; %d games in the file, %d reported committed, %d recorded; game %d, recorded %v before the kill, is in the file",
		killed.Sub(recs[0].at).Round(time.Millisecond), n, committed, last.i+1, kept.i, killed.Sub(kept.at).Round(time.Millisecond))
	if mustHave >= n {
		t.Errorf("game %d was recorded more than %v before the kill but is not in the file (%d games)", mustHave, DefaultFlushEvery+margin, n)
	}
}
