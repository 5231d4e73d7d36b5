// Package testkit holds the helpers the project's tests share: a log sink
// safe for concurrent writers, a bounded wait for a condition, golden
// files, and finding a snake by name. Only tests import it.
package testkit

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"snaked/game"
)

// SyncBuf is a bytes.Buffer safe for concurrent writers (a logger's
// goroutines) and the test reading it.
type SyncBuf struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Eventually polls cond every 10 ms until it holds (true) or d has passed
// (false).
func Eventually(d time.Duration, cond func() bool) bool {
	end := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Golden compares got with testdata/<name>.golden, or rewrites that file
// when update is set (the test's -update flag).
func Golden(t testing.TB, name, got string, update bool) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (the test's -update flag creates it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (-update rewrites it)\ngot:\n%s\nwant:\n%s", name, path, got, want)
	}
}

// Snake is a snake's info and head, as a view shows them, and its dir
// (World.Heading: views carry none).
type Snake struct {
	game.SnakeInfo
	Head game.Point
	Dir  game.Dir
}

// SnakeNamed finds a used slot's snake by name in w's newest view.
func SnakeNamed(w *game.World, name string) (Snake, bool) {
	v := w.Acquire()
	defer v.Release()
	for i, s := range v.Snakes {
		if s.Used && s.Name == name {
			d, _ := w.Heading(s.ID)
			return Snake{s, v.Heads[i], d}, true
		}
	}
	return Snake{}, false
}
