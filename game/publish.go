package game

// Acquire returns the newest published view; never nil after New. The
// caller must call Release exactly once when done reading it.
func (w *World) Acquire() *View { return w.views.Acquire() }

// Skipped reports how many ticks were not published because every view
// buffer was held by a reader.
func (w *World) Skipped() uint64 { return w.views.Skipped() }

// publish files this step's writes and publishes its view.
func (w *World) publish() {
	w.views.Publish(w.seq, w.tick, w.chg)
	w.chg = w.views.Log(w.seq + 1)
}

// filler is the World as its Views' Filler.
type filler World

// Fill fills v's snakes, heads, shields, ranks and leaderboard from the
// world's records (rank: two passes over the parts), and its counters,
// whatever v held before.
func (f *filler) Fill(v *View, _ uint64) {
	w := (*World)(f)
	v.Snakes = v.Snakes[:w.nslots]
	v.Heads = v.Heads[:w.nslots]
	v.Shield = v.Shield[:(w.nslots+63)/64]
	w.rank(v.Snakes, v.Heads, v.Shield)
	r := &w.views.rank // summed by rank
	v.ranks = append(v.ranks[:0], r.longer[:r.longest+2]...)
	v.Top = append(v.Top[:0], w.top[:w.ntop]...)
	v.Players, v.Bots, v.Best = w.players, w.bots, w.best
}

// Expired marks the bodies of the live snakes whose spawn protection ended
// after tick from and at or before the world's tick: their look turns from
// the protected one to their colour without a grid write. Only snakes in
// w.prot (spawned since the oldest replayable view buffer's tick) are
// looked at; an entry whose protection ended at or before oldest can
// matter to no buffer (the others are copied and marked whole) and is
// dropped.
func (f *filler) Expired(vs *Views, from, oldest uint64) {
	w := (*World)(f)
	keep := w.prot[:0]
	for _, slot := range w.prot {
		s := &w.snakes[slot]
		if s.protectedUntil <= oldest {
			continue
		}
		keep = append(keep, slot)
		if !s.used || !s.alive || s.protectedUntil <= from || s.protectedUntil > w.tick {
			continue
		}
		for k := 0; k < s.length; k++ {
			vs.Mark(int(s.at(k)))
		}
	}
	w.prot = keep
}
