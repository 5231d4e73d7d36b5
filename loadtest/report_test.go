package loadtest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckTargets(t *testing.T) {
	r := &Report{N: 10, Established: 10, Gap: Dist{Count: 100, P50: 103, P99: 149}}
	r.Server = &ProcStats{KiBPerSession: 90}
	r.Floor = &Report{Gap: Dist{P99: 160}}
	r.FloorCPURatio = 1.4
	for _, c := range r.CheckTargets() {
		if !c.OK {
			t.Errorf("%s: missed with %s", c.Name, c.Got)
		}
	}
	if n := len(r.CheckTargets()); n != 7 {
		t.Errorf("%d targets, want 7", n)
	}
	bad := &Report{N: 10, Established: 9, Failed: 1, Unexpected: 2, Gap: Dist{Count: 5, P50: 106, P99: 151}}
	bad.Server = &ProcStats{KiBPerSession: 101}
	bad.Floor = &Report{Gap: Dist{P99: 150}}
	bad.FloorCPURatio = 1.51
	for _, c := range bad.CheckTargets() {
		if c.OK {
			t.Errorf("%s: met with %s", c.Name, c.Got)
		}
	}
}

func TestWriteReport(t *testing.T) {
	r := &Report{Addr: "127.0.0.1:1", N: 2, Established: 1, Failed: 1,
		FailReasons: map[string]int{"dial: refused": 1}, Gap: Dist{Count: 3, P50: 100}}
	r.Floor = &Report{Addr: "127.0.0.1:2", N: 2}
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"floor", "127.0.0.1:2", "server failure: 1x dial: refused", "target MISS no failed sessions"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := r.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Failed != 1 || back.Floor == nil || len(back.Targets) == 0 || back.FailReasons["dial: refused"] != 1 {
		t.Errorf("JSON round trip: %+v", back)
	}
}

func TestPerFrame(t *testing.T) {
	// 2 CPU seconds for 1,500,000 bytes of 150-byte frames: 200 us/frame.
	r := &Report{Server: &ProcStats{CPUSeconds: 2}, SentFrameBytes: 150, windowBytes: 1_500_000}
	r.perFrame()
	if r.ServerUsPerFrame != 200 {
		t.Errorf("us per frame %v, want 200", r.ServerUsPerFrame)
	}
	r = &Report{Server: &ProcStats{CPUSeconds: 2}, windowBytes: 1_500_000}
	r.perFrame()
	if r.ServerUsPerFrame != 0 {
		t.Errorf("unknown frame size gave %v", r.ServerUsPerFrame)
	}
}
