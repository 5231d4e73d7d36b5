package loadtest

import (
	"testing"
	"time"
)

func keyDir(k string) Dir {
	for d := Up; d <= Left; d++ {
		if arrowKeys[d] == k || wasdKeys[d] == k || vimKeys[d] == k {
			return d
		}
	}
	return NoDir
}

func TestPlayerNeverReverses(t *testing.T) {
	for seed := range uint64(20) {
		p := NewPlayer(seed)
		prev := NoDir
		styles := map[int]bool{}
		for i := range 5000 {
			if i%97 == 0 {
				p.Spawned()
				prev = NoDir
			}
			d, key := p.Turn()
			if d < Up || d > Left {
				t.Fatalf("seed %d turn %d: bad dir %d", seed, i, d)
			}
			if got := keyDir(string(key)); got != d {
				t.Fatalf("seed %d turn %d: key %q means %d, want %d", seed, i, key, got, d)
			}
			if prev != NoDir && (d == prev.Reverse() || d == prev) {
				t.Fatalf("seed %d turn %d: %d after %d is not a right angle", seed, i, d, prev)
			}
			switch {
			case len(key) == 3:
				styles[0] = true
			case key[0] == 'w' || key[0] == 'a' || key[0] == 's' || key[0] == 'd':
				styles[1] = true
			default:
				styles[2] = true
			}
			prev = d
		}
		if len(styles) != 3 {
			t.Errorf("seed %d: key styles used %v, want all three", seed, styles)
		}
	}
}

func TestPlayerDelays(t *testing.T) {
	p := NewPlayer(7)
	var short, long int
	for range 10000 {
		d := p.TurnDelay()
		if d < 300*time.Millisecond || d > 3*time.Second {
			t.Fatalf("turn delay %v outside 0.3..3 s", d)
		}
		if d < time.Second {
			short++
		} else {
			long++
		}
		r := p.RespawnDelay()
		if r < time.Second || r >= 4*time.Second {
			t.Fatalf("respawn delay %v outside 1..4 s", r)
		}
	}
	// Log-uniform: P(d < 1 s) = ln(1/0.3)/ln(10) ~ 0.52.
	if short < 4500 || short > 5900 {
		t.Errorf("%d of 10000 delays under 1 s, want ~5200", short)
	}
	_ = long
}

func TestPlayerDeterministic(t *testing.T) {
	a, b := NewPlayer(42), NewPlayer(42)
	for range 100 {
		da, ka := a.Turn()
		db, kb := b.Turn()
		if da != db || string(ka) != string(kb) || a.TurnDelay() != b.TurnDelay() {
			t.Fatal("same seed, different script")
		}
	}
}

func TestReverse(t *testing.T) {
	for d := Up; d <= Left; d++ {
		if d.Reverse().Reverse() != d || d.Reverse() == d {
			t.Errorf("Reverse(%d) = %d", d, d.Reverse())
		}
	}
	if NoDir.Reverse() != NoDir {
		t.Error("NoDir.Reverse() != NoDir")
	}
}
