package loadtest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"
)

// FloorOptions configures the transport floor server.
type FloorOptions struct {
	Listen string // address to listen on; default 127.0.0.1:0
	Frame  int    // bytes per frame; default 150, at least 16
	Hz     int    // frames per second; default 10
}

// Floor is the transport floor: a bare golang.org/x/crypto/ssh server that
// accepts any user without authentication, answers pty-req and shell, and
// pushes a frame of a fixed size at a fixed rate to every session (one
// writer goroutine per session woken by a single ticker, latest wins, one
// Write per frame: the way the daemon's writers did before its frame
// workers), and does nothing else. Its CPU at a given N and frame size is
// what any SSH game server must pay.
type Floor struct {
	ln     net.Listener
	cfg    *ssh.ServerConfig
	frames [][]byte
	header []byte
	tick   atomic.Uint64
	done   chan struct{}
	wg     sync.WaitGroup

	mu       sync.Mutex // guards sessions, conns and closed
	sessions map[*floorSession]struct{}
	conns    map[net.Conn]struct{}
	closed   bool
}

type floorSession struct {
	wake chan struct{}
}

// floorBanner is the banner the floor draws so screen checks pass on it.
const floorBanner = "snaked transport floor"

// StartFloor starts a floor server; Close stops it.
func StartFloor(o FloorOptions) (*Floor, error) {
	if o.Listen == "" {
		o.Listen = "127.0.0.1:0"
	}
	if o.Frame == 0 {
		o.Frame = 150
	}
	o.Frame = max(o.Frame, 16)
	if o.Hz <= 0 {
		o.Hz = 10
	}
	signer, err := newKey()
	if err != nil {
		return nil, err
	}
	cfg := &ssh.ServerConfig{NoClientAuth: true, ServerVersion: "SSH-2.0-snaked-floor"}
	cfg.AddHostKey(signer)
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return nil, err
	}
	f := &Floor{
		ln:       ln,
		cfg:      cfg,
		frames:   floorFrames(o.Frame, 16),
		header:   []byte("\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J\x1b[1;2H" + floorBanner),
		done:     make(chan struct{}),
		sessions: map[*floorSession]struct{}{},
		conns:    map[net.Conn]struct{}{},
	}
	f.wg.Add(2)
	go f.accept()
	go f.ticker(time.Second / time.Duration(o.Hz))
	return f, nil
}

// Addr is the address the floor listens on.
func (f *Floor) Addr() string { return f.ln.Addr().String() }

// Sessions is the number of sessions receiving frames now.
func (f *Floor) Sessions() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.sessions)
}

// Close stops listening, drops every connection and waits for the floor's
// goroutines to end.
func (f *Floor) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	close(f.done)
	err := f.ln.Close()
	for c := range f.conns {
		c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
	return err
}

func (f *Floor) accept() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			c.Close()
			return
		}
		f.conns[c] = struct{}{}
		f.wg.Add(1)
		f.mu.Unlock()
		go f.serve(c)
	}
}

func (f *Floor) ticker(every time.Duration) {
	defer f.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-f.done:
			return
		case <-t.C:
		}
		f.tick.Add(1)
		f.mu.Lock()
		for s := range f.sessions {
			select {
			case s.wake <- struct{}{}:
			default: // still writing the last one: latest wins
			}
		}
		f.mu.Unlock()
	}
}

func (f *Floor) serve(c net.Conn) {
	defer f.wg.Done()
	defer func() {
		c.Close()
		f.mu.Lock()
		delete(f.conns, c)
		f.mu.Unlock()
	}()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	sc, chans, reqs, err := ssh.NewServerConn(c, f.cfg)
	if err != nil {
		return
	}
	c.SetDeadline(time.Time{})
	go ssh.DiscardRequests(reqs)
	open := 0
	for nc := range chans {
		if nc.ChannelType() != "session" || open > 0 {
			nc.Reject(ssh.Prohibited, "one session channel only")
			continue
		}
		open++
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		f.wg.Add(1)
		go f.session(sc, ch, creqs)
	}
}

