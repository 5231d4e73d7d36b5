package wire

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"os"
	"strings"
	"testing"
)

var updateWire = flag.Bool("update-wire", false, "rewrite testdata/wire.sha256 and testdata/regions.sha256")

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
	checkHash(t, hex.EncodeToString(h.Sum(nil)), "testdata/wire.sha256")
}

// TestRegionBytes: the regional form's bytes (each delta, its global
// message and its regions' messages in order) for seeded worlds, split
// into regions that divide the world and regions that do not, with deltas
// of one step and of several, hash to testdata/regions.sha256 (see
// TestWireBytes).
func TestRegionBytes(t *testing.T) {
	h := sha256.New()
	for _, c := range []struct {
		seed          uint64
		w, ht, people int
		rw, rh        int
	}{{21, 128, 64, 10, 32, 16}, {22, 256, 96, 40, 48, 20}, {23, 512, 128, 120, 128, 64}, {24, 384, 200, 160, 96, 30}} {
		f := newFollowed(t, c.seed, c.w, c.ht, c.people)
		for range 20 {
			f.step(t)
		}
		rf := newRegionFollower(t, f, c.rw, c.rh)
		for range 300 {
			f.steps(t)
			var err error
			if f.buf, err = f.e.AppendDeltaSplit(f.buf[:0], rf.s); err != nil {
				t.Fatal(err)
			}
			h.Write(f.buf)
			h.Write(rf.s.Global())
			for _, r := range rf.s.Changed() {
				h.Write(rf.s.Region(int(r)))
			}
		}
	}
	checkHash(t, hex.EncodeToString(h.Sum(nil)), "testdata/regions.sha256")
}

// checkHash compares got with the hash in the file at path, or writes it
// there with -update-wire.
func checkHash(t *testing.T, got, path string) {
	t.Helper()
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
		t.Fatalf("the bytes hash to %s, %s says %s", got, path, strings.TrimSpace(string(want)))
	}
}
