package game

import (
	"fmt"
	"math/bits"
)

// check verifies the world's invariants: the occupancy grid equals the union
// of the live bodies and the fruit, bodies are disjoint and contiguous, the
// counters agree, every record's dir is in World.dirs, the bot bookkeeping (list, numbers, names) agrees with
// the snakes, and the newest view's pixels equal the grid and its Kills
// the world's recent deaths. Call it between Steps with no Join or Leave
// queued.
func (w *World) check() error {
	want := make([]Pixel, len(w.grid))
	fruit := 0
	for i, p := range w.grid {
		switch p.Kind() {
		case Fruit:
			if p != MakePixel(Fruit, 0, 0) {
				return fmt.Errorf("pixel %d: fruit with a slot or colour: %x", i, p)
			}
			want[i] = p
			fruit++
		case Body, Head:
			s := &w.snakes[p.Slot()]
			if p.Slot() >= w.nslots || !s.used || !s.alive {
				return fmt.Errorf("pixel %d: %x belongs to no live snake", i, p)
			}
		}
	}
	if fruit != w.fruit {
		return fmt.Errorf("fruit count %d, grid has %d", w.fruit, fruit)
	}
	players, bots := 0, 0
	for i := range w.snakes {
		if w.dirs[i] != w.snakes[i].dir {
			return fmt.Errorf("slot %d: dirs has %v, its record %v", i, w.dirs[i], w.snakes[i].dir)
		}
	}
	for i := 0; i < w.nslots; i++ {
		s := &w.snakes[i]
		if !s.used {
			continue
		}
		if s.bot {
			bots++
		} else {
			players++
		}
		if !s.alive {
			continue
		}
		if s.length < 1 || s.length > len(s.body) {
			return fmt.Errorf("snake %d: length %d", i, s.length)
		}
		for k := 0; k < s.length; k++ {
			j := s.at(k)
			if want[j] != 0 {
				return fmt.Errorf("snake %d: pixel %d already taken by %x", i, j, want[j])
			}
			kind := Body
			if k == s.length-1 {
				kind = Head
			}
			want[j] = MakePixel(kind, i, s.colour)
			if a := s.at(k - 1); k > 0 && w.dist(a%int32(w.w), a/int32(w.w), j%int32(w.w), j/int32(w.w)) != 1 {
				return fmt.Errorf("snake %d: body not contiguous at %d", i, k)
			}
		}
		if h := s.head; h != s.headY*int32(w.w)+s.headX || h != s.at(s.length-1) {
			return fmt.Errorf("snake %d: head %d at (%d,%d)", i, h, s.headX, s.headY)
		}
	}
	if players != w.players || bots != w.bots {
		return fmt.Errorf("counts players %d/%d bots %d/%d", players, w.players, bots, w.bots)
	}
	if err := w.checkBots(); err != nil {
		return err
	}
	for i := range want {
		if want[i] != w.grid[i] {
			return fmt.Errorf("pixel %v: grid %x, bodies+fruit %x", w.point(int32(i)), w.grid[i], want[i])
		}
	}
	if v := w.views.newest.Load(); v.st.seq == w.seq || w.seq == 0 {
		for i := range v.Pix {
			if v.Pix[i] != w.grid[i] {
				return fmt.Errorf("view pixel %d: %x, grid %x", i, v.Pix[i], w.grid[i])
			}
		}
		if err := w.checkKills(v); err != nil {
			return err
		}
	}
	if v := w.views.newest.Load(); v.st.rec == w.seq {
		if err := w.checkRecords(v); err != nil {
			return err
		}
	}
	return nil
}

// checkRecords verifies v's records and heads against the snakes: each
// slot's as a view of the world's last step shows it.
func (w *World) checkRecords(v *View) error {
	if len(v.Snakes) != w.nslots || len(v.Heads) != w.nslots {
		return fmt.Errorf("view of %d records and %d heads, world of %d slots", len(v.Snakes), len(v.Heads), w.nslots)
	}
	for i := range v.Snakes {
		s := &w.snakes[i]
		want, head := SnakeInfo{}, Point{}
		if s.used {
			want, head = s.info(), s.headPoint()
		}
		if v.Snakes[i] != want {
			return fmt.Errorf("slot %d: view's record %+v, the snake's %+v", i, v.Snakes[i], want)
		}
		if v.Heads[i] != head {
			return fmt.Errorf("slot %d: view's head %v, the snake's %v", i, v.Heads[i], head)
		}
	}
	return nil
}

// checkBots verifies the bots' bookkeeping: every bot slot is listed once
// with its number, numbers and names are unique and match, the slots in
// use are counted, and no more bots exist than the names allow.
func (w *World) checkBots() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.count != w.players+w.bots {
		return fmt.Errorf("slots in use %d, players %d + bots %d", w.count, w.players, w.bots)
	}
	if len(w.botList) != w.bots || w.bots > len(w.botNames) {
		return fmt.Errorf("bot list %d, bots %d, names %d", len(w.botList), w.bots, len(w.botNames))
	}
	nums := make(map[int32]bool)
	for k, slot := range w.botList {
		s, b := &w.snakes[slot], &w.box[slot]
		if !s.used || !s.bot || !b.bot || b.id != s.id || w.botPos[slot] != int32(k) {
			return fmt.Errorf("bot list entry %d: slot %d (used %v bot %v/%v, pos %d)", k, slot, s.used, s.bot, b.bot, w.botPos[slot])
		}
		if nums[b.num] || w.botNums[b.num/64]&(1<<(b.num%64)) == 0 || s.name != botName(int(b.num)+1) {
			return fmt.Errorf("bot %d: number %d taken twice or not marked, name %q", slot, b.num+1, s.name)
		}
		nums[b.num] = true
	}
	used := 0
	for _, u := range w.botNums {
		used += bits.OnesCount64(u)
	}
	if used != len(nums) {
		return fmt.Errorf("%d bot numbers marked, %d bots", used, len(nums))
	}
	return nil
}

// checkKills verifies v.Kills: at most MaxKills, oldest first, all from
// the last KillTicks ticks, killer fields consistent, and equal to the
// newest MaxKills of the world's deaths in that window.
func (w *World) checkKills(v *View) error {
	if len(v.Kills) > MaxKills {
		return fmt.Errorf("%d kills in the view", len(v.Kills))
	}
	for k, x := range v.Kills {
		if x.Tick > v.Tick || x.Tick+KillTicks <= v.Tick || k > 0 && x.Tick < v.Kills[k-1].Tick {
			return fmt.Errorf("tick %d: kill %d at tick %d out of the window or order", v.Tick, k, x.Tick)
		}
		if (x.Killer == "") != (x.KillerSlot < 0) || x.HeadOn && x.KillerSlot >= 0 || !x.HeadOn && x.Other != "" || x.KillerSlot < 0 && x.KillerBot {
			return fmt.Errorf("tick %d: inconsistent kill %+v", v.Tick, x)
		}
	}
	var want []Kill
	vs := w.views
	for k := vs.nkills - min(vs.nkills, MaxKills); k < vs.nkills; k++ {
		if x := vs.kills[k%MaxKills]; x.Tick+KillTicks > v.Tick {
			want = append(want, x)
		}
	}
	if len(want) != len(v.Kills) {
		return fmt.Errorf("tick %d: view has %d kills, the world %d", v.Tick, len(v.Kills), len(want))
	}
	for k := range want {
		if want[k] != v.Kills[k] {
			return fmt.Errorf("tick %d: kill %d is %+v, want %+v", v.Tick, k, v.Kills[k], want[k])
		}
	}
	return nil
}