// session answers the channel's requests and, once a shell is asked for,
// pushes frames until the client leaves (q or Ctrl-C) or the floor closes.
func (f *Floor) session(sc *ssh.ServerConn, ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer f.wg.Done()
	defer sc.Close()
	s := &floorSession{wake: make(chan struct{}, 1)}
	quit := make(chan struct{})
	var once sync.Once
	stop := func() { once.Do(func() { close(quit) }) }
	started := false
	go func() {
		for r := range reqs {
			ok := false
			switch r.Type {
			case "pty-req", "env", "window-change":
				ok = true
			case "shell":
				ok = !started
				if ok {
					started = true
					f.mu.Lock()
					if !f.closed {
						f.sessions[s] = struct{}{}
					}
					f.mu.Unlock()
				}
			}
			if r.WantReply {
				r.Reply(ok, nil)
			}
		}
		stop()
	}()
	go func() {
		buf := make([]byte, 256)
		for {
			n, err := ch.Read(buf)
			if bytes.ContainsAny(buf[:n], "q\x03\x04") || err != nil {
				stop()
				return
			}
		}
	}()
	defer func() {
		f.mu.Lock()
		delete(f.sessions, s)
		f.mu.Unlock()
	}()
	first := true
	var out []byte
	for {
		select {
		case <-f.done:
			return
		case <-quit:
			ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{0}))
			ch.Close()
			return
		case <-s.wake:
		}
		fr := f.frames[int(f.tick.Load()%uint64(len(f.frames)))]
		if first {
			out = append(append(out[:0], f.header...), fr...)
			first = false
			fr = out
		}
		if _, err := ch.Write(fr); err != nil {
			return
		}
	}
}

// floorFrames builds n different frames of exactly size bytes each: rows of
// coloured half-block glyphs placed with CUP inside an 80x24 screen.
func floorFrames(size, n int) [][]byte {
	frames := make([][]byte, n)
	for k := range frames {
		var b []byte
		for j := 0; len(b) < size; j++ {
			seg := fmt.Sprintf("\x1b[%d;%dH\x1b[3%dm", 3+(k*7+j*3)%18, 1+(k*11+j*5)%10, 1+(k+j)%7)
			if len(b)+len(seg)+3 > size {
				for len(b) < size {
					b = append(b, ' ')
				}
				break
			}
			b = append(b, seg...)
			for c := 0; c < 50 && len(b)+3 <= size; c++ {
				b = append(b, "▀"...)
			}
		}
		frames[k] = b
	}
	return frames
}

// FloorProcess is a floor server running in a child process, so that its
// CPU and memory can be measured apart from the swarm's.
type FloorProcess struct {
	Addr string
	Pid  int
	cmd  *exec.Cmd
}

// StartFloorProcess runs `exe -floor -listen 127.0.0.1:0 -frame size` (the
// loadtest command) and waits for the address it prints.
func StartFloorProcess(exe string, size, hz int) (*FloorProcess, error) {
	cmd := exec.Command(exe, "-floor", "-listen", "127.0.0.1:0",
		"-frame", strconv.Itoa(size), "-hz", strconv.Itoa(hz))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &FloorProcess{Pid: cmd.Process.Pid, cmd: cmd}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, out)
	}()
	select {
	case line, ok := <-lines:
		if a, found := strings.CutPrefix(line, FloorReady); ok && found {
			p.Addr = strings.TrimSpace(a)
			return p, nil
		}
		p.Stop()
		return nil, fmt.Errorf("floor process said %q", line)
	case <-time.After(10 * time.Second):
		p.Stop()
		return nil, errors.New("floor process did not start in 10 s")
	}
}

// FloorReady prefixes the line a floor process prints once it listens.
const FloorReady = "floor listening on "

// Stop ends the floor process (SIGTERM, then SIGKILL after 5 s).
func (p *FloorProcess) Stop() error {
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		return <-done
	}
}
