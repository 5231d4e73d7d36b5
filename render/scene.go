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
	// serial is the View.Serial the scene was made for; 0 while it is
	// made again. Stored last: a reader that loads it equal to its view's
	// reads a complete scene.
	serial atomic.Uint64
	// fresh holds, for each View.FreshX entry, the colour cell its two
	// pixels show to a renderer whose player's head is not one of them
	// (that head has a colour of its own), and sceneTop or sceneBot when
	// the top or bottom pixel is a head (a renderer notes those:
	// seeHead). For colour profiles; Mono uses none.
	fresh []uint32
	// kills holds, for each View.Kills entry, what the kill feed asks of
	// it that is the same for every renderer (feedUpdate).
	kills []sceneKill
}

// sceneKill is a View.Kills entry as the kill feed weighs it.
type sceneKill struct {
	tick           uint64
	x, y           int32 // where the victim's head was
	victim, killer int32 // the slot named, when that slot's snake bears the name (isYou's test); else -1
	notable        bool  // about the top 10 (feedNotable)
	headOn         bool
}

// sceneKillOf is kill k of v as the kill feed weighs it; top is
// topSlots(v).
func sceneKillOf(v *game.View, k *game.Kill, top uint64) sceneKill {
	return sceneKill{
		tick: k.Tick, x: int32(k.At.X), y: int32(k.At.Y),
		victim: named(v, k.VictimSlot, k.Victim), killer: named(v, k.KillerSlot, k.Killer),
		notable: feedNotable(v, k, top), headOn: k.HeadOn,
	}
}

// scene.fresh's head bits.
const (
	sceneTop = 1 << 16
	sceneBot = 1 << 17
)

// A scene is kept per view buffer (a world publishes into at most a few,
// game's maxViews, again and again) and made again in place for the
// buffer's next publish: a reader uses a scene only while it holds the
// view, and a world fills a buffer again only once nobody holds it, so
// nobody reads a scene while it is made again. In a daemon's steady
// state that allocates nothing. sceneSlots is enough for a world's
// buffers and a replica's; a view that finds none free takes the next
// slot round with a new scene (its old one may still be read).
const sceneSlots = 16

type sceneSlot struct {
	view atomic.Pointer[game.View]
	sc   atomic.Pointer[scene]
}

var (
	sceneTab  [sceneSlots]sceneSlot
	sceneNext int        // the slot a view without one takes; guarded by sceneMu
	sceneMu   sync.Mutex // held while a scene is made
)

// sceneFor returns the scene of v, making it when it is the first asked
// for; nil when v was never published, has no cell index, or another
// goroutine is making one (the caller draws without: nobody waits).
func sceneFor(v *game.View) *scene {
	if v.Serial == 0 || len(v.FreshPix) != 2*len(v.FreshX) {
		return nil
	}
	for i := range sceneTab {
		if sl := &sceneTab[i]; sl.view.Load() == v {
			if s := sl.sc.Load(); s != nil && s.serial.Load() == v.Serial {
				return s
			}
			break
		}
	}
	if !sceneMu.TryLock() {
		return nil
	}
	defer sceneMu.Unlock()
	var s *scene
	for i := range sceneTab {
		if sl := &sceneTab[i]; sl.view.Load() == v {
			s = sl.sc.Load()
			break
		}
	}
	switch {
	case s != nil && s.serial.Load() == v.Serial:
		return s
	case s == nil:
		// A view new to the table: the next slot round, with a scene of
		// its own (whoever holds the slot's last view may still read
		// that one's).
		s = &scene{kills: make([]sceneKill, 0, game.MaxKills)}
		sl := &sceneTab[sceneNext]
		sceneNext = (sceneNext + 1) % sceneSlots
		sl.view.Store(nil)
		sl.sc.Store(s)
		sl.view.Store(v)
	default:
		s.serial.Store(0)
	}
	if cap(s.fresh) < len(v.FreshX) {
		s.fresh = make([]uint32, len(v.FreshX), len(v.FreshX)+len(v.FreshX)/4)
	}
	s.fresh = s.fresh[:len(v.FreshX)]
	s.kills = s.kills[:0]
	top := topSlots(v)
	for i := range v.Kills {
		k := &v.Kills[i]
		s.kills = append(s.kills, sceneKillOf(v, k, top))
	}
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
	s.serial.Store(v.Serial)
	return s
}
