package game

// Acquire returns the newest published view; never nil after New. The
// caller must call Release exactly once when done reading it.
func (w *World) Acquire() *View { return w.views.Acquire() }

// Skipped reports how many ticks were not published because every view
// buffer was held by a reader.
func (w *World) Skipped() uint64 { return w.views.Skipped() }

// WantPixels reports whether the newest view is of the world's tick and
// lacks its pixels, in a world built with Config.LazyPixels (NoPixels),
// and then has the next view published carry them: a reader of pixels
// waits for the next Step, or for a later one while a reader holds the
// buffer with pixels or it is the newest. It reports false, and asks for
// nothing, in other worlds, when the newest view has the pixels, and
// when it is not of this tick (every buffer was held at the last
// publish): no view of this tick will come, so a reader reads the world
// itself (as wire.Snapshot does). Call it between Steps on the goroutine
// that calls Step.
func (w *World) WantPixels() bool {
	if !w.views.lazy {
		return false
	}
	if v := w.views.newest.Load(); v.Tick != w.tick || !v.NoPixels {
		return false
	}
	w.views.want = true
	return true
}

// publish files this step's writes and publishes its view.
func (w *World) publish() {
	w.views.Publish(w.seq, w.tick, w.chg)
	w.chg = w.views.Log(w.seq + 1)
}

// filler is the World as its Views' Filler.
type filler World

// Fill fills v's snakes, heads, shields, ranks and leaderboard from the
// world's records (rank: two passes over the parts), and its counters.
// Of v's snakes, which hold step since's records, it writes only those
// the steps after since marked; all of them when since is 0.
func (f *filler) Fill(v *View, since uint64) {
	w := (*World)(f)
	v.Snakes = v.Snakes[:w.nslots]
	v.Heads = v.Heads[:w.nslots]
	v.Shield = v.Shield[:(w.nslots+63)/64]
	w.rank(v.Snakes, v.Heads, v.Shield, since)
	r := &w.views.rank // summed by rank
	v.ranks = append(v.ranks[:0], r.longer[:r.longest+2]...)
	v.Top = append(v.Top[:0], w.top[:w.ntop]...)
	v.Players, v.Bots, v.Best = w.players, w.bots, w.best
}

// protection is a spawn's entry in World.prot: the slot, and the tick its
// protection lasts until.
type protection struct {
	slot  int32
	until uint64
}

// Expired marks the bodies of the live snakes whose spawn protection ended
// after tick from and at or before the world's tick: their look turns from
// the protected one to their colour without a grid write. Only the spawns
// in w.prot (since the oldest replayable view buffer's tick) are looked
// at, and a snake only when its spawn's protection ended in that span and
// is still its own (it has not died and spawned again since); an entry
// whose protection ended at or before oldest can matter to no buffer (the
// others are copied and marked whole) and is dropped. Unindexed views
// mark nothing.
func (f *filler) Expired(vs *Views, from, oldest uint64) {
	w := (*World)(f)
	keep := w.prot[:0]
	for _, e := range w.prot {
		if e.until <= oldest {
			continue
		}
		keep = append(keep, e)
		if vs.unindexed || e.until <= from || e.until > w.tick {
			continue
		}
		if s := &w.snakes[e.slot]; s.used && s.alive && s.protectedUntil == e.until {
			for k := 0; k < s.length; k++ {
				vs.Mark(int(s.at(k)))
			}
		}
	}
	w.prot = keep
}
