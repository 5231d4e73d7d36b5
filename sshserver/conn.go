package sshserver

import (
	"errors"
	"log/slog"
	"net"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"
)

// conn is one established SSH connection.
type conn struct {
	raw net.Conn
	ssh *ssh.ServerConn
	key string // SHA256 fingerprint of the key it authenticated with; "" for keyless
	log *slog.Logger
	idx int // index in srv.pinged; guarded by srv.mu

	once   sync.Once
	reason cause // why it closed; written once under once

	pingDue  atomic.Int64 // unix nanos when the next keepalive is due
	pingSent atomic.Int64 // unix nanos the unanswered keepalive was sent; 0 when none is in flight
	heard    atomic.Int64 // unix nanos of the last input the client's session sent; 0 none yet

	pmu   sync.Mutex     // guards over and the Add side of pings
	over  bool           // the connection is done: no more pings
	pings sync.WaitGroup // keepalive requests in flight (at most one)
}

// closeWith closes the connection, remembering the first reason given.
func (c *conn) closeWith(reason cause) {
	c.once.Do(func() { c.reason = reason })
	c.raw.Close()
}

// why reports the reason recorded by closeWith, or def.
func (c *conn) why(def cause) cause {
	c.once.Do(func() { c.reason = def })
	return c.reason
}

// serveConn runs one accepted connection: the handshake under a deadline
// on this goroutine, then the admission checks and the control loop until
// the connection closes on a fresh one. Besides it the connection runs
// x/crypto's three goroutines and its session's reader and writer for its
// whole life; for a while it also runs a keepalive request in flight (at
// most one, see keepalive), a screen outside play (the join and scores
// screens' programs and their own goroutines) and the short calls of
// deep. The handshake's deep calls (authentication, signatures) grow a
// stack to 8 KiB, and the control loop parks too deep in it for the
// garbage collector ever to shrink it (a quarter of it, with the runtime's
// margin); a fresh goroutine, whose log records are formatted elsewhere
// (shallow), stays at 4 KiB. The accept loop counted the connection in s.wg once;
// endConn, on whichever goroutine ends it, marks it done.
func (s *Server) serveConn(raw net.Conn, pending *unauthEntry) {
	var k *ctl
	func() {
		defer s.recoverConn(raw, "panic in connection")
		pprof.SetGoroutineLabels(s.labels) // x/crypto's goroutines inherit it
		k = s.handshake(raw, pending)
	}()
	if k == nil {
		s.endConn(raw, pending)
		return
	}
	go func() {
		defer s.endConn(raw, pending)
		defer s.recoverConn(raw, "panic in connection")
		s.serve(k, pending)
	}()
}

// recoverConn logs a panic of a connection's goroutine, which ends it.
func (s *Server) recoverConn(raw net.Conn, msg string) {
	if r := recover(); r != nil {
		s.log.Error(msg, "remote", raw.RemoteAddr().String(), "panic", r)
	}
}

// endConn closes the connection, takes it off the unauthenticated list
// (where it counts until admitted, so refused ones waiting for their
// channel open stay under that cap) and the server's list, and marks it
// done in s.wg.
func (s *Server) endConn(raw net.Conn, pending *unauthEntry) {
	s.unauth.done(pending)
	raw.Close()
	s.mu.Lock()
	delete(s.raws, raw)
	s.mu.Unlock()
	s.wg.Done()
}

// handshake runs the SSH handshake on raw, once the connection has a
// handshake slot, and returns the connection's control state, or nil when
// it must close.
func (s *Server) handshake(raw net.Conn, pending *unauthEntry) *ctl {
	if !s.waitSlot(pending) {
		return nil
	}
	if tc, ok := raw.(*net.TCPConn); ok {
		if s.cfg.SendBuffer > 0 {
			tc.SetWriteBuffer(s.cfg.SendBuffer)
		}
		tc.SetNoDelay(true)
	}
	remote := raw.RemoteAddr().String()
	raw.SetDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
	sc, chans, reqs, err := ssh.NewServerConn(raw, s.ssh)
	if err != nil {
		why := hsError
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			why = hsTimeout
		} else if !s.unauth.done(pending) {
			why = hsEvicted
		}
		s.m.handshake.WithLabelValues(why.String()).Inc()
		s.log.Debug("handshake failed", "remote", remote, "cause", why.String(), "err", err)
		return nil
	}
	raw.SetDeadline(time.Time{})
	c := &conn{raw: raw, ssh: sc, key: keyOf(sc.Permissions), idx: -1}
	c.log = s.log.With("remote", remote, "user", quote(sc.User()), "client", quote(string(sc.ClientVersion())))
	return &ctl{srv: s, c: c, chans: chans, greqs: reqs}
}

