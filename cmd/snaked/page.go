package main

import (
	"context"
	"log/slog"
	"net"

	"golang.org/x/crypto/ssh"

	"snaked/game"
	"snaked/internal/status"
	"snaked/sshserver"
)

// statusPage is the status page (-http-addr) of a process with SSH
// sessions: one process, or a gateway.
type statusPage struct {
	srv *status.Server
	ln  net.Listener
	url string // where it is, as printed at start
	log *slog.Logger
}

// newStatusPage listens on cfg.HTTPAddr and builds the page of world,
// with crowd's counts, the scores sc reads (a gateway's come through its
// link) and the host key.
func newStatusPage(cfg config, world game.Host, crowd *sshserver.Server, sc sshserver.Config, key ssh.PublicKey, log *slog.Logger) (*statusPage, error) {
	pc := status.Config{
		World: world, Crowd: crowd, HostKey: key, Join: sc.JoinHint, Spectate: spectateHint(sc.JoinHint, sc.SpectatorUser),
		Version: version(), MaxStreams: cfg.HTTPStreams, Logger: log,
	}
	if sc.Scores != nil {
		pc.Boards = sc.Scores
	}
	srv, err := status.New(pc)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return nil, err
	}
	return &statusPage{srv: srv, ln: ln, url: pageURL(ln.Addr()), log: log}, nil
}

// run serves the page until ctx ends or the returned stop is called; stop
// waits until the page's goroutines have returned (a couple of seconds at
// most: status.Server.Serve).
func (p *statusPage) run(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := p.srv.Serve(ctx, p.ln); err != nil {
			p.log.Error("status page", "err", err)
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// pageURL is the page's address for a browser on this machine: an
// unspecified host (":8080") is localhost.
func pageURL(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String() + "/"
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}
