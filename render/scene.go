package render

import (
	"sync"
	"sync/atomic"

	"snaked/game"
)

// This file holds what the renderers drawing one view share: made once
// for the view, by the first renderer that wants it, and read by any
// number of goroutines. In a crowd each cell the tick changed is on the
// screens of many sessions (2,500 screens of 80x24 over a 2,048 x 512
// world: each cell of the world on ~15 of them), and a renderer of each
// would otherwise work out the same look for it.

// scene is the shared part of drawing one view (View.Serial).
type scene struct {
	serial uint64
	// fresh holds, for each View.FreshX entry, the colour cell its two
	// pixels show to a renderer whose player's head is not one of them
	// (that head has a colour of its own), and sceneTop or sceneBot when
	// the top or bottom pixel is a head (a renderer notes those:
	// seeHead). For colour profiles; Mono uses none.
	fresh []uint32
}

// scene.fresh's head bits.
const (
	sceneTop = 1 << 16
	sceneBot = 1 << 17
)

var (
	scenes  atomic.Pointer[scene] // the newest view's scene
	sceneMu sync.Mutex            // held while one is made
)

// sceneFor returns the scene of v, making it when it is the first asked
// for; nil when v was never published, has no cell index, or another
// goroutine is making it (the caller draws without: nobody waits).
func sceneFor(v *game.View) *scene {
	if v.Serial == 0 || len(v.FreshPix) != 2*len(v.FreshX) {
		return nil
	}
	if s := scenes.Load(); s != nil && s.serial == v.Serial {
		return s
	}
	if !sceneMu.TryLock() {
		return nil
	}
	defer sceneMu.Unlock()
	if s := scenes.Load(); s != nil && s.serial == v.Serial {
		return s
	}
	// A new one each view: a renderer may still be reading the last one.
	// ~10,000 entries a tick at 2,500 players: 40 KB, 400 KB/s of garbage.
	s := &scene{serial: v.Serial, fresh: make([]uint32, len(v.FreshX))}
	fp := v.FreshPix
	for i := range s.fresh {
		p, q := fp[2*i], fp[2*i+1]
		if p|q == 0 {
			s.fresh[i] = uint32(blank)
			continue
		}
		e := uint32(px(colour(v, p, -1), colour(v, q, -1)))
		if p&kindBits == headBits {
			e |= sceneTop
		}
		if q&kindBits == headBits {
			e |= sceneBot
		}
		s.fresh[i] = e
	}
	scenes.Store(s)
	return s
}
