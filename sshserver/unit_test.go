package sshserver

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"snaked/game"
	"snaked/render"
)

type ev struct {
	k key
	r byte
}

func decodeAll(chunks ...string) []ev {
	var d decoder
	var out []ev
	for _, c := range chunks {
		d.feed([]byte(c), func(k key, r byte) { out = append(out, ev{k, r}) })
	}
	return out
}

func TestDecoderSplits(t *testing.T) {
	whole := "\x1b[A\x1bOBx\x1b[1;5C\x1b[D\r\x7f\t\x1b[Z\x03\x04\x0c\x15 "
	want := []ev{{keyUp, 0}, {keyDown, 0}, {keyRune, 'x'}, {keyRight, 0}, {keyLeft, 0}, {keyEnter, 0},
		{keyBackspace, 0}, {keyTab, 0}, {keyBackTab, 0}, {keyCtrlC, 0}, {keyCtrlD, 0}, {keyCtrlL, 0}, {keyCtrlU, 0}, {keyRune, ' '}}
	if got := decodeAll(whole); !slices.Equal(got, want) {
		t.Fatalf("whole: got %v want %v", got, want)
	}
	// Every split point, and byte by byte.
	for i := 1; i < len(whole); i++ {
		if got := decodeAll(whole[:i], whole[i:]); !slices.Equal(got, want) {
			t.Fatalf("split at %d: got %v want %v", i, got, want)
		}
	}
	var bytes []string
	for i := range len(whole) {
		bytes = append(bytes, whole[i:i+1])
	}
	if got := decodeAll(bytes...); !slices.Equal(got, want) {
		t.Fatalf("byte by byte: got %v want %v", got, want)
	}
}

func TestDecoderHostile(t *testing.T) {
	// An overlong CSI is dropped whole; what follows still decodes.
	long := "\x1b[" + string(make([]byte, 0))
	for range 10000 {
		long += "1;"
	}
	got := decodeAll(long+"A", "q")
	if !slices.Equal(got, []ev{{keyRune, 'q'}}) {
		t.Fatalf("overlong CSI: got %v", got)
	}
	// ESC ESC is a lone Esc; malformed CSI bytes end the sequence.
	if got := decodeAll("\x1b\x1b[B"); !slices.Equal(got, []ev{{keyEsc, 0}, {keyDown, 0}}) {
		t.Fatalf("ESC ESC: got %v", got)
	}
	if got := decodeAll("\x1b[\x01k"); !slices.Equal(got, []ev{{keyRune, 'k'}}) {
		t.Fatalf("malformed CSI: got %v", got)
	}
	// Alt+key reports the key; high bytes are ignored.
	if got := decodeAll("\x1bw\xff\xc3\xa9"); !slices.Equal(got, []ev{{keyRune, 'w'}}) {
		t.Fatalf("alt/utf-8: got %v", got)
	}
}

// decodeTimed feeds chunks; "" between chunks stands for escWait passing
// with no input (the reader's timer calls expire).
func decodeTimed(chunks ...string) []ev {
	var d decoder
	var out []ev
	emit := func(k key, r byte) { out = append(out, ev{k, r}) }
	for _, c := range chunks {
		if c == "" {
			d.expire(emit)
			continue
		}
		d.feed([]byte(c), emit)
	}
	return out
}

