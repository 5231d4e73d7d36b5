package status

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"image/png"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"snaked/game"
	"snaked/internal/scores"
	"snaked/internal/testkit"
)

// hostile are names as the scores database may hold them: anything.
var hostile = []string{
	`<script>alert(1)</script>`,
	`"><img src=x onerror=alert(2)>`,
	"\x1b[2J\x1b]0;pwned\x07",
	`';alert(3);//`,
	"</td></tr></table><b>bold</b>",
	"{{.Fingerprint}}",
}

// counting is a World that counts its Acquires.
type counting struct {
	World
	n atomic.Int64
}

func (c *counting) Acquire() *game.View { c.n.Add(1); return c.World.Acquire() }

// crowd is a Crowd of fixed counts.
type crowd struct{ players, spectators atomic.Int64 }

func (c *crowd) Counts() (int, int) { return int(c.players.Load()), int(c.spectators.Load()) }

// fakeBoards are Boards with fixed entries that count their reads and
// can be made to fail.
type fakeBoards struct {
	mu         sync.Mutex // guards all
	all, today []scores.Entry
	reads      atomic.Int64
	fail       atomic.Bool
}

func (b *fakeBoards) Top(ctx context.Context, n int) ([]scores.Entry, error) {
	b.reads.Add(1)
	if b.fail.Load() {
		return nil, errors.New("disk on fire")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.all[:min(n, len(b.all))], nil
}

func (b *fakeBoards) setAll(es []scores.Entry) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.all = es
}

func (b *fakeBoards) TopToday(ctx context.Context, n int, now time.Time) ([]scores.Entry, error) {
	if b.fail.Load() {
		return nil, errors.New("disk on fire")
	}
	return b.today[:min(n, len(b.today))], nil
}

func hostileBoards() *fakeBoards {
	b := &fakeBoards{}
	for i, n := range hostile {
		b.all = append(b.all, scores.Entry{Rank: i + 1, Name: n, Best: 100 - i})
		b.today = append(b.today, scores.Entry{Rank: i + 1, Name: n, Best: 50 - i})
	}
	b.all = append(b.all, scores.Entry{Rank: len(hostile) + 1, Name: "carol", Best: 7})
	return b
}