// serve admits the handshaken connection and runs its control loop until
// it closes.
func (s *Server) serve(k *ctl, pending *unauthEntry) {
	c := k.c
	defer func() {
		c.ssh.Close()
		c.pmu.Lock()
		c.over = true
		c.pmu.Unlock()
		c.pings.Wait() // no keepalive request outlives the connection
	}()
	key := ipKey(c.raw.RemoteAddr())
	why, ok := s.conns.admit(key)
	select {
	case <-s.stopping:
		if ok {
			s.conns.release(key)
		}
		why, ok = refuseShuttingDown, false
	default:
	}
	if !ok {
		s.refuse(k, why)
		return
	}
	defer s.conns.release(key)
	if !s.unauth.done(pending) {
		c.closeWith(causeEvicted) // pushed out by the unauthenticated cap at the last moment
	}
	if c.key != "" {
		c.log.Info("connect", "key", c.key)
	} else {
		c.log.Info("connect")
	}
	if s.cfg.KeepAlive > 0 {
		c.pingDue.Store(time.Now().Add(s.cfg.KeepAlive).UnixNano())
		s.addConn(c)
		defer s.removeConn(c)
	}
	c.log.Info("disconnect", "reason", s.channels(k).String())
}

// waitSlot waits, for a queued connection, until it gets a handshake slot;
// it reports false when the connection must close instead (it waited
// HandshakeTimeout, was evicted, or the server is stopping).
func (s *Server) waitSlot(e *unauthEntry) bool {
	if e.ready == nil {
		return true
	}
	t := time.NewTimer(s.cfg.HandshakeTimeout)
	defer t.Stop()
	select {
	case <-e.ready:
		if s.unauth.started(e) {
			return true
		}
		s.m.handshake.WithLabelValues(hsEvicted.String()).Inc()
	case <-t.C:
		if s.unauth.done(e) {
			s.m.handshake.WithLabelValues(hsQueueTimeout.String()).Inc()
			s.log.Debug("handshake queue timeout", "remote", e.conn.RemoteAddr().String())
		}
	case <-s.stopping:
	}
	return false
}

// banner is shown by SSH clients before authentication. It is empty unless
// the connection is going to be refused admission: then it says why, so
// the player reads the reason and not a bare "connection closed".
func (s *Server) banner(m ssh.ConnMetadata) string {
	why, ok := s.conns.wouldAdmit(ipKey(m.RemoteAddr()))
	select {
	case <-s.stopping:
		why, ok = refuseShuttingDown, false
	default:
	}
	if ok {
		return ""
	}
	return why.message() + "\r\n"
}

// refuse turns the connection away with reason, shown to the client when it
// opens its session channel, then closes it.
func (s *Server) refuse(k *ctl, why refusal) {
	s.m.rejections.WithLabelValues(why.String()).Inc()
	k.c.log.Info("reject", "reason", why.String())
	k.refuse, k.refusing = why, true
	t := time.NewTimer(s.cfg.HandshakeTimeout)
	defer t.Stop()
	k.wait(nil, nil, t.C, s.closing) // until the first channel open, a timeout or the shutdown
	k.c.closeWith(causeRefused)
	k.drain()
}

// channels waits for the connection's session channel, runs the session,
// and returns when the connection has closed, with the reason.
func (s *Server) channels(k *ctl) cause {
	c := k.c
	t := time.NewTimer(s.cfg.HandshakeTimeout)
	defer t.Stop()
	timeout, closing := t.C, s.closing
	for k.sess == nil {
		switch k.wait(nil, nil, timeout, closing) {
		case evGone:
			return c.why(causeGone)
		case evTimer:
			timeout = nil
			c.closeWith(causeNoSession)
		case evClosing:
			closing = nil
			c.closeWith(causeShutdown)
		}
	}
	t.Stop()
	k.sess.run(k)
	k.drain()
	return c.why(k.sess.why())
}

// event is what ended a ctl.wait.
type event int

const (
	evA       event = iota // the first channel given closed
	evB                    // the second channel given closed
	evTimer                // the timer fired
	evClosing              // the closing channel given closed
	evOpened               // the session channel was opened
	evReqs                 // the session channel's requests ended (it closed); the session has ended
	evGone                 // the connection is closed and every source drained
)