// TestDecoderEscTimeout: a lone ESC is the Esc key once escWait passes with
// nothing after it; within the wait, the rest of a sequence still joins it.
func TestDecoderEscTimeout(t *testing.T) {
	cases := []struct {
		name   string
		chunks []string
		want   []ev
	}{
		{"ESC alone", []string{"\x1b", ""}, []ev{{keyEsc, 0}}},
		{"ESC alone, no timeout yet", []string{"\x1b"}, nil},
		{"ESC then a key after the timeout", []string{"\x1b", "", "x"}, []ev{{keyEsc, 0}, {keyRune, 'x'}}},
		{"ESC then a key within the timeout (Alt+x)", []string{"\x1b", "x"}, []ev{{keyRune, 'x'}}},
		{"split arrow within the timeout", []string{"\x1b", "[", "A"}, []ev{{keyUp, 0}}},
		{"split SS3 arrow within the timeout", []string{"\x1bO", "B"}, []ev{{keyDown, 0}}},
		{"unfinished CSI expires silently", []string{"\x1b[1;", "", "A"}, []ev{{keyRune, 'A'}}},
		{"timeout with nothing pending", []string{"q", ""}, []ev{{keyRune, 'q'}}},
		{"ESC ESC then timeout", []string{"\x1b\x1b", ""}, []ev{{keyEsc, 0}, {keyEsc, 0}}},
	}
	for _, c := range cases {
		if got := decodeTimed(c.chunks...); !slices.Equal(got, c.want) {
			t.Errorf("%s %q: got %v, want %v", c.name, c.chunks, got, c.want)
		}
	}
}

// TestInputEscTimer drives the reader's input with its real timer: a lone
// ESC becomes Esc after escWait; an arrow split across two feeds inside the
// wait stays an arrow; after stop, nothing more is emitted.
func TestInputEscTimer(t *testing.T) {
	keys := make(chan ev, 16)
	done := make(chan struct{})
	in := input{emit: func(k key, r byte) { keys <- ev{k, r} }, done: done}
	next := func(d time.Duration) (ev, bool) {
		select {
		case e := <-keys:
			return e, true
		case <-time.After(d):
			return ev{}, false
		}
	}
	in.feed([]byte("\x1b"))
	if e, ok := next(5 * time.Second); !ok || e.k != keyEsc {
		t.Fatalf("lone ESC: got %v, %v; want Esc", e, ok)
	}
	in.feed([]byte("\x1b["))
	in.feed([]byte("A")) // well within escWait
	if e, ok := next(5 * time.Second); !ok || e.k != keyUp {
		t.Fatalf("split arrow: got %v, %v; want Up", e, ok)
	}
	if e, ok := next(3 * escWait); ok {
		t.Fatalf("extra key %v after the arrow", e)
	}
	in.feed([]byte("\x1b"))
	in.stop()
	if e, ok := next(3 * escWait); ok {
		t.Fatalf("key %v after stop", e)
	}
}

func TestQuote(t *testing.T) {
	if q := quote("a\x1b\u202e"); q != `a\x1b\u202e` {
		t.Errorf("quote = %s", q)
	}
}

func TestIPKey(t *testing.T) {
	k := func(s string) netip.Addr { return ipKey(&net.TCPAddr{IP: net.ParseIP(s), Port: 1}) }
	if k("2001:db8:1:2:aaaa::1") != k("2001:db8:1:2:bbbb::2") {
		t.Error("one IPv6 /64 must share a key")
	}
	if k("2001:db8:1:2::1") == k("2001:db8:1:3::1") {
		t.Error("different /64s must differ")
	}
	if k("::ffff:10.0.0.1") != k("10.0.0.1") || k("10.0.0.1") == k("10.0.0.2") {
		t.Error("IPv4 keys")
	}
}