// testWorld is a small world with bots, stepped a few ticks.
func testWorld(t *testing.T) *game.World {
	t.Helper()
	w, err := game.New(game.Config{W: 128, H: 64, MaxSnakes: 64, Bots: 6, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	for i := uint64(1); i <= 30; i++ {
		w.Step(i)
	}
	return w
}

// hostileView is a World of one hand-built view whose snakes carry
// hostile names, as a gateway's replica might from a misbehaving link.
type hostileView struct{ v *game.View }

func (h hostileView) Acquire() *game.View { return h.v }

func newHostileView() hostileView {
	v := &game.View{W: 64, H: 32, Pix: make([]game.Pixel, 64*32), Bots: 1, Tick: 9}
	for i, n := range hostile[:3] {
		v.Snakes = append(v.Snakes, game.SnakeInfo{ID: game.ID(i), Name: n, Used: true, Alive: true, Length: 9 - i, Bot: i == 2})
		v.Heads = append(v.Heads, game.Point{X: 10 * i, Y: 5})
		v.Top = append(v.Top, game.Entry{Slot: i, Name: n, Length: 9 - i})
		v.Pix[5*64+10*i] = game.MakePixel(game.Head, i, 1)
	}
	return hostileView{v}
}

func testKey(t testing.TB) ssh.PublicKey {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func testConfig(t *testing.T, w World) Config {
	return Config{
		World: w, Crowd: &crowd{}, HostKey: testKey(t), Join: "ssh -p 2222 snake.example", Spectate: "ssh -p 2222 watch@snake.example",
		Version: "v1.2.3 (abc)", MaxStreams: 4,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// serve runs s on a loopback listener until the test ends and returns
// its base URL.
func serve(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(closeWait + 3*time.Second):
			t.Errorf("Serve did not return after its context ended")
		}
	})
	return "http://" + ln.Addr().String()
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	return do(t, http.MethodGet, url)
}

func do(t *testing.T, method, url string) (*http.Response, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestPage: the page says how to join and how to trust the key, counts
// who is online and lists the live top 10 and the boards, with its
// headers.
func TestPage(t *testing.T) {
	w := testWorld(t)
	cfg := testConfig(t, w.Host())
	cfg.Crowd.(*crowd).players.Store(3)
	cfg.Crowd.(*crowd).spectators.Store(2)
	cfg.Boards = &fakeBoards{all: []scores.Entry{{Rank: 1, Name: "alice", Best: 57}}, today: []scores.Entry{{Rank: 1, Name: "bob", Best: 12}}}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	url := serve(t, s)
	var body string
	ok := testkit.Eventually(5*time.Second, func() bool { // the boards' first read
		_, b := get(t, url+"/")
		body = string(b)
		return strings.Contains(body, "alice")
	})
	if !ok {
		t.Fatalf("the all-time board never showed alice:\n%s", body)
	}
	resp, _ := get(t, url+"/")
	if got := resp.Header.Get("Content-Security-Policy"); got != csp {
		t.Errorf("CSP %q", got)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	v := w.Acquire()
	bots, leader := v.Bots, v.Top[0].Name
	v.Release()
	known := KnownHostsLine(cfg.Join, cfg.HostKey)
	if !strings.HasPrefix(known, "[snake.example]:2222 ssh-ed25519 AAAA") {
		t.Errorf("known_hosts line %q", known)
	}
	for _, want := range []string{
		`<code id="join-command">ssh -p 2222 snake.example</code>`,
		`<code id="fingerprint">` + escaped(ssh.FingerprintSHA256(cfg.HostKey)) + `</code>`,
		`<code id="known-hosts">` + escaped(known) + `</code>`,
		`<span id="players">3</span>`, `<span id="spectators">2</span>`, fmt.Sprintf(`<span id="bots">%d</span>`, bots),
		"~" + leader, "alice", "bob", `<img id="minimap" src="/minimap.png?v=`, `width="128" height="64"`,
		`<span id="version">v1.2.3 (abc)</span>`, "watch@snake.example", "Rules",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if regexp.MustCompile(`(?i)\sstyle=|<style|<script>`).MatchString(body) {
		t.Errorf("page has inline style or script, which its CSP forbids")
	}
	for _, path := range []string{s.assets.css.url, s.assets.js.url} {
		resp, b := get(t, url+path)
		if resp.StatusCode != 200 || len(b) == 0 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/") {
			t.Errorf("%s: %d, %d bytes, %q", path, resp.StatusCode, len(b), resp.Header.Get("Content-Type"))
		}
	}
}

// escaped is s as html/template writes it in text: '+' is "&#43;" too.
func escaped(s string) string {
	return strings.ReplaceAll(template.HTMLEscapeString(s), "+", "&#43;")
}

// TestHostileNames: names from the scores database and the world, which
// may hold anything, reach the page, the JSON and the stream cleaned
// (game.CleanName) and escaped; nothing of them is markup or a control
// character.
func TestHostileNames(t *testing.T) {
	cfg := testConfig(t, newHostileView())
	cfg.Boards = hostileBoards()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	url := serve(t, s)
	var page []byte
	testkit.Eventually(5*time.Second, func() bool { _, page = get(t, url+"/"); return bytes.Contains(page, []byte("carol")) })
	_, api := get(t, url+"/api/status")
	_, sc := get(t, url+"/api/scores")
	for what, b := range map[string][]byte{"page": page, "/api/status": api, "/api/scores": sc} {
		for _, bad := range []string{"<script>alert", "<img src", "onerror=alert", "\x1b", "\x07", "<b>", "</table><b>", "';alert"} {
			if bytes.Contains(b, []byte(bad)) {
				t.Errorf("%s holds %q", what, bad)
			}
		}
	}
	for _, n := range hostile {
		clean := game.CleanName(n)
		if !bytes.Contains(page, []byte(clean)) {
			t.Errorf("page lacks %q cleaned (%q)", n, clean)
		}
	}
	if got := strings.Count(string(page), "<script"); got != 1 {
		t.Errorf("%d script tags, want the page's own one", got)
	}
	if got := strings.Count(string(page), "</script>"); got != 1 {
		t.Errorf("%d </script>, want the page's own one", got)
	}
	for what, b := range map[string][]byte{"/api/status": api, "/api/scores": sc} {
		if bytes.Contains(b, []byte("</script>")) || bytes.Contains(b, []byte("<")) {
			t.Errorf("%s holds markup: %s", what, b)
		}
	}
	if bytes.Contains(page, []byte(s.Fingerprint()+"</span>")) && !bytes.Contains(page, []byte("{{.Fingerprint}}")) {
		t.Errorf("a name was read as a template")
	}
	var st Status
	if err := json.Unmarshal(api, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Top) != 3 || st.Top[0].Name != game.CleanName(hostile[0]) || !st.Top[2].Bot {
		t.Errorf("top %+v", st.Top)
	}
	var b Scores
	if err := json.Unmarshal(sc, &b); err != nil {
		t.Fatal(err)
	}
	if len(b.AllTime) != len(hostile)+1 || b.AllTime[1].Name != game.CleanName(hostile[1]) {
		t.Errorf("all time %+v", b.AllTime)
	}
}

// TestAPI: /api/status and /api/scores are the JSON the README documents.
func TestAPI(t *testing.T) {
	w := testWorld(t)
	cfg := testConfig(t, w.Host())
	cfg.Crowd.(*crowd).players.Store(5)
	cfg.Boards = &fakeBoards{all: []scores.Entry{{Rank: 1, Name: "alice", Best: 57}, {Rank: 1, Name: "dave", Best: 57}}}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	url := serve(t, s)
	resp, b := get(t, url+"/api/status")
	if resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"version", "fingerprint", "known_hosts", "join", "players", "spectators", "bots", "top", "world", "tick", "minimap", "updated"} {
		if _, ok := m[k]; !ok {
			t.Errorf("/api/status lacks %q: %s", k, b)
		}
	}
	if m["players"] != 5.0 || m["spectators"] != 0.0 || m["fingerprint"] != s.Fingerprint() || m["version"] != "v1.2.3 (abc)" {
		t.Errorf("/api/status %s", b)
	}
	if top, _ := m["top"].([]any); len(top) == 0 {
		t.Errorf("no live top: %s", b)
	} else if e := top[0].(map[string]any); e["rank"] != 1.0 || e["bot"] != true || e["length"].(float64) < 1 {
		t.Errorf("top[0] %v", e)
	}
	var sc Scores
	if !testkit.Eventually(5*time.Second, func() bool {
		_, b = get(t, url+"/api/scores")
		return json.Unmarshal(b, &sc) == nil && sc.Available
	}) {
		t.Fatalf("/api/scores %s", b)
	}
	if len(sc.AllTime) != 2 || sc.AllTime[1] != (Score{Rank: 1, Name: "dave", Best: 57}) || sc.Today == nil || sc.Day != time.Now().UTC().Format(time.DateOnly) {
		t.Errorf("/api/scores %s", b)
	}
	if !strings.Contains(string(b), `"today":[]`) {
		t.Errorf("an empty board is not [] in %s", b)
	}
}

// TestScoresAway: boards that cannot be read keep the last read, marked
// not available; a server without boards says it keeps none.
func TestScoresAway(t *testing.T) {
	fb := &fakeBoards{all: []scores.Entry{{Rank: 1, Name: "alice", Best: 57}}}
	cfg := testConfig(t, testWorld(t).Host())
	cfg.Boards = fb
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.every, s.scoresEvery = 20*time.Millisecond, 20*time.Millisecond
	url := serve(t, s)
	var sc Scores
	read := func() bool { _, b := get(t, url+"/api/scores"); return json.Unmarshal(b, &sc) == nil }
	if !testkit.Eventually(5*time.Second, func() bool { return read() && sc.Available }) {
		t.Fatal("never available")
	}
	fb.fail.Store(true)
	if !testkit.Eventually(5*time.Second, func() bool { return read() && !sc.Available }) {
		t.Fatal("still available with the database away")
	}
	if len(sc.AllTime) != 1 || sc.AllTime[0].Name != "alice" {
		t.Errorf("the last boards were not kept: %+v", sc)
	}
	_, page := get(t, url+"/")
	if !bytes.Contains(page, []byte(`<p id="scores-off">Scores are not available right now.`)) {
		t.Errorf("the page does not say the scores are away")
	}

	cfg.Boards = nil
	s2, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, page = get(t, serve(t, s2)+"/")
	if !bytes.Contains(page, []byte("This server keeps no scores.")) {
		t.Errorf("a server without scores does not say so")
	}
}

// TestMethods: the page is read-only: GET and HEAD, nothing else; HEAD
// sends no body; unknown paths are 404.
func TestMethods(t *testing.T) {
	s, err := New(testConfig(t, testWorld(t).Host()))
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	for _, path := range []string{"/", "/api/status", "/api/scores", "/minimap.png", "/events", s.assets.css.url} {
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, "BREW"} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(m, path, strings.NewReader("x=1")))
			if rec.Code != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: %d, want 405", m, path, rec.Code)
			}
		}
		if path == "/events" {
			continue // a stream: below
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, path, nil))
		if rec.Code != 200 || rec.Body.Len() != 0 || rec.Header().Get("Content-Length") == "" {
			t.Errorf("HEAD %s: %d, %d bytes of body, Content-Length %q", path, rec.Code, rec.Body.Len(), rec.Header().Get("Content-Length"))
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/events", nil))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/event-stream" || rec.Body.Len() != 0 {
		t.Errorf("HEAD /events: %d %q %d bytes", rec.Code, rec.Header().Get("Content-Type"), rec.Body.Len())
	}
	for _, path := range []string{"/nope", "/static/", "/static/page.html", "/api/", "/debug/pprof/", "/metrics"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, rec.Code)
		}
	}
}

