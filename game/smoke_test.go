package game

import "testing"

func TestSmoke(t *testing.T) {
	w, err := New(Config{W: 128, H: 64, MaxSnakes: 64, Bots: 40, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.check(); err != nil {
		t.Fatal(err)
	}
	for tk := uint64(1); tk < 2000; tk++ {
		w.Step(tk)
		if err := w.check(); err != nil {
			t.Fatalf("tick %d: %v", tk, err)
		}
	}
	v := w.Acquire()
	t.Logf("tick %d bots %d top %v best %v", v.Tick, v.Bots, v.Top, v.Best)
	v.Release()
}
