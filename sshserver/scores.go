package sshserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"snaked/game"
	"snaked/internal/scores"
)

// This file is what sessions tell the scores store (Config.Scores, nil for
// none) and the scores command. Recording a finished game never blocks
// (scores.Store.Record queues it); the store is asked questions only at a
// join (who owns a name) and by the scores command, each bounded by
// scoreWait, never from the world's tick.

// scoreWait bounds one question to the store.
const scoreWait = 2 * time.Second

// scoresTop is how many entries the scores command prints.
const scoresTop = 20

// life is the writer's record of the player's current life, for the
// result it becomes (owned by the writer; read by run once the writer is
// done).
type life struct {
	spawn  uint64    // SpawnTick of the life being followed; 0 none
	best   int       // its longest length so far
	kills0 int       // the snake's kills when it began
	start  time.Time // when the writer first saw it
}

// identity is the session's scores identity: its key's fingerprint, or
// its name when it has no key.
func (s *session) identity() scores.ID {
	if s.key != "" {
		return scores.KeyID(s.key)
	}
	return scores.NameID(s.nick)
}

// recordEvery is how long a respawn goes without asking the scores again
// for the player's rank when their last game did not beat their best:
// such a rank only moves as others pass them. A game that beat it makes
// the next respawn ask (the best shows at once anyway: the HUD takes the
// larger of the record's and this run's).
const recordEvery = 30 * time.Second

// recordGap is the least time between two of a session's questions for
// its record.
const recordGap = time.Second

// loadRecord reads the player's all-time best and rank for the HUD: at a
// join, and at a respawn (respawn true) when the last game beat the best
// the scores gave (a game's record is committed within a second of its
// end; until it is, each respawn asks again) or recordEvery has passed.
// At most one question per recordGap.
func (s *session) loadRecord(respawn bool) {
	st := s.srv.cfg.Scores
	now := time.Now().UnixNano()
	if st == nil || st.Err() != nil || s.nick == "" {
		return
	}
	since := now - s.recAt.Load()
	if since < int64(recordGap) ||
		respawn && s.gameBest.Load() <= s.allBest.Load() && since < int64(recordEvery) {
		return
	}
	s.recAt.Store(now)
	ctx, cancel := context.WithTimeout(context.Background(), scoreWait)
	defer cancel()
	var r scores.Record
	var ok bool
	var err error
	id := s.identity()
	deep(func() { r, ok, err = st.Player(ctx, id) })
	if err != nil || !ok {
		return
	}
	s.allBest.Store(int32(r.Best))
	s.allRank.Store(int32(r.Rank))
}

// track notes the player's snake as the writer sees it: a new life
// starts, grows, or ends in a death, which is recorded.
func (s *session) track(info *game.SnakeInfo) {
	l := &s.life
	switch {
	case info.Alive && info.SpawnTick != l.spawn:
		*l = life{spawn: info.SpawnTick, best: info.Length, kills0: info.Kills, start: time.Now()}
	case info.Alive:
		l.best = max(l.best, info.Length)
	case l.spawn != 0 && info.DeathTick >= l.spawn:
		s.record(info, true, time.Duration(info.DeathTick-l.spawn)*time.Second/game.TicksPerSecond)
		l.spawn = 0
	}
}

// record queues the followed life as a finished game.
func (s *session) record(info *game.SnakeInfo, died bool, d time.Duration) {
	st := s.srv.cfg.Scores
	if st == nil || s.nick == "" {
		return
	}
	n := max(s.life.best, info.Length)
	if int32(n) > s.gameBest.Load() {
		s.gameBest.Store(int32(n))
	}
	st.Record(scores.Result{
		ID: s.identity(), Name: s.nick, Length: n,
		Kills: max(info.Kills-s.life.kills0, 0), Died: died, Duration: d, End: time.Now(),
	})
}

// endLife records a life still going when the player leaves. Run calls it
// once the writer is done.
func (s *session) endLife() {
	if s.life.spawn != 0 && s.last.Alive {
		s.record(&s.last, false, time.Since(s.life.start))
		s.life.spawn = 0
	}
}

// command runs what a session without a terminal asked for (the exec
// request's command, or the user name "scores"): it returns the output and
// exit status, and false when there is no such command.
func (s *session) command(cmd string) (out []byte, code uint32, ok bool) {
	f := strings.Fields(cmd)
	if len(f) == 0 && strings.EqualFold(s.user, "scores") {
		f = []string{"scores"}
	}
	if len(f) == 0 || f[0] != "scores" {
		return nil, 0, false
	}
	asJSON := false
	switch {
	case len(f) == 2 && f[1] == "--json":
		asJSON = true
	case len(f) > 1:
		return []byte("usage: scores [--json]\r\n"), 2, true
	}
	st := s.srv.cfg.Scores
	if st == nil {
		return []byte("snaked: scores are off on this server\r\n"), 1, true
	}
	if st.Err() != nil {
		return []byte("snaked: scores are not available right now\r\n"), 1, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), scoreWait)
	defer cancel()
	top, err := st.Top(ctx, scoresTop)
	if errors.Is(err, scores.ErrOff) {
		return []byte("snaked: scores are off on this server\r\n"), 1, true
	}
	if err != nil {
		s.c.log.Warn("scores: top", "err", err)
		return []byte("snaked: scores are not available right now\r\n"), 1, true
	}
	if asJSON {
		return scoresJSON(top), 0, true
	}
	return scoresText(top), 0, true
}

// scoresText is the all-time leaderboard as plain text, one line each
// (CRLF: the channel has no terminal to translate), names as
// game.CleanName makes them.
func scoresText(top []scores.Entry) []byte {
	b := []byte("snaked all-time top " + strconv.Itoa(scoresTop) + "\r\n")
	b = fmt.Appendf(b, "%4s  %5s  %-16s  %s\r\n", "rank", "best", "name", "identity")
	for _, e := range top {
		b = fmt.Appendf(b, "%4d  %5d  %-16s  %s\r\n", e.Rank, e.Best, game.CleanName(e.Name), e.ID.Kind)
	}
	if len(top) == 0 {
		b = append(b, "nobody yet\r\n"...)
	}
	return b
}

// scoreJSON is one leaderboard entry as the scores command prints it. Key
// fingerprints are not printed.
type scoreJSON struct {
	Rank     int    `json:"rank"`
	Name     string `json:"name"`
	Best     int    `json:"best"`
	Identity string `json:"identity"` // "key" or "keyless"
}

// scoresJSON is the all-time leaderboard as one JSON object, names as
// game.CleanName makes them (json.Marshal escapes the C0 controls but
// passes DEL and the C1 controls, which some terminals obey).
func scoresJSON(top []scores.Entry) []byte {
	rows := make([]scoreJSON, 0, len(top))
	for _, e := range top {
		rows = append(rows, scoreJSON{Rank: e.Rank, Name: game.CleanName(e.Name), Best: e.Best, Identity: e.ID.Kind.String()})
	}
	b, _ := json.Marshal(struct {
		Top []scoreJSON `json:"top"`
	}{rows})
	return append(b, '\n')
}