// readEvents reads server-sent events from r into out until r ends.
func readEvents(r io.Reader, out chan<- [2]string) {
	defer close(out)
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	var kind, data string
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "event: "):
			kind = l[len("event: "):]
		case strings.HasPrefix(l, "data: "):
			data = l[len("data: "):]
		case l == "" && kind != "":
			out <- [2]string{kind, data}
			kind, data = "", ""
		}
	}
}

func openStream(t *testing.T, ctx context.Context, url string) (*http.Response, chan [2]string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	evs := make(chan [2]string, 64)
	if resp.StatusCode == 200 {
		go readEvents(resp.Body, evs)
	}
	return resp, evs
}

// TestStream: a live stream sends the status at once and at every
// refresh, the scores at once and when they change; past MaxStreams a
// client is refused and may poll; a closed stream frees its place.
func TestStream(t *testing.T) {
	w := testWorld(t)
	cfg := testConfig(t, w.Host())
	cfg.MaxStreams = 2
	cr := cfg.Crowd.(*crowd)
	fb := &fakeBoards{all: []scores.Entry{{Rank: 1, Name: "alice", Best: 5}}}
	cfg.Boards = fb
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.every, s.scoresEvery = 50*time.Millisecond, 50*time.Millisecond
	url := serve(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, evs := openStream(t, ctx, url)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("/events: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	next := func(kind string, ok func(string) bool) {
		t.Helper()
		for {
			select {
			case e, open := <-evs:
				if !open {
					t.Fatalf("stream ended waiting for %s", kind)
				}
				if e[0] == kind && ok(e[1]) {
					return
				}
			case <-ctx.Done():
				t.Fatalf("no %s event", kind)
			}
		}
	}
	next("status", func(d string) bool { return strings.Contains(d, `"players":0`) })
	next("scores", func(d string) bool { return strings.Contains(d, "alice") })
	cr.players.Store(1)
	next("status", func(d string) bool { return strings.Contains(d, `"players":1`) })
	fb.setAll(nil)
	next("scores", func(d string) bool { return strings.Contains(d, `"all_time":[]`) })

	ctx2, cancel2 := context.WithCancel(ctx)
	r2, _ := openStream(t, ctx2, url)
	r3, _ := openStream(t, ctx, url)
	if r2.StatusCode != 200 || r3.StatusCode != http.StatusServiceUnavailable || r3.Header.Get("Retry-After") == "" {
		t.Errorf("second and third streams: %d and %d, want 200 and 503 with Retry-After", r2.StatusCode, r3.StatusCode)
	}
	cancel2()
	if !testkit.Eventually(5*time.Second, func() bool { return s.streams.Load() == 1 }) {
		t.Fatalf("a closed stream still counts: %d open", s.streams.Load())
	}
	if r4, _ := openStream(t, ctx, url); r4.StatusCode != 200 {
		t.Errorf("after one closed: %d", r4.StatusCode)
	}
}

// TestShutdown: Serve returns promptly with streams open, and its
// streams end.
func TestShutdown(t *testing.T) {
	s, err := New(testConfig(t, testWorld(t).Host()))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String()
	_, evs := openStream(t, context.Background(), url)
	<-evs
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(closeWait + 3*time.Second):
		t.Fatal("Serve did not return")
	}
	if d := time.Since(start); d > closeWait {
		t.Errorf("shutdown took %v with a stream open", d)
	}
	for range evs { // the stream ends
	}
}

