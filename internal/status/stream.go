package status

import (
	"math"
	"net/http"
	"strconv"
	"time"
)

// retryMillis is how long a browser waits before it opens a new stream
// when one ends (the "retry" field).
const retryMillis = 3000

// The streams' sends of a new snapshot are spread over the first
// 1/spreadShare of a refresh in spreadSlots batches, each stream in one
// of them: so the writes, and the minimap fetches each sets off in its
// browser, do not all fall in the moment after the refresh, beside the
// SSH sessions' frames, while each batch still wakes the network poller
// once for many streams.
const (
	spreadShare = 2
	spreadSlots = 8
)

// serveEvents is the live stream: server-sent events, a "status" event
// (the /api/status JSON) at each snapshot and a "scores" event (the
// /api/scores JSON) when the boards change. At most MaxStreams are open at
// once; past that a client is told 503 and polls. A stream ends after
// streamFor (the browser opens another), when a write is not taken within
// writeWait, and when the server shuts down.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	if !s.takeStream() {
		w.Header().Set("Retry-After", strconv.Itoa(int(streamFor/time.Second)))
		http.Error(w, "too many live streams; poll /api/status", http.StatusServiceUnavailable)
		return
	}
	defer s.streams.Add(-1)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: pass each event on at once
	if r.Method == http.MethodHead {
		return
	}
	rc := http.NewResponseController(w)
	send := func(parts ...[]byte) bool {
		if rc.SetWriteDeadline(time.Now().Add(writeWait)) != nil {
			return false
		}
		for _, p := range parts {
			if _, err := w.Write(p); err != nil {
				return false
			}
		}
		return rc.Flush() == nil
	}
	snap := s.want(r.Context())
	var gen uint64 // the boards' generation last sent
	scoresOf := func(sn *snapshot) []byte {
		if sn.board == nil || sn.board.gen == gen {
			return nil
		}
		gen = sn.board.gen
		return sn.board.events
	}
	if !send([]byte("retry: "+strconv.Itoa(retryMillis)+"\n\n"), snap.events, scoresOf(snap)) {
		return
	}
	end := time.NewTimer(streamFor)
	defer end.Stop()
	// This stream's batch: the streams' sequence numbers times the golden
	// ratio, modulo 1, fill the batches evenly however many are open.
	slot := int(spreadSlots * math.Mod(float64(s.streamSeq.Add(1))*0.6180339887, 1))
	off := s.every / spreadShare * time.Duration(slot) / spreadSlots
	wait := time.NewTimer(0)
	defer wait.Stop()
	<-wait.C
	for {
		select {
		case <-snap.next:
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		case <-end.C:
			return
		}
		wait.Reset(off)
		select {
		case <-wait.C:
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
		snap = s.cur.Load()
		if !send(snap.events, scoresOf(snap)) {
			return
		}
	}
}

// takeStream counts one more stream open, unless MaxStreams are.
func (s *Server) takeStream() bool {
	for {
		n := s.streams.Load()
		if int(n) >= s.cfg.MaxStreams {
			return false
		}
		if s.streams.CompareAndSwap(n, n+1) {
			return true
		}
	}
}