func TestUnauthSet(t *testing.T) {
	u := newUnauthSet(4, 2, 1) // 4 tracked, 2 handshakes and 1 queued per address
	a, b := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	conns := make([]net.Conn, 8)
	for i := range conns {
		conns[i], _ = net.Pipe()
	}
	closed := func(ch chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	e1, ev := u.add(conns[1], a)
	e2, _ := u.add(conns[2], a)
	if e1 == nil || e2 == nil || ev != nil || e1.ready != nil || e2.ready != nil {
		t.Fatal("the first two from one address must start at once")
	}
	e3, _ := u.add(conns[3], a)
	if e3 == nil || e3.ready == nil || closed(e3.ready) || u.started(e3) {
		t.Fatal("the third from one address must wait in the queue")
	}
	if e, _ := u.add(conns[4], a); e != nil {
		t.Error("the address's queue holds one: the fourth must be refused")
	}
	if u.queued() != 1 {
		t.Errorf("queued %d, want 1", u.queued())
	}
	// A finished handshake hands its slot to the oldest queued one.
	if !u.done(e1) || !closed(e3.ready) || !u.started(e3) || u.queued() != 0 {
		t.Fatal("done must start the queued connection")
	}
	// Global cap 4: e2, e3, e5, e6 tracked; e7 evicts the oldest (e2).
	e5, _ := u.add(conns[5], b)
	e6, _ := u.add(conns[6], b)
	e7, ev := u.add(conns[7], b)
	if e5 == nil || e6 == nil || e7 == nil || ev != conns[2] {
		t.Fatalf("global cap must evict the oldest: evicted %v", ev)
	}
	if e7.ready == nil {
		t.Fatal("b's third must be queued")
	}
	if u.done(e2) {
		t.Error("evicted entry reported as tracked")
	}
	if u.len() != 4 {
		t.Errorf("len %d, want 4", u.len())
	}
	// Evicting a queued entry wakes it without a slot.
	e8, ev := u.add(conns[0], a) // evicts e3 (a's running one)
	if ev != conns[3] || e8 == nil || e8.ready != nil {
		t.Fatalf("evicted %v; a's new one must start at once (a has no handshakes left)", ev)
	}
	u.done(e5)
	if !closed(e7.ready) || !u.started(e7) {
		t.Error("b's queued connection did not get the freed slot")
	}
	e9, _ := u.add(conns[4], b) // b: e6, e7 running; queued
	_, ev = u.add(conns[5], a)  // evicts e6 (oldest): e9 takes its slot
	if ev != conns[6] || !closed(e9.ready) || !u.started(e9) {
		t.Errorf("evicting a running entry must start the queued one (evicted %v)", ev)
	}
	_, ev = u.add(conns[1], a) // a: e8 and the last one run; this one is queued, and e7 is evicted
	if ev != conns[7] {
		t.Errorf("evicted %v, want b's oldest", ev)
	}
}

// FuzzDecoder feeds arbitrary input whole and in chunks of fuzzed sizes:
// the keys must be the same either way (the decoder's state carries across
// reads), every key must be one the game knows, and a rune key must be a
// printable ASCII byte.
func FuzzDecoder(f *testing.F) {
	f.Add([]byte("\x1b[A\x1bOBx\x1b[1;5C\x1b[D\r\x7f\t\x1b[Z\x03\x04\x0c\x15 "), []byte{1, 2, 3})
	f.Add([]byte("\x1b\x1b[B\x1b[\x01k\x1bw\xff\xc3\xa9"), []byte{5})
	f.Add([]byte("\x1b[1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;1;Aq"), []byte{0, 7, 1})
	f.Fuzz(func(t *testing.T, in, sizes []byte) {
		want := decodeAll(string(in))
		var chunks []string
		rest := in
		for k := 0; len(rest) > 0; k++ {
			n := 1
			if len(sizes) > 0 {
				n = 1 + int(sizes[k%len(sizes)])%17
			}
			n = min(n, len(rest))
			chunks = append(chunks, string(rest[:n]))
			rest = rest[n:]
		}
		got := decodeAll(chunks...)
		if !slices.Equal(got, want) {
			t.Fatalf("chunks %q: got %v, whole gave %v", chunks, got, want)
		}
		for _, e := range got {
			if e.k == keyNone || e.k > keyEsc {
				t.Fatalf("key %d emitted", e.k)
			}
			if e.k == keyRune && (e.r < 0x20 || e.r > 0x7e) {
				t.Fatalf("rune key with byte %#x", e.r)
			}
		}
	})
}

// TestIndexedList checks the O(1) list behind Server.live and
// Server.pinged: positions stay right as members leave, and removing a
// member twice or one never added changes nothing.
func TestIndexedList(t *testing.T) {
	var list []*session
	ss := make([]*session, 4)
	for i := range ss {
		ss[i] = &session{idx: -1}
		list = addIndexed(list, ss[i])
	}
	list = removeIndexed(list, ss[1])
	list = removeIndexed(list, ss[1])
	list = removeIndexed(list, &session{idx: 0})
	if len(list) != 3 || ss[1].idx != -1 {
		t.Fatalf("len %d, removed idx %d", len(list), ss[1].idx)
	}
	for i, m := range list {
		if m.idx != i || m == ss[1] {
			t.Fatalf("member at %d has idx %d", i, m.idx)
		}
	}
	for _, m := range []*session{ss[0], ss[2], ss[3]} {
		list = removeIndexed(list, m)
	}
	if len(list) != 0 {
		t.Fatalf("%d members left", len(list))
	}
}

// TestCellBudget: sessions get at most the per-session budget, together at
// most the total, except the floor every session keeps; releasing gives
// cells back.
func TestCellBudget(t *testing.T) {
	b := cellBudget{per: 2000, total: 3000}
	b1, c1 := b.take(0, 80, 24)
	if b1 != 2000 || c1 != 80*24 {
		t.Fatalf("first: budget %d, cells %d; want 2000, 1920", b1, c1)
	}
	b2, c2 := b.take(0, 80, 24)
	if c2 > 3000-c1 || b2 != 3000-c1 {
		t.Fatalf("second: budget %d, cells %d; want what is left (%d)", b2, c2, 3000-c1)
	}
	b3, c3 := b.take(0, 80, 24)
	if b3 != cellFloor || c3 > cellFloor || c3 == 0 {
		t.Fatalf("third: budget %d, cells %d; want the floor %d", b3, c3, cellFloor)
	}
	if used := b.used.Load(); used != int64(c1+c2+c3) || used > 3000+cellFloor {
		t.Fatalf("used %d", used)
	}
	// A huge terminal within the per-session budget, once cells are free.
	b.release(c2)
	b.release(c3)
	_, c4 := b.take(c1, 500, 200)
	if c4 > 2000 || c4 < 1900 {
		t.Errorf("500x200 under a 2000-cell budget holds %d cells", c4)
	}
	if used := b.used.Load(); used != int64(c4) {
		t.Errorf("used %d after resizing the only holder, want %d", used, c4)
	}
	b.release(c4)
	if used := b.used.Load(); used != 0 {
		t.Errorf("used %d after releasing everything", used)
	}
}

// TestLabels: every kind, refusal, cause and handshake failure has its own
// metric label (a new constant without one would show as "kind(7)" and
// the like).
func TestLabels(t *testing.T) {
	seen := map[string]bool{}
	check := func(what string, n int, label func(int) string) {
		t.Helper()
		clear(seen)
		for i := range n {
			l := label(i)
			if l == "" || strings.ContainsAny(l, "() ") || seen[l] {
				t.Errorf("%s %d: label %q is empty, a fallback or a duplicate", what, i, l)
			}
			seen[l] = true
		}
		if l := label(n); !strings.Contains(l, "(") {
			t.Errorf("%s %d: past the last constant the label should be a fallback, got %q", what, n, l)
		}
	}
	check("kind", int(kindBrowsing)+1, func(i int) string { return kind(i).String() })
	check("refusal", int(refuseUnavailable)+1, func(i int) string { return refusal(i).String() })
	check("cause", int(causeCommand)+1, func(i int) string { return cause(i).String() })
	check("hsFailure", int(hsQueueTimeout)+1, func(i int) string { return hsFailure(i).String() })
}

// TestServeDoesNotTick: the transport never steps the world; whoever owns
// the clock does, and tells the server with Ticked.
func TestServeDoesNotTick(t *testing.T) {
	w := testWorld(t, 2)
	srv, err := New(testConfig(t), w.Host())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	time.Sleep(300 * time.Millisecond) // three ticks' worth
	v := w.Acquire()
	tick := v.Tick
	v.Release()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if tick != 0 {
		t.Errorf("the world reached tick %d with no clock running", tick)
	}
}

// gid is "goroutine N " of the caller.
func gid() string {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	return string(b[:bytes.IndexByte(b, '[')])
}

// goneHandler is a slog.Handler that keeps what it handles and on which
// goroutine.
type goneHandler struct {
	slog.Handler
	got *[]string
}

func (h goneHandler) Handle(ctx context.Context, r slog.Record) error {
	*h.got = append(*h.got, gid())
	return h.Handler.Handle(ctx, r)
}

func (h goneHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return goneHandler{h.Handler.WithAttrs(as), h.got}
}

func (h goneHandler) WithGroup(name string) slog.Handler {
	return goneHandler{h.Handler.WithGroup(name), h.got}
}

// TestShallowLog: the server logs through shallow, which writes each
// record on another goroutine (deep), whole, with the logger's attributes
// and groups, and only at the levels the wrapped handler takes.
func TestShallowLog(t *testing.T) {
	srv, err := New(testConfig(t), testWorld(t, 0).Host())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := srv.log.Handler().(shallow); !ok {
		t.Errorf("the server logs through %T, not shallow", srv.log.Handler())
	}
	var buf bytes.Buffer
	var on []string
	inner := goneHandler{slog.NewTextHandler(&buf, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}), &on}
	log := slog.New(shallow{inner}).With("remote", "1.2.3.4:5").WithGroup("g")
	log.Info("connect", "user", "ann")
	log.Debug("not shown")
	if want := "level=INFO msg=connect remote=1.2.3.4:5 g.user=ann\n"; buf.String() != want {
		t.Errorf("logged %q, want %q", buf.String(), want)
	}
	if len(on) != 1 || on[0] == gid() {
		t.Errorf("handled on %q, the caller is %q", on, gid())
	}
}

