package render

import "snaked/game"

// This file draws the kill feed: up to feedMax short lines at the
// playfield's top right ("alice cut off bob", "bob ran into themselves",
// "carol and dave met head-on"; the player is "you", bots are marked '~'
// as on the leaderboard) for deaths near the camera (within a screen of
// its centre: on the playfield or half a screen past its edges; two
// screens cost 1.4x the feed's bytes in a 500-player crowd), deaths that
// involve the player and deaths that involve
// the top 10 (the killer is on View.Top, or the victim was long enough to
// be). A line stays feedShow ticks, then disappears; another death takes
// its row only once it has stayed feedDwell ticks, unless it is the
// player's.
//
// Each line keeps the row it got until it goes: a new line takes a free
// row (or the oldest line's), so lines are drawn once and erased once
// rather than scrolling. The source is View.Kills (game.KillTicks of
// deaths, oldest first); a head-on, which the game reports once per
// victim, is shown once.

// Kill feed bounds.
const (
	feedMax  = 3
	feedShow = 4 * game.TicksPerSecond
	// feedDwell is how long a line stays at least before another death
	// takes its row; the player's own deaths and kills take one at once.
	// In a crowd deaths come faster than anyone reads: ~5 a second within
	// a screen of a player in a 2,500-player world, so without it a line
	// would last ~0.6 s (and redrawing the feed would be ~12 % of a
	// frame's work).
	feedDwell = 2 * game.TicksPerSecond
	// feedNameMin is the shortest a line cuts its names to, to fit.
	feedNameMin = 3
	// feedLineCap is the capacity a line's text starts with: the longest
	// (two bot names of game.MaxName and " met head-on") fits.
	feedLineCap = 64
)

// The longest line fits feedLineCap.
const _ = uint(feedLineCap - 2*(1+game.MaxName) - len(" and  met head-on"))

// Kill feed line kinds.
const (
	kCut    = iota // a cut b off
	kSelf          // a ran into themselves
	kHeadOn        // a and b met head-on
)

// kill is one line of the kill feed.
type kill struct {
	tick       uint64
	a, b       []byte // names, cut to game.MaxName bytes
	txt        []byte // this frame's text
	last       []byte // the last frame's text ("" when the line was not drawn), unless same
	x          int    // this frame's first cell
	room       int    // the cells txt was made to fit in; -1 for a new line
	on         bool
	kind       uint8
	youA, youB bool // the name is the player's
	botA, botB bool
	fg, lastFg uint8 // its colour, this frame's and the last's
	same       bool  // txt is the last frame's text, kept
}

func (k *kill) init() {
	k.a, k.b, k.txt, k.last = make([]byte, 0, game.MaxName), make([]byte, 0, game.MaxName), make([]byte, 0, feedLineCap), make([]byte, 0, feedLineCap)
}

// layoutFeed takes in the view's new kills, drops the lines that are due
// and records the rest as overlays; it reports whether any shows. The
// radar must have been laid out (the feed leaves its rows' room to it).
func (r *Renderer) layoutFeed(v *game.View, own int) bool {
	if r.opt.noFeed {
		return false
	}
	r.feedUpdate(v, own)
	any := false
	for i := range r.feed {
		k := &r.feed[i]
		room := r.cols - 2 // a cell from the edge
		if r.rad.on && i < r.rad.n {
			room -= 1 + r.rad.ln[i] + 2
		}
		// A line drawn last frame whose text was made for the same room
		// keeps it (most frames: a line stays feedShow ticks).
		k.same = k.on && i < r.pfRows && k.room == room && len(k.txt) > 0
		k.lastFg = k.fg
		if !k.same {
			k.last = append(k.last[:0], k.txt...)
			k.txt = k.txt[:0]
		}
		if !k.on || i >= r.pfRows {
			continue
		}
		if !k.same {
			r.feedText(k, room)
			k.room = room
		}
		if len(k.txt) == 0 {
			continue
		}
		k.x = r.cols - 1 - len(k.txt)
		k.fg = white
		if k.youA || k.youB {
			k.fg = brightYellow
		}
		r.addOvl(rect{k.x, r.pfTop + i, r.cols - 1, r.pfTop + i + 1}, false)
		any = true
	}
	return any
}

