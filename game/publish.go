package game

import "sync/atomic"

// viewState is the unexported bookkeeping a View buffer carries.
type viewState struct {
	refs atomic.Int32 // readers holding the view
	seq  uint64       // the step whose grid Pix holds; 0 = never written
}

// Acquire returns the newest published view; never nil after New. The
// caller must call Release exactly once when done reading it.
func (w *World) Acquire() *View {
	for {
		v := w.newest.Load()
		v.st.refs.Add(1)
		if w.newest.Load() == v {
			return v
		}
		v.st.refs.Add(-1)
	}
}

// Release tells the world the reader is done with v.
func (v *View) Release() { v.st.refs.Add(-1) }

// Skipped reports how many ticks were not published because every view
// buffer was held by a reader.
func (w *World) Skipped() uint64 { return atomic.LoadUint64(&w.skipped) }

// publish brings a free buffer up to date and makes it the newest view. It
// files the changes since the last publish as the log of step w.seq.
func (w *World) publish() {
	w.logs[w.seq%logN] = w.chg
	defer func() { w.chg = w.logs[(w.seq+1)%logN][:0] }()
	cur := w.newest.Load()
	var v *View
	for _, b := range w.pool {
		if b != cur && b.st.refs.Load() == 0 && (v == nil || b.st.seq > v.st.seq) {
			v = b
		}
	}
	if v == nil {
		if len(w.pool) >= maxViews {
			atomic.AddUint64(&w.skipped, 1)
			return
		}
		v = &View{
			W: w.w, H: w.h,
			Pix:    make([]Pixel, len(w.grid)),
			Snakes: make([]SnakeInfo, 0, w.cfg.MaxSnakes),
			Top:    make([]Entry, 0, TopN),
			Kills:  make([]Kill, 0, MaxKills),
			Dirty:  make([]uint64, TilesW(w.w)*TilesH(w.h)),
		}
		w.pool = append(w.pool, v)
	}
	if v.st.seq == 0 || w.seq-v.st.seq > logN-1 {
		copy(v.Pix, w.grid)
		v.markAll(w.tick)
	} else {
		for s := v.st.seq + 1; s <= w.seq; s++ {
			v.apply(w.logs[s%logN], w.tick)
		}
		w.markExpired(v, v.Tick, w.tick)
	}
	v.st.seq = w.seq
	if w.seq == 0 {
		v.st.seq = 0 // tick 0 has no log; force a full copy next time
	}
	v.Tick = w.tick
	v.Snakes = v.Snakes[:w.nslots]
	w.rank(v.Snakes)
	v.Top = append(v.Top[:0], w.top[:w.ntop]...)
	v.Players, v.Bots, v.Best = w.players, w.bots, w.best
	v.Kills = v.Kills[:0]
	for k := w.nkills - min(w.nkills, MaxKills); k < w.nkills; k++ {
		if r := &w.kills[k%MaxKills]; r.Tick+KillTicks > w.tick {
			v.Kills = append(v.Kills, *r)
		}
	}
	w.newest.Store(v)
}