// TestWorkBounded: many viewers cost one drawing of the world a refresh
// and one read of the scores a scores refresh; nobody looking costs
// nothing, and the first request after that gets fresh data.
func TestWorkBounded(t *testing.T) {
	w := &counting{World: testWorld(t).Host()}
	cfg := testConfig(t, w)
	fb := &fakeBoards{}
	cfg.Boards = fb
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.every, s.scoresEvery = 100*time.Millisecond, 200*time.Millisecond
	url := serve(t, s)

	time.Sleep(5 * s.every) // nobody looks
	if n := w.n.Load(); n != 1 {
		t.Errorf("%d drawings with nobody looking, want New's 1", n)
	}
	if n := fb.reads.Load(); n > 1 {
		t.Errorf("%d reads of the scores with nobody looking, want Serve's first", n)
	}
	resp, b := get(t, url+"/api/status")
	var st Status
	if err := json.Unmarshal(b, &st); err != nil || resp.StatusCode != 200 {
		t.Fatal(resp.StatusCode, err)
	}
	if up, _ := time.Parse(time.RFC3339, st.Updated); time.Since(up) > 2*time.Second {
		t.Errorf("after a quiet spell the first request got data of %v", up)
	}

	w0, r0, t0 := w.n.Load(), fb.reads.Load(), time.Now()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 16 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, p := range []string{"/", "/api/status", "/api/scores", "/minimap.png"} {
					get(t, url+p)
				}
			}
		})
	}
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	el := time.Since(t0)
	if n, most := w.n.Load()-w0, int64(el/(s.every*9/10))+2; n > most {
		t.Errorf("%d drawings in %v under 16 busy viewers, want at most %d", n, el, most)
	}
	if n, most := fb.reads.Load()-r0, int64(el/(s.scoresEvery*9/10))+2; n > most {
		t.Errorf("%d reads of the scores in %v, want at most %d", n, el, most)
	}
}