// feedUpdate drops the lines that are due and adds the view's kills that
// it has not seen and that concern the player.
func (r *Renderer) feedUpdate(v *game.View, own int) {
	t := v.Tick
	if t < r.feedAt { // an older view: another world
		for i := range r.feed {
			r.feed[i].on = false
		}
		r.feedAt = 0
	}
	for i := range r.feed {
		if k := &r.feed[i]; k.on && k.tick+feedShow <= t {
			k.on = false
		}
	}
	room := r.feedRoom(t) // again only after a line is added
	// The kills' tests that are the same for every renderer, made once
	// for the view (scene) when there is one, else here for each kill.
	var sk []sceneKill
	if s := sceneFor(v); s != nil && len(s.kills) == len(v.Kills) && !r.opt.noScene {
		sk = s.kills
	}
	var top uint64
	if sk == nil {
		top = topSlots(v)
	}
	start := len(v.Kills)
	for start > 0 && v.Kills[start-1].Tick > r.feedAt {
		start--
	}
	var own1 sceneKill
	for i := start; i < len(v.Kills); i++ {
		e := &own1
		if sk != nil {
			e = &sk[i]
		} else {
			own1 = sceneKillOf(v, &v.Kills[i], top)
		}
		if e.tick+feedShow <= t {
			continue
		}
		// The player's death or kill, or, room permitting, a death within
		// a screen of the camera or about the top 10.
		if !e.mine(v, own, &v.Kills[i]) && !(room && (e.notable || r.feedNear(v, int(e.x), int(e.y)))) {
			continue
		}
		if k := &v.Kills[i]; !r.feedHas(k) {
			r.feedAdd(v, own, k)
			room = r.feedRoom(t)
		}
	}
	r.feedAt = t
}

// mine reports whether k, the kill e was made from, is the player's
// death or kill.
func (e *sceneKill) mine(v *game.View, own int, k *game.Kill) bool {
	return own >= 0 && (int(e.victim) == own || int(e.killer) == own || e.headOn && k.Other == v.Snakes[own].Name)
}

// feedRoom reports whether a row is free, or its line has stayed
// feedDwell ticks, at tick t.
func (r *Renderer) feedRoom(t uint64) bool {
	for i := range r.feed {
		if l := &r.feed[i]; !l.on || l.tick+feedDwell <= t {
			return true
		}
	}
	return false
}

// isYou reports whether the snake in slot named name is the player's.
func isYou(v *game.View, own, slot int, name string) bool {
	return own >= 0 && slot == own && v.Snakes[own].Name == name
}

// named returns slot when its snake bears name, else -1: isYou(v, own,
// slot, name) is own >= 0 && named(v, slot, name) == own.
func named(v *game.View, slot int, name string) int32 {
	if slot >= 0 && slot < len(v.Snakes) && v.Snakes[slot].Name == name {
		return int32(slot)
	}
	return -1
}

// topSlots has bit s%64 set for the slot s of each snake on View.Top: a
// killer whose bit is clear is not on it (feedNotable looks for it only
// when its bit is set).
func topSlots(v *game.View) uint64 {
	var m uint64
	for _, e := range v.Top {
		m |= 1 << (uint(e.Slot) % 64)
	}
	return m
}

// feedNear reports whether world pixel (x, y) is within a screen of the
// camera's centre.
func (r *Renderer) feedNear(v *game.View, x, y int) bool {
	dx := wrapDelta(x-(r.camX+r.cols/2), v.W)
	dy := wrapDelta(y-(r.camY+r.pfRows), v.H)
	return max(dx, -dx) <= r.cols && max(dy, -dy) <= 2*r.pfRows
}

// feedNotable reports whether k is about the top 10, for every renderer
// alike; top is topSlots(v).
func feedNotable(v *game.View, k *game.Kill, top uint64) bool {
	if n := len(v.Top); n < game.TopN || k.Length >= v.Top[n-1].Length {
		return true // the victim was long enough for the top 10
	}
	if k.KillerSlot < 0 || top>>(uint(k.KillerSlot)%64)&1 == 0 {
		return false
	}
	for _, e := range v.Top {
		if e.Slot == k.KillerSlot && e.Name == k.Killer {
			return true
		}
	}
	return false
}

// feedHas reports whether k is shown already: the other half of a
// head-on.
func (r *Renderer) feedHas(k *game.Kill) bool {
	if !k.HeadOn {
		return false
	}
	for i := range r.feed {
		l := &r.feed[i]
		if l.on && l.kind == kHeadOn && l.tick == k.Tick && sameName(l.a, k.Other) && sameName(l.b, k.Victim) {
			return true
		}
	}
	return false
}