// TestDeep: deep runs its function to the end before returning, on a
// goroutine of its own that is gone afterwards (so is its stack), and
// raises its panic in the caller.
func TestDeep(t *testing.T) {
	var inner string
	deep(func() { inner = gid() })
	if inner == "" {
		t.Fatal("deep returned before its function ran")
	}
	if inner == gid() {
		t.Fatalf("deep ran its function on the caller's goroutine (%q)", inner)
	}
	all := make([]byte, 1<<20)
	for i := 0; ; i++ {
		if !strings.Contains(string(all[:runtime.Stack(all, true)]), "\n"+inner) &&
			!strings.HasPrefix(string(all), inner) {
			break
		}
		if i == 200 {
			t.Fatalf("%q still exists after deep returned", inner)
		}
		time.Sleep(5 * time.Millisecond)
	}
	defer func() {
		if p := recover(); p != "boom" {
			t.Fatalf("recovered %v, want the function's panic", p)
		}
	}()
	deep(func() { panic("boom") })
	t.Fatal("deep returned after a panic")
}

// TestPanBounded: a spectator's arrow keys pan the free camera at most
// two keys' worth a frame and keep at most four keys' worth for later
// frames, however many keys come at once, and the camera a gateway is told
// of is where the next frame puts it.
func TestPanBounded(t *testing.T) {
	s := &session{}
	s.phase.Store(int32(phaseWatch))
	v := &game.View{W: 1000, H: 500}
	hud := &render.HUD{}
	s.camera(v, hud)
	for range 100 { // a paste of arrows, or a client that sends nothing else
		s.watchKey(keyRight, 0)
		s.watchKey(keyDown, 0)
	}
	var xs, ys []int
	for range 4 {
		c, ok := s.looksAt()
		s.camera(v, hud)
		if !ok || c.At != hud.Cam {
			t.Fatalf("told %+v (%v), the frame shows %v", c, ok, hud.Cam)
		}
		xs, ys = append(xs, hud.Cam.X), append(ys, hud.Cam.Y)
	}
	if want := []int{panTickX, 2 * panTickX, panKeepX, panKeepX}; !slices.Equal(xs, want) {
		t.Fatalf("camera x over frames %v, want %v", xs, want)
	}
	if want := []int{panTickY, 2 * panTickY, panKeepY, panKeepY}; !slices.Equal(ys, want) {
		t.Fatalf("camera y over frames %v, want %v", ys, want)
	}
}