// TestMinimap: the minimap is a PNG of the world's shape, not blank, with
// the leader marked in the first rank's colour.
func TestMinimap(t *testing.T) {
	s, err := New(testConfig(t, newHostileView()))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/minimap.png?v=1", nil))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "image/png" {
		t.Fatalf("%d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	img, err := png.Decode(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 64 || b.Dy() != 32 {
		t.Errorf("minimap %v of a 64x32 world", b)
	}
	seen := map[[3]uint32]int{}
	for y := range img.Bounds().Dy() {
		for x := range img.Bounds().Dx() {
			r, g, b, _ := img.At(x, y).RGBA()
			seen[[3]uint32{r >> 8, g >> 8, b >> 8}]++
		}
	}
	c := RankColours[0]
	if seen[[3]uint32{uint32(c.R), uint32(c.G), uint32(c.B)}] == 0 {
		t.Errorf("the leader is not marked in %v", c)
	}
	if len(seen) < 3 {
		t.Errorf("%d colours: blank", len(seen))
	}
}

// TestMinimapSizes: every world fits the minimap's bounds, and a huge
// world's snakes land inside it.
func TestMinimapSizes(t *testing.T) {
	for _, c := range [][2]int{{16, 16}, {128, 64}, {2048, 512}, {9152, 2288}, {16384, 4096}, {4096, 16384}, {0, 0}} {
		mw, mh, scale := mapSize(c[0], c[1])
		if mw < 1 || mh < 1 || mw > mapMaxW || mh > mapMaxH || mw*scale < c[0] || mh*scale < c[1] {
			t.Errorf("%dx%d: minimap %dx%d at %d", c[0], c[1], mw, mh, scale)
		}
	}
	v := &game.View{W: 16384, H: 4096}
	for i := range 1000 {
		v.Snakes = append(v.Snakes, game.SnakeInfo{Used: true, Alive: true, Length: 400})
		v.Heads = append(v.Heads, game.Point{X: 16383 - i*16, Y: 4095 - i*4})
	}
	v.Snakes = append(v.Snakes, game.SnakeInfo{Used: true, Alive: true, Length: 5}) // bad head: skipped
	v.Heads = append(v.Heads, game.Point{X: -1, Y: 5})
	var m minimapper
	if b := m.draw(v); len(b) == 0 {
		t.Fatal("empty")
	}
	if m.img.Pix[len(m.img.Pix)-1] == 0 {
		t.Error("the snake in the world's last corner is not shaded")
	}
}

