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
	v := nextView(&w.pool, w.newest.Load(), w.w, w.h, w.cfg.MaxSnakes)
	if v == nil {
		atomic.AddUint64(&w.skipped, 1)
		return
	}
	w.cells = cellMap(w.cells, w.w, w.h)
	replayed := v.sync(w.grid, &w.logs, w.seq, w.tick, w.cells)
	if replayed {
		w.markExpired(v, v.Tick, w.tick)
	}
	v.index(replayed, w.cells)
	v.st.seq = w.seq
	if w.seq == 0 {
		v.st.seq = 0 // tick 0 has no log; force a full copy next time
	}
	v.Tick = w.tick
	v.Snakes = v.Snakes[:w.nslots]
	v.Shield = v.Shield[:(w.nslots+63)/64]
	w.rank(v.Snakes, v.Shield)
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

// nextView returns the buffer of pool to publish into: of those that are
// not cur and have no reader, the most up to date; else a new one while the
// pool has room (it joins the pool); else nil (every buffer is held).
func nextView(pool *[]*View, cur *View, w, h, maxSnakes int) *View {
	var v *View
	for _, b := range *pool {
		if b != cur && b.st.refs.Load() == 0 && (v == nil || b.st.seq > v.st.seq) {
			v = b
		}
	}
	if v != nil || len(*pool) >= maxViews {
		if v != nil {
			v.Serial = serials.Add(1)
		}
		return v
	}
	v = &View{
		W: w, H: h,
		Pix:    make([]Pixel, w*h),
		Snakes: make([]SnakeInfo, 0, maxSnakes),
		Top:    make([]Entry, 0, TopN),
		Kills:  make([]Kill, 0, MaxKills),
		Dirty:  make([]uint64, TilesW(w)*TilesH(h)),
		Fresh:  make([]uint64, FreshWords(w)*TilesH(h)),
		Shield: make([]uint64, 0, (maxSnakes+63)/64),
	}
	v.Serial = serials.Add(1)
	*pool = append(*pool, v)
	return v
}

// serials numbers the publishes of every world and replica (View.Serial).
var serials atomic.Uint64

// sync brings v's pixels and tile marks to grid as of step seq (tick):
// it replays the logs of the steps since v's, notes the last step's cells
// in cells (index) and reports true, or, when
// v is new, further behind than the logs reach or not older than tick,
// copies grid whole and marks every tile. It does not set v's step or tick.
func (v *View) sync(grid []Pixel, logs *[logN][]change, seq, tick uint64, cells []uint64) bool {
	clear(v.Fresh)
	if v.st.seq == 0 || seq-v.st.seq > logN-1 || tick <= v.Tick {
		copy(v.Pix, grid)
		v.markAll(tick)
		return false
	}
	for s := v.st.seq + 1; s <= seq; s++ {
		v.apply(logs[s%logN], tick)
	}
	v.freshen(logs[seq%logN], cells)
	return true
}
