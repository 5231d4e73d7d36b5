package render

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"snaked/game"
)

// TestSceneSameFrames: renderers that take the cells' looks and the kill
// feed's tests from the view's scene draw, frame for frame, the very
// cells and bytes that renderers working each out themselves (pixCell,
// sceneKillOf for each kill) do, in a crowd where heads, the player's own among them,
// fruit, spawn shields and deaths (the feed's lines) pass.
func TestSceneSameFrames(t *testing.T) {
	c := newLoadCrowd(t, 600, 20, 0)
	ref := make([]*Renderer, len(c.rs))
	for i, r := range c.rs {
		ref[i] = newRenderer(r.prof, r.tcols, r.trows, 0, options{keepNext: true, noScene: true})
	}
	used, lines, mine := 0, 0, 0
	for f := range 80 {
		c.step()
		v := c.w.Acquire()
		if s := sceneFor(v); s != nil && s.serial.Load() == v.Serial {
			used++
		}
		for i, r := range c.rs {
			a := r.Frame(v, &c.hs[i])
			b := ref[i].Frame(v, &c.hs[i])
			if !bytes.Equal(a, b) {
				t.Fatalf("frame %d, session %d: with the scene %q, without %q", f, i, a, b)
			}
			if err := sameShown(r, ref[i]); err != nil {
				t.Fatalf("frame %d, session %d: %v", f, i, err)
			}
			for j := range r.feed {
				if l := &r.feed[j]; l.on {
					lines++
					if l.youA || l.youB {
						mine++
					}
				}
			}
		}
		v.Release()
	}
	if used == 0 {
		t.Fatal("no view had a scene")
	}
	if lines == 0 || mine == 0 {
		t.Fatalf("the feed showed %d lines, %d of them the player's: the test drew no feed", lines, mine)
	}
	t.Logf("%d feed lines shown, %d of them the player's", lines, mine)
}

// TestSceneKills: the scene's answers for each kill of a crowd's views
// are feedMine's for every player, and the kill's own tick, place and
// top-10 test (feedNotable).
func TestSceneKills(t *testing.T) {
	c := newLoadCrowd(t, 600, 1, 0)
	kills, mine := 0, 0
	for range 120 {
		c.step()
		v := c.w.Acquire()
		s := sceneFor(v)
		if s == nil || len(s.kills) != len(v.Kills) {
			v.Release()
			t.Fatal("no scene, or one without the view's kills")
		}
		top := topSlots(v)
		for i := range v.Kills {
			k, e := &v.Kills[i], &s.kills[i]
			if e.notable != feedNotable(v, k, top) || e.tick != k.Tick || e.headOn != k.HeadOn ||
				int(e.x) != k.At.X || int(e.y) != k.At.Y {
				t.Fatalf("kill %+v: scene %+v", *k, *e)
			}
			for own := -1; own < len(v.Snakes); own++ {
				if got, want := e.mine(v, own, k), feedMine(v, own, k); got != want {
					t.Fatalf("kill %+v, player in slot %d: scene says mine %v, feedMine %v", *k, own, got, want)
				} else if got {
					mine++
				}
			}
			kills++
		}
		v.Release()
	}
	if kills == 0 || mine == 0 {
		t.Fatalf("%d kills, %d of them someone's: nothing checked", kills, mine)
	}
	t.Logf("%d kills checked, %d (kill, player) pairs mine", kills, mine)
}

// feedMine is the rule for a player's own kill-feed lines as the names
// say it (isYou: the slot and the name), the reference for
// sceneKill.mine: the player's death, kill, or head-on.
func feedMine(v *game.View, own int, k *game.Kill) bool {
	return isYou(v, own, k.VictimSlot, k.Victim) || isYou(v, own, k.KillerSlot, k.Killer) ||
		k.HeadOn && own >= 0 && k.Other == v.Snakes[own].Name
}

// sameShown reports the first cell where what r believes the terminal
// shows differs from what ref does.
func sameShown(r, ref *Renderer) error {
	if !slices.Equal(r.vt.prev, ref.vt.prev) {
		for i := range r.vt.prev {
			if r.vt.prev[i] != ref.vt.prev[i] {
				return fmt.Errorf("cell %d,%d: %v against %v", i%r.cols, i/r.cols, r.vt.prev[i], ref.vt.prev[i])
			}
		}
	}
	return nil
}

// BenchmarkScene is the making of a crowd view's scene: once a tick for
// every session of a daemon.
func BenchmarkScene(b *testing.B) {
	c := newLoadCrowd(b, 2500, 1, 50)
	v := c.w.Acquire()
	defer v.Release()
	s := sceneFor(v)
	if s == nil {
		b.Fatal("no scene")
	}
	b.ReportAllocs()
	for b.Loop() {
		s.serial.Store(0) // made again, in place
		sceneFor(v)
	}
	b.ReportMetric(float64(len(v.FreshX)), "cells/view")
}

// TestSceneNoAllocs: in a world's steady state the scenes are made again
// in place: drawing its views allocates nothing for them.
func TestSceneNoAllocs(t *testing.T) {
	c := newLoadCrowd(t, 300, 1, 20)
	for range 20 { // every view buffer of the world has its scene
		c.step()
	}
	if n := testing.AllocsPerRun(50, func() { c.step() }); n > 0.5 {
		t.Errorf("%.1f allocations a tick with its scene", n)
	}
	v := c.w.Acquire()
	defer v.Release()
	if s := sceneFor(v); s == nil || s.serial.Load() != v.Serial {
		t.Fatal("the newest view has no scene")
	}
}