// TestRankColoursMatchCSS: the stylesheet's .r1 to .r10 are the minimap's
// rank colours.
func TestRankColoursMatchCSS(t *testing.T) {
	css, err := os.ReadFile("assets/status.css")
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range RankColours {
		want := fmt.Sprintf(".r%d { color: #%02x%02x%02x; }", i+1, c.R, c.G, c.B)
		if !bytes.Contains(css, []byte(want)) {
			t.Errorf("status.css lacks %q", want)
		}
	}
}

func TestKnownHostsLine(t *testing.T) {
	k := testKey(t)
	key := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
	for _, c := range []struct{ join, host string }{
		{"ssh -p 2222 localhost", "[localhost]:2222"},
		{"ssh localhost", "localhost"},
		{"ssh -p 22 alice@snake.example", "snake.example"},
		{"ssh -p2200 snake.example", "[snake.example]:2200"},
		{"ssh -t -o ObscureKeystrokeTiming=no -p 2222 bob@10.0.0.5", "[10.0.0.5]:2222"},
		{"ssh -o Port=2201 snake.example", "[snake.example]:2201"},
		{"ssh ssh://carol@snake.example:2202", "[snake.example]:2202"},
		{"ssh ssh://[::1]:2203", "[::1]:2203"},
		{"ssh -l dave -i key -4 snake.example", "snake.example"},
		{"/usr/bin/ssh -p 2222 h", "[h]:2222"},
		{"ssh -p", ""},
		{"ssh -p 99999 h", ""},
		{"telnet snake.example", ""},
		{"just ask the operator", ""},
		{"", ""},
	} {
		got := KnownHostsLine(c.join, k)
		want := ""
		if c.host != "" {
			want = c.host + " " + key
		}
		if got != want {
			t.Errorf("%q: %q, want %q", c.join, got, want)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	cfg := testConfig(t, testWorld(t).Host())
	for name, bad := range map[string]func(*Config){
		"no world":    func(c *Config) { c.World = nil },
		"no key":      func(c *Config) { c.HostKey = nil },
		"streams < 0": func(c *Config) { c.MaxStreams = -1 },
		"streams big": func(c *Config) { c.MaxStreams = StreamsRange.Max + 1 },
	} {
		c := cfg
		bad(&c)
		if _, err := New(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestConnectionCap: the listener holds at most its cap of connections;
// one more is accepted when one closes.
func TestConnectionCap(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newLimitListener(ln, 2)
	defer l.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	for range 3 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	a := <-accepted
	<-accepted
	select {
	case <-accepted:
		t.Fatal("a third connection was accepted past the cap of 2")
	case <-time.After(200 * time.Millisecond):
	}
	a.Close()
	a.Close() // twice: the slot is given back once
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the third connection was not accepted after one closed")
	}
}
