// Package cluster owns the link between one simulation process and the SSH
// gateways that serve its players, over NATS (issue 12). This file holds
// the connection (options, credentials, TLS, an embedded server for
// one-machine setups and tests) and the subjects; sim.go is the
// simulation's side (joins, inputs, gateway leases applied to a
// game.World), gateway.go the gateway's (a game.Host whose inputs go to
// the simulation).
//
// Subjects, under a prefix (default "snaked", so several worlds can share
// one NATS):
//
//	PREFIX.join    request/reply: a gateway asks for a snake (input.go)
//	PREFIX.input   turns, dashes, respawns and leaves, fire and forget
//	PREFIX.hb      gateway heartbeats: a gateway silent for Lease loses its snakes
//
// Messages that fail to decode, or name a snake the sending gateway does
// not own, are dropped and counted (Stats), never applied.
package cluster

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// DefaultPrefix is the subjects' prefix unless told otherwise.
const DefaultPrefix = "snaked"

// Options say how to reach NATS.
type Options struct {
	URL      string // nats://host:port[,nats://...]
	Prefix   string // subjects' prefix; "" = DefaultPrefix
	Creds    string // a credentials file (JWT and NKey seed); "" = none
	User     string // user and password; "" = none
	Password string
	CA       string // a CA certificate file to verify the server; "" = the system's
	Cert     string // a client certificate and key for mutual TLS; "" = none
	Key      string
	Name     string       // the connection's name in the server's monitoring
	Log      *slog.Logger // where the connection's asynchronous errors (a slow consumer) go; nil = slog.Default()
	// Wait makes Connect return at once when NATS is not reachable yet
	// and keep trying (a gateway started before its NATS serves its
	// players a "world restarting" banner meanwhile); otherwise the first
	// connection must succeed.
	Wait bool
}

// Connect dials NATS with o's credentials and TLS settings. The connection
// reconnects forever: a gateway keeps its players through an outage.
func Connect(o Options) (*nats.Conn, error) {
	if o.URL == "" {
		return nil, errors.New("cluster: no NATS URL")
	}
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	opts := []nats.Option{nats.Name(o.Name), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			subj := ""
			if sub != nil {
				subj = sub.Subject
			}
			log.Warn("nats", "subject", subj, "err", err) // a follower that falls behind resyncs by itself
		})}
	if o.Wait {
		opts = append(opts, nats.RetryOnFailedConnect(true))
	}
	if o.Creds != "" {
		opts = append(opts, nats.UserCredentials(o.Creds))
	}
	if o.User != "" {
		opts = append(opts, nats.UserInfo(o.User, o.Password))
	}
	if o.CA != "" {
		opts = append(opts, nats.RootCAs(o.CA))
	}
	if o.Cert != "" || o.Key != "" {
		if o.Cert == "" || o.Key == "" {
			return nil, errors.New("cluster: a client certificate needs both -nats-cert and -nats-key")
		}
		opts = append(opts, nats.ClientCert(o.Cert, o.Key))
	}
	nc, err := nats.Connect(o.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("cluster: connect to %s: %w", o.URL, err)
	}
	return nc, nil
}

// Embed starts a NATS server in this process listening on addr (host:port;
// port 0 picks one). An empty host means loopback: nobody else may drive
// the world unless the operator says so. With a user, every client must
// give that user and password (gateways on other machines then can, and
// nobody else). It returns once the server accepts connections; Shutdown
// stops it. For TLS or credentials files, run a nats-server instead.
func Embed(addr, user, password string) (*server.Server, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("cluster: embedded NATS address %q: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return nil, fmt.Errorf("cluster: embedded NATS port %q", port)
	}
	if p == 0 {
		p = server.RANDOM_PORT
	}
	if user == "" && password != "" {
		return nil, errors.New("cluster: embedded NATS: a password without a user")
	}
	s, err := server.NewServer(&server.Options{Host: host, Port: p, NoLog: true, NoSigs: true,
		MaxPayload: server.MAX_PAYLOAD_SIZE, Username: user, Password: password})
	if err != nil {
		return nil, fmt.Errorf("cluster: embedded NATS: %w", err)
	}
	go s.Start() // owned by s: Shutdown stops it and waits
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, errors.New("cluster: embedded NATS did not start")
	}
	return s, nil
}

// subjects are the link's subjects under one prefix.
type subjects struct{ join, input, hb string }

func subjectsOf(prefix string) subjects {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return subjects{join: prefix + ".join", input: prefix + ".input", hb: prefix + ".hb"}
}
