package game

import (
	"math"
	"strconv"
	"strings"
)

// This file keeps the population: the default world size and bot target for
// a server, and the bots that fill the world up to that target, stepping
// aside as people join. docs/RULES.md ("Population") states the rules.

// Density the defaults are built on (docs/RULES.md says why).
const (
	// pxPerPlayer is the world area per player of a full server:
	// 2048x512 pixels for 3,000 players, the size every load figure in
	// docs/ was measured at.
	pxPerPlayerNum, pxPerPlayerDen = 2048 * 512, 3000

	// PxPerSnake is the world area per snake that AutoBotTarget fills to.
	PxPerSnake = 2048

	// minAutoH is the height of the smallest world AutoSize returns
	// (512x128).
	minAutoH = 128
)

// AutoSize returns the world size for a server of capacity players: about
// 350 pixels per player (AutoSize(3000) is 2048x512), four times as wide as
// high, the height a multiple of 8, at least 512x128 and at most
// MaxSide wide (so W*H <= MaxPixels).
func AutoSize(capacity int) (w, h int) {
	area := float64(max(capacity, 0)) * pxPerPlayerNum / pxPerPlayerDen
	h = int(math.Sqrt(area/4)+4) / 8 * 8
	h = min(max(h, minAutoH), MaxSide/4)
	return 4 * h, h
}

// AutoBotTarget returns the population (people + bots) that keeps a w x h
// world at one snake per PxPerSnake pixels: about 1.7 snakes on an 80x24
// terminal's 80x44-pixel playfield if they were spread evenly, and one to
// three in practice (see docs/RULES.md).
func AutoBotTarget(w, h int) int {
	if w <= 0 || h <= 0 {
		return 0
	}
	return min(w*h/PxPerSnake, MaxCapacity)
}

// botFill bounds the bots added per tick when people leave (New adds the
// first ones all at once).
const botFill = 4

// Retiring a live surplus bot: populate looks at retireLook bots a tick and
// retires the first one no player can see, i.e. with no player's head
// within sightW+length columns and sightH+length rows of its head.
const (
	retireLook     = 2
	sightW, sightH = 160, 96
)

// botName is the name of bot number n (1-based).
func botName(n int) string { return "bot" + strconv.Itoa(n) }

// isBotName reports whether key (lower case) has the bots' form: "bot"
// and digits. People may not take such names.
func isBotName(key string) bool {
	d, ok := strings.CutPrefix(key, "bot")
	if !ok || d == "" {
		return false
	}
	for _, c := range []byte(d) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// wantBots is the number of bots the world keeps for the current number
// of people: max(Bots, BotTarget - players).
func (w *World) wantBots() int { return max(w.cfg.Bots, w.cfg.BotTarget-w.players) }

// populate brings the bots towards wantBots: surplus bots waiting for a
// spawn leave, a surplus bot no player can see may leave, and missing bots
// are added, at most n of them. It runs in drain with w.mu held.
func (w *World) populate(n int) {
	want := w.wantBots()
	w.want = want
	if w.bots > want && len(w.spawnq) > 0 {
		keep := w.spawnq[:0]
		for _, slot := range w.spawnq {
			if s := &w.snakes[slot]; s.bot && w.bots > want && w.box[slot].id == s.id {
				s.wantLife = false // it is not in the queue any more
				w.retire(slot)
				continue
			}
			keep = append(keep, slot)
		}
		w.spawnq = keep
	}
	for k := 0; k < retireLook && w.bots > want && len(w.botList) > 0; k++ {
		w.rcur = (w.rcur + 1) % len(w.botList)
		slot := w.botList[w.rcur]
		if s := &w.snakes[slot]; s.alive && w.box[slot].id == s.id && !w.seen(s) {
			w.retire(slot)
			break
		}
	}
	for k := 0; k < n && w.bots < want && w.count < w.cfg.MaxSnakes && len(w.botList) < len(w.botNames); k++ {
		w.addBot()
	}
}

// seen reports whether a player's head (as of the last publish) is near
// enough to bot s that the player may see it.
func (w *World) seen(s *snake) bool {
	nx, ny := int32(sightW+s.length), int32(sightH+s.length)
	W, H := int32(w.w), int32(w.h)
	for _, e := range w.eyes {
		dx, dy := e.x-s.headX, e.y-s.headY
		if dx < 0 {
			dx = -dx
		}
		if dy < 0 {
			dy = -dy
		}
		if min(dx, W-dx) <= nx && min(dy, H-dy) <= ny {
			return true
		}
	}
	return false
}

// addBot takes a free slot for a new bot with the lowest free number and
// queues its spawn. w.mu must be held and w.count < MaxSnakes.
func (w *World) addBot() {
	var slot int32
	if k := len(w.free); k > 0 {
		slot = w.free[k-1]
		w.free = w.free[:k-1]
	} else {
		slot = int32(w.slots)
		w.slots++
		w.nslots = w.slots
	}
	w.count++
	num := w.takeNum()
	b := &w.box[slot]
	if b.gen++; b.gen == 0 {
		b.gen = 1
	}
	*b = inbox{gen: b.gen, id: makeID(b.gen, slot), name: w.botNames[num], bot: true, num: int32(num)}
	w.botPos[slot] = int32(len(w.botList))
	w.botList = append(w.botList, slot)
	w.initSnake(slot, b)
}

// takeNum returns the lowest free bot number (0-based index into botNames)
// and marks it used.
func (w *World) takeNum() int {
	for i, u := range w.botNums {
		if u != math.MaxUint64 {
			b := 0
			for u&(1<<b) != 0 {
				b++
			}
			w.botNums[i] |= 1 << b
			return i*64 + b
		}
	}
	panic("game: no bot number free") // populate checks len(botList) < len(botNames)
}

// unlist drops bot slot from the bot list and frees its number. w.mu must
// be held.
func (w *World) unlist(slot int32) {
	p := w.botPos[slot]
	last := w.botList[len(w.botList)-1]
	w.botList[p] = last
	w.botPos[last] = p
	w.botList = w.botList[:len(w.botList)-1]
	w.botPos[slot] = -1
	num := w.box[slot].num
	w.botNums[num/64] &^= 1 << (num % 64)
}

// retire removes bot slot from the world and frees its slot and number
// (its body, if alive, disappears without leaving fruit). w.mu must be
// held, and the slot must still hold that bot (not taken by a Join).
func (w *World) retire(slot int32) {
	w.unlist(slot)
	w.remove(slot)
	b := &w.box[slot]
	*b = inbox{gen: b.gen}
	w.free = append(w.free, slot)
	w.count--
}

// retireDead retires dead bot slot if it is still surplus; it reports
// whether it did. Step calls it without w.mu held.
func (w *World) retireDead(slot int32) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := &w.snakes[slot]
	if w.bots <= w.want || w.box[slot].id != s.id {
		return false
	}
	w.retire(slot)
	return true
}
