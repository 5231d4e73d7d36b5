package status

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"snaked/game"
)

// benchWorld is the daemon's default world (2048x512, as -max-sessions
// 3000 sizes it) with 1,000 bots stepped 200 ticks.
func benchWorld(b *testing.B) *game.World {
	b.Helper()
	w, err := game.New(game.Config{W: 2048, H: 512, MaxSnakes: 4096, Bots: 1000, Seed: 3})
	if err != nil {
		b.Fatal(err)
	}
	for i := uint64(1); i <= 200; i++ {
		w.Step(i)
	}
	return w
}

func benchServer(b *testing.B) *Server {
	b.Helper()
	s, err := New(Config{World: benchWorld(b), HostKey: testKey(b), Join: "ssh -p 2222 snake.example",
		MaxStreams: 4, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkPublish is one refresh of the page, the work done once a
// second whatever the number of viewers: the counts, the top 10, the
// minimap drawn and encoded, the JSON and the HTML.
func BenchmarkPublish(b *testing.B) {
	s := benchServer(b)
	b.ReportAllocs()
	now := time.Now()
	for b.Loop() {
		now = now.Add(time.Second)
		s.publish(now)
	}
	b.ReportMetric(float64(len(s.cur.Load().minimap)), "minimap-bytes")
}

// BenchmarkViewerSecond is what one viewer costs the daemon each second
// apart from the stream's event: its page's fetch of the new minimap.
func BenchmarkViewerSecond(b *testing.B) {
	s := benchServer(b)
	h := s.Handler()
	s.every = time.Hour // the snapshot stays fresh: no request waits for a refresh
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/minimap.png?v=1", nil))
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}
