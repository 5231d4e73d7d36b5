// Package cluster owns the link between one simulation process and the SSH
// gateways that serve its players, over NATS: the simulation's side (joins,
// inputs and gateway leases applied to a game.World, the world's ticks and
// snapshots, the scores service), a gateway's (a game.Host that follows the
// world as a replica and sends its players' joins, inputs and games back),
// and the connection itself (credentials, TLS, an embedded NATS server with
// role users and their permissions).
package cluster

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
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
	Log      *slog.Logger // where the connection's asynchronous errors (a slow consumer, a refused publish) go; nil = slog.Default()
	// Gateway is the gateway's name on the link (see GatewayName): its
	// requests' replies come to _INBOX.PREFIX.Gateway, which its NATS user
	// may be limited to. "" for the simulation.
	Gateway string
	// Wait makes Connect return at once when NATS is not reachable yet
	// and keep trying (a gateway started before its NATS serves its
	// players a "world restarting" banner meanwhile); otherwise the first
	// connection must succeed.
	Wait bool
}

// GatewayName is a gateway's name on the link: name when given, else its
// NATS user, else a random one. The name is a subject token
// ([A-Za-z0-9_-], at most 64 bytes).
func GatewayName(name, user string) (string, error) {
	if name == "" {
		name = user
	}
	if name == "" {
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		return "gw-" + hex.EncodeToString(b[:]), nil
	}
	if !token(name) {
		return "", fmt.Errorf("cluster: gateway name %q: want 1..64 of [A-Za-z0-9_-]", name)
	}
	return name, nil
}

// token reports whether s is a safe subject token: 1..64 of [A-Za-z0-9_-].
func token(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
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
	if o.Gateway != "" {
		opts = append(opts, nats.CustomInboxPrefix(inboxOf(prefixOr(o.Prefix), o.Gateway)))
	}
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

// Roles of the link's NATS users.
const (
	RoleSim     = "sim"
	RoleGateway = "gateway"
)

// User is one NATS user of an embedded server: the simulation's or a
// gateway's (whose user name is its gateway name).
type User struct {
	Role     string // RoleSim or RoleGateway
	Name     string
	Password string // plain, or a bcrypt hash ($2a$...)
}

// ReadUsers reads a users file: one user a line, "ROLE NAME PASSWORD"
// (ROLE sim or gateway; NAME a subject token; the password plain or a
// bcrypt hash); blank lines and lines starting with # are skipped. It
// needs exactly one sim user.
func ReadUsers(path string) ([]User, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cluster: users file: %w", err)
	}
	defer f.Close()
	var us []User
	sims := 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != RoleSim && f[0] != RoleGateway || !token(f[1]) {
			return nil, fmt.Errorf("cluster: users file %s line %d: want ROLE NAME PASSWORD with ROLE sim or gateway and NAME of [A-Za-z0-9_-]", path, n)
		}
		if f[0] == RoleSim {
			sims++
		}
		us = append(us, User{Role: f[0], Name: f[1], Password: f[2]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cluster: users file %s: %w", path, err)
	}
	if sims != 1 {
		return nil, fmt.Errorf("cluster: users file %s: want exactly one sim user, found %d", path, sims)
	}
	return us, nil
}

// Permissions returns what a user of role may publish and subscribe to
// under prefix: the simulation publishes the world and answers requests
// and reads every gateway's subjects; a gateway publishes only under its
// own name, and reads the world, the heartbeats and its own replies. So a
// gateway's credentials cannot publish ticks or snapshots, speak for
// another gateway, or read another gateway's replies.
func Permissions(role, name, prefix string) *server.Permissions {
	p := prefixOr(prefix)
	if role == RoleSim {
		return &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{p + ".tick", p + ".g", p + ".r.>", "_INBOX." + p + ".>"}},
			Subscribe: &server.SubjectPermission{Allow: []string{p + ".gw.*.>"}},
		}
	}
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: []string{p + ".gw." + name + ".>"}},
		Subscribe: &server.SubjectPermission{Allow: []string{p + ".tick", p + ".g", p + ".r.>", p + ".gw.*.hb", inboxOf(p, name) + ".>"}},
	}
}

// Auth says who may use an embedded NATS server: role users, each with
// its role's permissions under Prefix (Permissions); or else one user and
// password every client gives, which may do anything; or else anyone.
type Auth struct {
	Users          []User
	Prefix         string
	User, Password string
}

// MaxPayload is the embedded NATS's largest message: a tick's delta of a
// 100,000-snake world is about 600 KB, and a tick in which the bots fill
// the world passes NATS's default 1 MB (its publish would fail and every
// gateway resync). An external NATS for such a world needs max_payload
// set as high (README, "Running a cluster").
const MaxPayload = 8 << 20

