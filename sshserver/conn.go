package sshserver

import (
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// conn is one established SSH connection.
type conn struct {
	raw net.Conn
	ssh *ssh.ServerConn
	log *slog.Logger

	once   sync.Once
	reason string // why it closed; written once under once
}

// closeWith closes the connection, remembering the first reason given.
func (c *conn) closeWith(reason string) {
	c.once.Do(func() { c.reason = reason })
	c.raw.Close()
}

// why reports the reason recorded by closeWith, or def.
func (c *conn) why(def string) string {
	c.once.Do(func() { c.reason = def })
	return c.reason
}

// serveConn runs one accepted connection: the handshake under a deadline,
// the admission checks, then its channels until it closes.
func (s *Server) serveConn(raw net.Conn, pending *unauthEntry) {
	defer raw.Close()
	remote := raw.RemoteAddr().String()
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("panic in connection", "remote", remote, "panic", r)
		}
	}()
	if tc, ok := raw.(*net.TCPConn); ok {
		tc.SetWriteBuffer(s.cfg.SendBuffer)
		tc.SetNoDelay(true)
	}
	// The connection counts as unauthenticated until it is admitted, so
	// refused ones waiting for their channel open stay under that cap.
	defer s.unauth.done(pending)
	raw.SetDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
	sc, chans, reqs, err := ssh.NewServerConn(raw, s.ssh)
	if err != nil {
		cause := "error"
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			cause = "timeout"
		} else if !s.unauth.done(pending) {
			cause = "evicted"
		}
		s.m.handshake.WithLabelValues(cause).Inc()
		s.log.Debug("handshake failed", "remote", remote, "cause", cause, "err", err)
		return
	}
	raw.SetDeadline(time.Time{})
	c := &conn{raw: raw, ssh: sc}
	c.log = s.log.With("remote", remote, "user", quote(sc.User()), "client", quote(string(sc.ClientVersion())))

	var wg sync.WaitGroup
	defer wg.Wait()
	defer sc.Close()

	key := ipKey(raw.RemoteAddr())
	reason := s.conns.admit(key)
	select {
	case <-s.stopping:
		if reason == "" {
			s.conns.release(key)
		}
		reason = "shutting down"
	default:
	}
	if reason != "" {
		wg.Go(func() { ssh.DiscardRequests(reqs) }) // ends when the connection closes
		s.refuse(c, chans, reason)
		return
	}
	defer s.conns.release(key)
	if !s.unauth.done(pending) {
		c.closeWith("evicted") // pushed out by the unauthenticated cap at the last moment
	}
	c.log.Info("connect")

	done := make(chan struct{})
	if s.cfg.KeepAlive > 0 {
		wg.Go(func() { s.keepalive(c, done) })
	}
	defer close(done)

	why := s.channels(c, chans, reqs)
	c.log.Info("disconnect", "reason", why)
}

// refuse turns the connection away with reason, shown to the client when it
// opens its session channel, then closes it.
func (s *Server) refuse(c *conn, chans <-chan ssh.NewChannel, reason string) {
	s.m.rejections.WithLabelValues(reasonLabel(reason)).Inc()
	c.log.Info("reject", "reason", reason)
	t := time.NewTimer(s.cfg.HandshakeTimeout)
	defer t.Stop()
	select {
	case nc, ok := <-chans:
		if ok {
			nc.Reject(ssh.ResourceShortage, "snaked: "+reason+"; please try again later")
		}
	case <-t.C:
	case <-s.closing:
	}
	c.closeWith(reason)
	for nc := range chans {
		nc.Reject(ssh.ResourceShortage, reason)
	}
}

func reasonLabel(r string) string {
	switch r {
	case "server full":
		return "conn_cap"
	case "too many connections from this address":
		return "conn_per_ip"
	case "shutting down":
		return "shutting_down"
	}
	return "other"
}

// channels serves the connection's channel opens (one session, nothing else)
// and its global requests (all refused: tcpip-forward and friends). It
// returns when the connection has closed, with the reason.
func (s *Server) channels(c *conn, chans <-chan ssh.NewChannel, reqs <-chan *ssh.Request) string {
	var sess *session
	refused := 0
	var wg sync.WaitGroup
	defer wg.Wait()
	t := time.NewTimer(s.cfg.HandshakeTimeout)
	defer t.Stop()
	closing := s.closing
	for {
		select {
		case nc, ok := <-chans:
			if !ok {
				wg.Wait()
				if sess != nil {
					return c.why(sess.why())
				}
				return c.why("closed without a session")
			}
			if nc.ChannelType() == "session" && sess == nil {
				ch, reqs, err := nc.Accept()
				if err != nil {
					c.closeWith("channel accept failed")
					continue
				}
				sess = newSession(s, c, ch)
				wg.Go(func() { sess.run(reqs) })
				continue
			}
			if nc.ChannelType() != "session" {
				s.m.rejections.WithLabelValues("channel_type").Inc()
				c.log.Debug("refused channel", "type", quote(nc.ChannelType()))
				nc.Reject(ssh.Prohibited, "snaked serves a game only")
			} else {
				s.m.rejections.WithLabelValues("extra_session").Inc()
				nc.Reject(ssh.Prohibited, "one session per connection")
			}
			if refused++; refused > maxRefusedChannels {
				c.closeWith("too many refused channels")
			}
		case r, ok := <-reqs:
			if !ok {
				reqs = nil
			} else if r.WantReply {
				r.Reply(false, nil)
			}
		case <-t.C:
			if sess == nil {
				c.closeWith("no session opened in time")
			}
		case <-closing:
			closing = nil // the session (if any) handles shutdown itself
			if sess == nil {
				c.closeWith("shutdown")
			}
		}
	}
}

// keepalive pings the client every KeepAlive and closes the connection when
// a ping stays unanswered for three intervals.
func (s *Server) keepalive(c *conn, done <-chan struct{}) {
	t := time.NewTicker(s.cfg.KeepAlive)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		miss := time.AfterFunc(3*s.cfg.KeepAlive, func() { c.closeWith("keepalive timeout") })
		_, _, err := c.ssh.SendRequest("keepalive@openssh.com", true, nil)
		if !miss.Stop() || err != nil {
			return
		}
	}
}