// ctl is a connection's control state. One goroutine per connection (the
// one serveConn starts after the handshake) answers its global requests
// (all refused), its channel opens (one session, nothing else) and the
// session channel's requests, and between them runs the session's life
// cycle: every wait of that life cycle is a ctl.wait, so no source is
// left undrained.
type ctl struct {
	srv      *Server
	c        *conn
	chans    <-chan ssh.NewChannel // nil once closed
	greqs    <-chan *ssh.Request   // global requests; nil once closed
	sess     *session              // the session once its channel is open
	sreqs    <-chan *ssh.Request   // its requests; nil before it opens and once it closed
	refusing bool                  // refuse every channel, with refuse's message
	refuse   refusal               // why, when refusing
	refused  int                   // channel opens refused
}

// wait serves the connection until a or b closes, t fires, closing closes,
// the session channel opens or its requests end, or the connection is gone.
// Nil channels never fire.
func (k *ctl) wait(a, b <-chan struct{}, t <-chan time.Time, closing <-chan struct{}) event {
	for {
		if k.chans == nil && k.greqs == nil && k.sreqs == nil {
			return evGone
		}
		select {
		case <-a:
			return evA
		case <-b:
			return evB
		case <-t:
			return evTimer
		case <-closing:
			return evClosing
		case nc, ok := <-k.chans:
			if !ok {
				k.chans = nil
			} else if k.open(nc) {
				return evOpened
			}
		case r, ok := <-k.greqs:
			if !ok {
				k.greqs = nil
			} else if r.WantReply {
				r.Reply(false, nil)
			}
		case r, ok := <-k.sreqs:
			if !ok {
				k.sreqs = nil
				k.sess.end(causeClosed)
				return evReqs
			}
			k.sess.handle(r)
		}
	}
}

// drain serves the connection until it is gone.
func (k *ctl) drain() {
	for k.wait(nil, nil, nil, nil) != evGone {
	}
}

// open accepts the first session channel and refuses everything else; it
// reports whether it opened the session.
func (k *ctl) open(nc ssh.NewChannel) bool {
	s, c := k.srv, k.c
	switch {
	case k.refusing:
		nc.Reject(ssh.ResourceShortage, k.refuse.message())
		c.closeWith(causeRefused)
	case nc.ChannelType() == "session" && k.sess == nil:
		ch, reqs, err := nc.Accept()
		if err != nil {
			c.closeWith(causeAcceptFailed)
			return false
		}
		k.sess = newSession(s, c, ch)
		k.sreqs = reqs
		return true
	case nc.ChannelType() != "session":
		s.m.rejections.WithLabelValues(refuseChannelType.String()).Inc()
		c.log.Debug("refused channel", "type", quote(nc.ChannelType()))
		nc.Reject(ssh.Prohibited, "snaked serves a game only")
	default:
		s.m.rejections.WithLabelValues(refuseExtraSession.String()).Inc()
		nc.Reject(ssh.Prohibited, "one session per connection")
	}
	if k.refused++; k.refused > maxRefusedChannels {
		c.closeWith(causeRefusedChannels)
	}
	return false
}

// keepAliveMisses is how many keepalive intervals a keepalive may go
// unanswered before the connection is closed.
const keepAliveMisses = 3

// keepalive, called by the watchdog at time now, sends c a keepalive when
// one is due and closes c when one stayed unanswered for keepAliveMisses
// intervals.
// As with OpenSSH's ClientAliveInterval, one is due only after an
// interval in which the client sent nothing: a player who types is alive,
// and a crowd at play needs hardly any pings.
// The request runs in a short-lived goroutine (it waits for the reply),
// counted in c.pings and waited for by serveConn.
func (s *Server) keepalive(c *conn, now int64) {
	ka := s.cfg.KeepAlive.Nanoseconds()
	if sent := c.pingSent.Load(); sent != 0 {
		if now-sent > keepAliveMisses*ka {
			c.closeWith(causeKeepAlive)
		}
		return
	}
	if now < c.pingDue.Load() {
		return
	}
	if in := c.heard.Load(); now-in < ka {
		c.pingDue.Store(in + ka)
		return
	}
	c.pmu.Lock()
	defer c.pmu.Unlock()
	if c.over {
		return
	}
	c.pingSent.Store(now)
	c.pings.Go(func() {
		pprof.SetGoroutineLabels(s.labels)
		defer func() {
			if r := recover(); r != nil {
				c.log.Error("panic in keepalive", "panic", r)
				c.closeWith(causePanic)
			}
		}()
		if _, _, err := c.ssh.SendRequest("keepalive@openssh.com", true, nil); err != nil {
			return // closing; pingSent stays set, so no further pings
		}
		c.pingDue.Store(time.Now().Add(s.cfg.KeepAlive).UnixNano())
		c.pingSent.Store(0)
	})
}