// sameName reports whether b is name as kept (game.AppendName's bytes of
// it cut to game.MaxName).
func sameName(b []byte, name string) bool {
	if len(b) != min(len(name), game.MaxName) {
		return false
	}
	for i, c := range b {
		if n := name[i]; c != n && (c != '?' || game.NameByte(n)) {
			return false
		}
	}
	return true
}

// feedAdd puts k on a free row, or on the oldest line's (feedUpdate
// makes sure that one has stayed feedDwell ticks, unless k is the
// player's).
func (r *Renderer) feedAdd(v *game.View, own int, k *game.Kill) {
	j := 0
	for i := range r.feed {
		if !r.feed[i].on {
			j = i
			break
		}
		if r.feed[i].tick < r.feed[j].tick {
			j = i
		}
	}
	l := &r.feed[j]
	l.on, l.tick, l.room = true, k.Tick, -1
	l.a, l.b = l.a[:0], l.b[:0]
	l.youB, l.botB = false, false
	switch {
	case k.HeadOn:
		l.kind = kHeadOn
		l.a, l.youA, l.botA = game.AppendName(l.a, k.Victim, game.MaxName), isYou(v, own, k.VictimSlot, k.Victim), k.VictimBot
		l.b, l.youB = game.AppendName(l.b, k.Other, game.MaxName), own >= 0 && k.Other == v.Snakes[own].Name
		for i := range v.Kills { // the other half says whether it is a bot
			if o := &v.Kills[i]; o.Tick == k.Tick && o.HeadOn && o.Victim == k.Other && o.Other == k.Victim {
				l.botB = o.VictimBot
			}
		}
	case k.Killer != "":
		l.kind = kCut
		l.a, l.youA, l.botA = game.AppendName(l.a, k.Killer, game.MaxName), isYou(v, own, k.KillerSlot, k.Killer), k.KillerBot
		l.b, l.youB, l.botB = game.AppendName(l.b, k.Victim, game.MaxName), isYou(v, own, k.VictimSlot, k.Victim), k.VictimBot
	default:
		l.kind = kSelf
		l.a, l.youA, l.botA = game.AppendName(l.a, k.Victim, game.MaxName), isYou(v, own, k.VictimSlot, k.Victim), k.VictimBot
	}
}

// feedText makes k's text in at most room cells, cutting names as needed
// (to feedNameMin bytes at least); empty when it cannot fit.
func (r *Renderer) feedText(k *kill, room int) {
	for n := game.MaxName; n >= feedNameMin; n-- {
		b := k.txt[:0]
		b = feedName(b, k.a, k.youA, k.botA, n)
		switch k.kind {
		case kCut:
			b = append(b, " cut off "...)
			b = feedName(b, k.b, k.youB, k.botB, n)
		case kSelf:
			if k.youA {
				b = append(b, " ran into yourself"...)
			} else {
				b = append(b, " ran into themselves"...)
			}
		case kHeadOn:
			b = append(b, " and "...)
			b = feedName(b, k.b, k.youB, k.botB, n)
			b = append(b, " met head-on"...)
		}
		k.txt = b
		if len(b) <= room {
			return
		}
	}
	k.txt = k.txt[:0]
}

// feedName appends a name to a feed line: "you", or the name cut to n
// bytes, '~' first for a bot.
func feedName(b, name []byte, you, bot bool, n int) []byte {
	switch {
	case you:
		return append(b, "you"...)
	case bot:
		b = append(b, '~')
	}
	return append(b, name[:min(len(name), n)]...)
}

// paintFeed draws the kill feed: lines about the player in bright
// yellow, others in white. A line the same as in the last frame (so at
// the same place: right-aligned), on cells nothing composed again, is
// left as it is.
func (r *Renderer) paintFeed(v *game.View, own int) {
	for i := range r.feed {
		k := &r.feed[i]
		if !k.on || i >= r.pfRows || len(k.txt) == 0 ||
			k.fg == k.lastFg && (k.same || string(k.txt) == string(k.last)) && r.unchanged(rect{k.x, r.pfTop + i, r.cols - 1, r.pfTop + i + 1}) {
			continue
		}
		putOver(r, v, own, k.x, r.pfTop+i, k.txt, k.fg)
	}
}