// Embed starts a NATS server in this process listening on addr (host:port;
// port 0 picks one), admitting whom a allows. An empty host means
// loopback; a server that admits anyone listens only there.
// It returns once the server accepts connections; Shutdown stops it. For
// TLS or credentials files, run a nats-server instead.
func Embed(addr string, a Auth) (*server.Server, error) {
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
	if a.User == "" && a.Password != "" {
		return nil, errors.New("cluster: embedded NATS: a password without a user")
	}
	if len(a.Users) > 0 && a.User != "" {
		return nil, errors.New("cluster: embedded NATS: a users file or one user, not both")
	}
	if ip := net.ParseIP(host); len(a.Users) == 0 && a.User == "" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("cluster: embedded NATS on %s admits anyone: give it users (-nats-users) or listen on loopback", host)
	}
	// NoFastProducerStall: a client more than three quarters of its
	// pending limit behind misses messages rather than holding up their
	// publisher, so the simulation never waits for a gateway that fell
	// behind (the gateway sees a gap and asks for a snapshot); the server
	// would otherwise hold the simulation's connection up to 10 ms a read.
	opts := &server.Options{Host: host, Port: p, NoLog: true, NoSigs: true, NoFastProducerStall: true,
		MaxPayload: MaxPayload, Username: a.User, Password: a.Password}
	for _, u := range a.Users {
		opts.Users = append(opts.Users, &server.User{Username: u.Name, Password: u.Password,
			Permissions: Permissions(u.Role, u.Name, a.Prefix)})
	}
	s, err := server.NewServer(opts)
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

func prefixOr(prefix string) string {
	if prefix == "" {
		return DefaultPrefix
	}
	return prefix
}

// inboxOf is the inbox prefix of gateway name: its replies come under it.
func inboxOf(prefix, name string) string { return "_INBOX." + prefix + "." + name }

// subjects are the link's subjects under one prefix, for one gateway, or
// (name "*") for the simulation, which reads every gateway's.
//
// Subjects, under a prefix P (default "snaked", so several worlds can share
// one NATS). Everything a gateway sends is under its own name, so NATS
// permissions can keep one gateway from speaking for another:
//
//	P.tick                 the simulation's ticks (stream.go)
//	P.g                    their global part: records, leaderboard, counts, heads (regions.go)
//	P.r.X.Y                their pixels in region (X, Y) of the grid (regions.go)
//	P.gw.NAME.join         request/reply: gateway NAME asks for a snake
//	P.gw.NAME.input        its players' turns, dashes, respawns, leaves
//	P.gw.NAME.hb           its heartbeats: a gateway silent for Lease loses its snakes
//	P.gw.NAME.snapshot     request: a snapshot of the world, sent to its inbox
//	P.gw.NAME.region       request: a snapshot of one region, sent to its inbox
//	P.gw.NAME.scores.*     its scores questions and finished games (scores.go)
//	_INBOX.P.NAME.>        its replies
//
// The simulation reads who sent a message from the subject (NAME) and the
// gateway's instance in the message; messages that fail to decode, or name
// a snake the sending gateway's join did not give, are dropped and counted
// (Stats), never applied.
type subjects struct {
	prefix                                                string
	tick, global, regions                                 string // regions: the region subjects' prefix, P.r.
	join, input, hb, snapshot, region, names, ask, record string
	gw                                                    string // prefix + ".gw.": where a gateway's name starts
}

func subjectsOf(prefix, name string) subjects {
	p := prefixOr(prefix)
	g := p + ".gw." + name + "."
	return subjects{prefix: p, tick: p + ".tick", global: p + ".g", regions: p + ".r.", gw: p + ".gw.",
		join: g + "join", input: g + "input", hb: g + "hb", snapshot: g + "snapshot", region: g + "region",
		names: g + "scores.names", ask: g + "scores.ask", record: g + "scores.record"}
}

// regionSubject is the subject of region (x, y)'s pixels.
func (s *subjects) regionSubject(x, y int) string {
	return s.regions + strconv.Itoa(x) + "." + strconv.Itoa(y)
}

// sender returns the gateway name in subject, one of s's (from a wildcard
// subscription), or false.
func (s *subjects) sender(subject string) (string, bool) {
	rest, ok := strings.CutPrefix(subject, s.gw)
	if !ok {
		return "", false
	}
	name, _, ok := strings.Cut(rest, ".")
	return name, ok && token(name)
}

// replyOK reports whether request m, on one of s's wildcard subjects, has
// a reply subject in its sender's own inbox: an answer goes to the
// gateway that asked and to no other.
func (s *subjects) replyOK(m *nats.Msg) bool {
	name, ok := s.sender(m.Subject)
	return ok && strings.HasPrefix(m.Reply, inboxOf(s.prefix, name)+".")
}
