package status

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"snaked/game"
	"snaked/internal/scores"
)

// snapshot is everything the page serves at one moment, encoded once for
// every viewer. It is immutable once published.
type snapshot struct {
	at      time.Time
	serial  uint64        // 1 for New's, one more for each later
	next    chan struct{} // closed when a newer snapshot replaces this one
	page    []byte        // the HTML page
	status  []byte        // /api/status
	scores  []byte        // /api/scores
	minimap []byte        // /minimap.png
	events  []byte        // a stream's "status" event: status as its data
	board   *boards       // what scores was made from (nil: none read yet)
}

// Status is /api/status: who is online and the live top 10, with what a
// player needs to connect.
type Status struct {
	Version     string  `json:"version"`
	Fingerprint string  `json:"fingerprint"` // the host key's, SHA256:... as OpenSSH prints it
	KnownHosts  string  `json:"known_hosts"` // a line for ~/.ssh/known_hosts ("" when the join command names no host)
	Join        string  `json:"join"`        // the command that joins
	Players     int     `json:"players"`     // people playing
	Spectators  int     `json:"spectators"`  // people watching
	Bots        int     `json:"bots"`        // server-side snakes
	Top         []Live  `json:"top"`         // the live top 10, longest first
	World       [2]int  `json:"world"`       // its width and height in pixels; 0 0 while a gateway has no world yet
	Tick        uint64  `json:"tick"`        // the world's tick this was read at
	Minimap     string  `json:"minimap"`     // the URL of this moment's minimap (PNG)
	Updated     string  `json:"updated"`     // when this was read, RFC 3339 UTC
	Scores      *Scores `json:"-"`           // the boards, for the page
}

// Live is one line of the live top 10.
type Live struct {
	Rank   int    `json:"rank"`
	Name   string `json:"name"` // cleaned: [A-Za-z0-9_-], anything else as '?'
	Length int    `json:"length"`
	Bot    bool   `json:"bot"`
}

// Scores is /api/scores: the all-time and today's boards from the scores
// database.
type Scores struct {
	Available bool    `json:"available"` // false: scores are off, or the database cannot be read now (the boards are the last read, if any)
	AllTime   []Score `json:"all_time"`  // the top BoardN of all time
	Today     []Score `json:"today"`     // the top BoardN of Day
	Day       string  `json:"day"`       // today's UTC date, YYYY-MM-DD
	Updated   string  `json:"updated"`   // when the boards were last read, RFC 3339 UTC ("" never)
}

// Score is one line of a board.
type Score struct {
	Rank int    `json:"rank"` // equal bests share a rank
	Name string `json:"name"` // cleaned, as in Live
	Best int    `json:"best"`
}

// boards is one read of the scores.
type boards struct {
	at      time.Time // when it was read (or tried)
	gen     uint64    // one more for each read that changed what is shown
	scores  Scores
	encoded []byte // scores as JSON
	events  []byte // a stream's "scores" event
}

// readBoards reads the boards at now. A read that fails keeps the last
// boards read, marked not available.
func (s *Server) readBoards(now time.Time) *boards {
	ctx, cancel := context.WithTimeout(context.Background(), scoresWait)
	defer cancel()
	prev := s.boards.Load()
	sc := Scores{Available: true, Day: now.UTC().Format(time.DateOnly), Updated: now.UTC().Format(time.RFC3339)}
	all, err := s.cfg.Boards.Top(ctx, BoardN)
	var today []scores.Entry
	if err == nil {
		today, err = s.cfg.Boards.TopToday(ctx, BoardN, now)
	}
	if err != nil {
		if !errors.Is(err, scores.ErrDisabled) && !errors.Is(err, scores.ErrOff) {
			s.log.Debug("status: scores", "err", err)
		}
		sc = Scores{Day: sc.Day, AllTime: []Score{}, Today: []Score{}}
		if prev != nil {
			sc.AllTime, sc.Today, sc.Updated = prev.scores.AllTime, prev.scores.Today, prev.scores.Updated
		}
	} else {
		sc.AllTime, sc.Today = board(all), board(today)
	}
	b := &boards{at: now, scores: sc, gen: 1}
	if prev != nil {
		b.gen = prev.gen
		if !sameBoards(prev.scores, sc) {
			b.gen++
		}
	}
	b.encoded = mustJSON(sc)
	b.events = event("scores", b.encoded)
	return b
}

// sameBoards reports whether a and b show the same (their read times
// aside).
func sameBoards(a, b Scores) bool {
	eq := func(x, y []Score) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	return a.Available == b.Available && a.Day == b.Day && eq(a.AllTime, b.AllTime) && eq(a.Today, b.Today)
}

// board turns the store's entries into a board's lines, names cleaned.
func board(es []scores.Entry) []Score {
	out := make([]Score, 0, len(es))
	for _, e := range es {
		out = append(out, Score{Rank: e.Rank, Name: game.CleanName(e.Name), Best: e.Best})
	}
	return out
}

// publish builds the snapshot of now and makes it the newest.
func (s *Server) publish(now time.Time) {
	prev := s.cur.Load()
	snap := &snapshot{at: now, serial: 1, next: make(chan struct{}), board: s.boards.Load()}
	if prev != nil {
		snap.serial = prev.serial + 1
	}
	st := s.read(now, snap.serial)
	v := s.cfg.World.Acquire()
	st.fill(v)
	snap.minimap = s.mm.draw(v)
	v.Release()

	snap.status = mustJSON(st)
	snap.events = event("status", snap.status)
	if snap.board != nil {
		snap.scores = snap.board.encoded
		st.Scores = &snap.board.scores
	} else {
		snap.scores = mustJSON(Scores{AllTime: []Score{}, Today: []Score{}, Day: now.UTC().Format(time.DateOnly)})
	}
	snap.page = s.renderPage(&st)
	s.cur.Store(snap)
	if prev != nil {
		close(prev.next)
	}
}

// read fills what a Status says that is not the world's.
func (s *Server) read(now time.Time, serial uint64) Status {
	st := Status{
		Version:     s.cfg.Version,
		Fingerprint: s.fingerprint,
		KnownHosts:  s.knownHosts,
		Join:        s.cfg.Join,
		Top:         []Live{},
		Minimap:     "/minimap.png?v=" + strconv.FormatUint(serial, 10),
		Updated:     now.UTC().Format(time.RFC3339),
	}
	if s.cfg.Crowd != nil {
		st.Players, st.Spectators = s.cfg.Crowd.Counts()
	}
	return st
}

// fill copies the world's part of a Status from v.
func (st *Status) fill(v *game.View) {
	st.Bots, st.World, st.Tick = v.Bots, [2]int{v.W, v.H}, v.Tick
	for i, e := range v.Top {
		bot := e.Slot >= 0 && e.Slot < len(v.Snakes) && v.Snakes[e.Slot].Bot
		st.Top = append(st.Top, Live{Rank: i + 1, Name: game.CleanName(e.Name), Length: e.Length, Bot: bot})
	}
}

// event is one server-sent event of kind with data (one line of JSON).
func event(kind string, data []byte) []byte {
	var b bytes.Buffer
	b.WriteString("event: ")
	b.WriteString(kind)
	b.WriteString("\ndata: ")
	b.Write(data)
	b.WriteString("\n\n")
	return b.Bytes()
}

// mustJSON encodes v, whose types cannot fail to encode.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("status: " + err.Error())
	}
	return b
}
