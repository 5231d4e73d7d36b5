package wire

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"os"
	"strings"
	"testing"
)

var updateWire = flag.Bool("update-wire", false, "rewrite testdata/wire.sha256")

// TestWireBytes: the wire format's bytes for seeded worlds (a snapshot in
// chunks, then 300 deltas, with players turning, dashing, dying, leaving
// and joining) hash to testdata/wire.sha256, so a change that moves the
// codec or the rules under it is seen to keep every byte (-update-wire
// rewrites the file after a deliberate change of the format).
func TestWireBytes(t *testing.T) {
	h := sha256.New()
	for _, c := range []struct {
		seed          uint64
		w, ht, people int
	}{{11, 128, 64, 10}, {12, 256, 96, 40}, {13, 512, 128, 120}} {
		f := newFollowed(t, c.seed, c.w, c.ht, c.people)
		for range 20 {
			f.step(t)
		}
		f.e = NewEncoder(f.w)
		chunks, err := Snapshot(f.w, 4096)
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range chunks {
			h.Write(ch)
		}
		if f.r, err = NewReplica(chunks); err != nil {
			t.Fatal(err)
		}
		for range 300 {
			f.next(t)
			h.Write(f.buf)
		}
	}
	got := hex.EncodeToString(h.Sum(nil))
	const path = "testdata/wire.sha256"
	if *updateWire {
		if err := os.WriteFile(path, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != strings.TrimSpace(string(want)) {
		t.Fatalf("the wire bytes hash to %s, testdata says %s", got, strings.TrimSpace(string(want)))
	}
}
