package sshserver

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"snaked/game"
	"snaked/internal/scores"
)

// This file is how a session gets its name past the claims: who owns a
// name (asked of the scores, through a cache), the claim once the player
// is in, the pacing of the join screen's tries, and the short notice in
// the banner when a name is played unclaimed.
//
// A name that cannot be checked (the store is away, a question timed
// out) is not handed out: the join screen says so, and the guest names
// the server generates, never claimed by anyone, still get in. A refused
// claim never refuses play: the player plays the name unclaimed and the
// banner says why.

// Owner cache bounds: a known owner is trusted this long, a name known to
// be free a little, and the cache holds at most maxOwners names.
const (
	ownerKeep = 5 * time.Minute
	freeKeep  = 5 * time.Second
	maxOwners = 1 << 16
)

// owners caches who holds which name (lower case), so that the common
// join (a player back under their own name) asks the store nothing. In a
// cluster each gateway has its own; the simulation checks every join
// against the store again, so a gateway's stale entry can refuse a name
// for a while but never hand one out.
type owners struct {
	mu sync.Mutex            // guards m
	m  map[string]ownerEntry // name -> its owner as last heard
}

// ownerEntry is one name's holder as last heard: a key fingerprint, ""
// for nobody, or anotherKey, until the entry lapses.
type ownerEntry struct {
	holder string
	until  time.Time
}

// get returns name's cached holder ("" nobody) and whether it is cached.
func (o *owners) get(name string, now time.Time) (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	e, ok := o.m[name]
	if !ok || now.After(e.until) {
		return "", false
	}
	return e.holder, true
}

// put notes that holder ("" nobody) holds name, as heard at now.
func (o *owners) put(name, holder string, now time.Time) {
	keep := ownerKeep
	if holder == "" {
		keep = freeKeep
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = make(map[string]ownerEntry)
	}
	if _, ok := o.m[name]; !ok && len(o.m) >= maxOwners {
		for k, e := range o.m {
			if now.After(e.until) {
				delete(o.m, k)
			}
		}
		if len(o.m) >= maxOwners {
			clear(o.m) // only a cache: the next joins ask again
		}
	}
	o.m[name] = ownerEntry{holder, now.Add(keep)}
}

// drop forgets name's owner.
func (o *owners) drop(name string) {
	o.mu.Lock()
	delete(o.m, name)
	o.mu.Unlock()
}

// Join-screen refusals.
const (
	whyCannotCheck = "cannot check names right now, try again or pick another"
	whyTooFast     = "one moment: try again in a second"
)

// nameRefused says why name is not the session's to play ("" when it
// is): another key holds it, or it cannot be checked now. With no scores
// nothing is claimed; the names the server generates are never claimed.
func (s *session) nameRefused(name string) string {
	st := s.srv.cfg.Scores
	if st == nil || game.IsGuestName(name) {
		return ""
	}
	key := strings.ToLower(name)
	now := time.Now()
	if holder, ok := s.srv.owners.get(key, now); ok {
		switch {
		case holder == "" || holder == s.key:
			return ""
		case s.key == "":
			return ownedBy(name, s.key)
		}
		// another key's as last heard: ask, in case it lapsed or moved
		// to this key since
	}
	if st.Err() != nil {
		return whyCannotCheck
	}
	ctx, cancel := context.WithTimeout(context.Background(), scoreWait)
	defer cancel()
	var h scores.Holding
	var err error
	deep(func() { h, err = st.Holding(ctx, name, s.key, now) })
	switch {
	case errors.Is(err, scores.ErrOff):
		return "" // the cluster's simulation keeps no scores: nothing is claimed
	case err != nil:
		s.c.log.Warn("scores: name holder", "err", err)
		return whyCannotCheck
	case h == scores.Free:
		s.srv.owners.put(key, "", now)
		return ""
	case h == scores.Yours && s.key != "":
		s.srv.owners.put(key, s.key, now)
		return ""
	}
	s.srv.owners.put(key, anotherKey, now)
	return ownedBy(name, s.key)
}

// anotherKey is the owner cache's holder of a name a key holds that is
// not the one that asked (which one, the store does not say).
const anotherKey = "*"

// ownedBy is the refusal of a name another key owns.
func ownedBy(name, key string) string {
	if key == "" {
		return "\"" + name + "\" belongs to a player with a key: pick another"
	}
	return "\"" + name + "\" belongs to another key: pick another"
}

// claim records that the session's key plays name, once it is in the
// world; keyless players and the names the server generates claim
// nothing. When the claim is refused the player plays the name unclaimed,
// and the banner says why for a few seconds.
func (s *session) claim(name string) {
	st := s.srv.cfg.Scores
	if st == nil || s.key == "" || game.IsGuestName(name) {
		return
	}
	key := strings.ToLower(name)
	now := time.Now()
	if fp, ok := s.srv.owners.get(key, now); ok && fp == s.key {
		return // held already: every game recorded under it keeps it
	}
	ctx, cancel := context.WithTimeout(context.Background(), scoreWait)
	defer cancel()
	var r scores.ClaimResult
	var err error
	deep(func() { r, err = st.Claim(ctx, name, s.key, s.from, now) })
	switch {
	case errors.Is(err, scores.ErrOff):
	case err != nil:
		s.c.log.Warn("scores: claim", "nick", name, "err", err)
		s.notify(name + " is not kept: names cannot be checked now")
	case r.Outcome == scores.Claimed:
		s.srv.owners.put(key, s.key, now)
		if r.Released != "" {
			s.srv.owners.drop(r.Released)
			s.notify(name + " is yours; " + game.CleanName(r.Released) + " is free again")
		}
	case r.Outcome == scores.Taken:
		// another key claimed it between the check and the join
		s.srv.owners.drop(key)
		s.c.log.Info("scores: playing a name another key claimed meanwhile", "nick", name)
		s.notify(name + " is another key's: played unclaimed")
	case r.Outcome == scores.Limited:
		s.notify(name + " is not kept: too many new names from here")
	}
}

// noticeFor is how long a session's own notice shows in the banner.
const noticeFor = 8 * time.Second

// notice is a message for the session's banner, shown until a time.
type notice struct {
	text  string
	until time.Time
}

// notify shows text in the session's banner for noticeFor (the server's
// own notice, "world restarting", goes first). Names in text are clean
// (game.CleanName) already.
func (s *session) notify(text string) {
	s.notice.Store(&notice{text: text, until: time.Now().Add(noticeFor)})
}

// noticeNow is the session's notice at now, or "".
func (s *session) noticeNow(now time.Time) string {
	if n := s.notice.Load(); n != nil && now.Before(n.until) {
		return n.text
	}
	return ""
}

// Pacing of the join screen's tries: at most one per paceGap, the gap
// doubling after each refused name up to paceMax, back to paceGap once a
// name is taken.
const (
	paceGap = 300 * time.Millisecond
	paceMax = 5 * time.Second
)

// pacer paces one session's tries on the join screen (the screen's
// program calls submit, one at a time).
type pacer struct {
	next time.Time
	gap  time.Duration
}

// submit is the join screen's Enter: it tries name (enter) unless the
// last try was too recent.
func (s *session) submit(name string) string {
	p := &s.pace
	now := time.Now()
	if now.Before(p.next) {
		return whyTooFast
	}
	why := s.enter(name)
	if why == "" {
		p.gap = 0
	} else {
		p.gap = min(max(2*p.gap, paceGap), paceMax)
	}
	p.next = now.Add(max(p.gap, paceGap))
	return why
}
