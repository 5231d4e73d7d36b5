package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"snaked/game"
	"snaked/hostkeys"
	"snaked/internal/cluster"
	"snaked/internal/scores"
	"snaked/internal/status"
	"snaked/render"
	"snaked/sshserver"
)

// config is everything the daemon is started with. Its defaults come from
// the packages that own them (game.DefaultConfig, sshserver.DefaultConfig),
// and every flag's range from their exported limits: the flag table below
// is the only place that names them, and -h and the README's tables are
// printed from it.
type config struct {
	Addr     string
	StateDir string // "" = hostkeys.DefaultDir()
	Scores   string // the scores database; "" = scores.db in the state directory, "off" = none
	World    game.Config
	Server   sshserver.Config
	LogLevel slog.Level

	ClaimTTL      time.Duration // -claim-ttl
	NamesPerKey   int           // -names-per-key
	ClaimsPerHour int           // -claims-per-hour

	Role      role            // -role: one process, or a part of a cluster over NATS
	NATS      cluster.Options // the NATS link (-nats, -nats-prefix, credentials, TLS)
	NATSEmbed string          // -nats-embed: run a NATS server in this process (role sim)
	NATSUsers string          // -nats-users: the embedded NATS's users and their roles
	SpawnNear bool            // -spawn-near-gateway: a gateway's players start near its others (role sim)

	GatewayName     string             // -gateway-name: the gateway's name on the link
	FollowMaxPixels int                // -follow-max-pixels: the largest world a gateway follows
	Follow          cluster.FollowMode // -follow: the world's whole deltas, or only the regions the sessions show

	HTTPAddr    string // -http-addr: the status page's listener; "" = none
	HTTPStreams int    // -http-streams: the status page's live streams at once
	Version     bool   // -version: print the version and exit

	autoWorld  bool // -world auto: game.AutoSize(-max-sessions)
	autoTarget bool // -bot-target auto: game.AutoBotTarget(world)
}

// option is one flag: its name (the environment twin is derived from it),
// what it sets and how it is shown in -h and the README.
type option struct {
	name  string
	value value  // parses and range-checks; its String at registration is the default
	def   string // the default as shown, when the value's String is not telling
	rng   string // the allowed values as shown, "" when any
	usage string
	noEnv bool // the flag has no environment twin (-version)
}

// value is a flag's value: it parses and range-checks what it is set to,
// and tells -h its range.
type value interface {
	flag.Value
	// rangeText is the allowed values as -h shows them unless the
	// option says otherwise; "" for any.
	rangeText() string
}

// envName is the environment twin of a flag: -max-sessions is SNAKED_MAX_SESSIONS.
func envName(flagName string) string {
	return "SNAKED_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// botRange keeps players plus bots within the world's capacity.
var botRange = sshserver.Range{Min: 0, Max: int64(game.MaxCapacity) - sshserver.SessionsRange.Max}

// workersRange bounds -sim-workers.
var workersRange = sshserver.Range{Min: 1, Max: game.MaxWorkers}

// claimRange bounds -claim-ttl: an hour to ten years.
var claimRange = sshserver.Range{Min: int64(time.Hour), Max: int64(10 * 365 * 24 * time.Hour)}

// defW and defH are the world's size at the default capacity.
var defW, defH = game.AutoSize(sshserver.DefaultConfig().MaxSessions)

// maxAutoW and maxAutoH are the auto world's size at the largest
// -max-sessions: the largest world a simulation runs unless told -world.
var maxAutoW, maxAutoH = game.AutoSize(int(sshserver.SessionsRange.Max))

// Ranges of the name flags, the gateway's and the status page's.
var (
	namesRange   = sshserver.Range{Min: 1, Max: 100}
	claimsRange  = sshserver.Range{Min: 1, Max: 1_000_000}
	followRange  = sshserver.Range{Min: game.MinSide * game.MinSide, Max: game.MaxPixels}
	streamsRange = sshserver.Range{Min: int64(status.StreamsRange.Min), Max: int64(status.StreamsRange.Max)}
)

// options returns the daemon's flags, bound to c (which holds the defaults).
func options(c *config) []option {
	d := func(r sshserver.Range) string { return r.DurationString() }
	return []option{
		{name: "addr", value: &text{p: &c.Addr}, usage: "address to listen on for SSH"},
		{name: "state-dir", value: &text{p: &c.StateDir, empty: true}, def: "$XDG_STATE_HOME/snaked, else ~/.local/state/snaked",
			usage: "directory holding the host key (created 0700; the key 0600) and the scores database"},
		{name: "scores", value: &text{p: &c.Scores, empty: true}, def: "scores.db in the state directory",
			usage: "the scores database (SQLite; finished games, name claims); off: no scores, names are not claimed"},
		{name: "claim-ttl", value: &duration{p: &c.ClaimTTL, r: claimRange}, rng: claimRange.DurationString(),
			usage: "a name a key claimed is free again after this long unused"},
		{name: "names-per-key", value: &integer{p: &c.NamesPerKey, r: namesRange},
			usage: "names one key holds; claiming one more releases its least recently played"},
		{name: "claims-per-hour", value: &integer{p: &c.ClaimsPerHour, r: claimsRange},
			usage: "new name claims per address (IPv4, or IPv6 /64) per hour, and four times that for all of an IPv6 /48; past it names are played unclaimed"},
		{name: "world", value: worldSize{&c.World.W, &c.World.H, &c.autoWorld},
			def:   fmt.Sprintf("auto (%dx%d at the default -max-sessions)", defW, defH),
			rng:   fmt.Sprintf("auto, or WxH with each side %d..%d, at most %d pixels", game.MinSide, game.MaxSide, game.MaxPixels),
			usage: "world size in pixels, WxH (a text cell is 1x2 pixels); auto sizes it for -max-sessions players"},
		{name: "bot-target", value: &autoInteger{integer{p: &c.World.BotTarget, r: botRange}, &c.autoTarget},
			def:   fmt.Sprintf("auto (%d in the default world)", game.AutoBotTarget(defW, defH)),
			rng:   "auto, or " + botRange.String(),
			usage: fmt.Sprintf("bots fill the world up to this many snakes (people and bots) and step aside as people join; auto is one snake per %d pixels", game.PxPerSnake)},
		{name: "bots", value: &integer{p: &c.World.Bots, r: botRange},
			usage: "bots kept whatever the population (the floor under -bot-target)"},
		{name: "seed", value: &seed{p: &c.World.Seed}, def: "0 (from the clock)", usage: "world seed"},
		{name: "sim-workers", value: &integer{p: &c.World.Workers, r: workersRange}, def: "the cores Go runs on (GOMAXPROCS)",
			usage: "goroutines the world's tick runs on (one process, or role sim); the world is the same whatever the number"},
		{name: "max-sessions", value: &integer{p: &c.Server.MaxSessions, r: sshserver.SessionsRange},
			usage: "most concurrent sessions, players and spectators together"},
		{name: "max-per-ip", value: &integer{p: &c.Server.MaxPerIP, r: sshserver.SessionsRange},
			usage: "most concurrent sessions from one IPv4 address or IPv6 /64"},
		{name: "max-handshakes", value: &integer{p: &c.Server.MaxHandshakes, r: sshserver.HandshakesRange},
			usage: "most connections not yet admitted (in the SSH handshake or queued for it); past it the oldest is dropped"},
		{name: "max-handshakes-per-ip", value: &integer{p: &c.Server.MaxHandshakesPerIP, r: sshserver.HandshakesRange},
			usage: "SSH handshakes running at once per address; more connections from it queue"},
		{name: "handshake-queue", value: &integer{p: &c.Server.HandshakeQueue, r: sshserver.QueueRange},
			usage: "connections per address waiting for a handshake slot (a NAT's crowd); past it they are closed; 0 = none wait"},
		{name: "handshake-timeout", value: &duration{p: &c.Server.HandshakeTimeout, r: sshserver.HandshakeRange}, rng: d(sshserver.HandshakeRange),
			usage: "longest wait in the handshake queue, then for the handshake, then for the shell request"},
		{name: "keepalive", value: &duration{p: &c.Server.KeepAlive, r: sshserver.KeepAliveRange}, rng: d(sshserver.KeepAliveRange),
			usage: "SSH keepalive interval, counted from the client's last input; three unanswered drop the connection; 0 = off"},
		{name: "afk", value: &duration{p: &c.Server.IdleTimeout, r: sshserver.IdleRange}, rng: d(sshserver.IdleRange),
			usage: "disconnect players who send no input for this long; 0 = never"},
		{name: "stall", value: &duration{p: &c.Server.StallTimeout, r: sshserver.StallRange}, rng: d(sshserver.StallRange),
			usage: "disconnect a session whose write blocks this long"},
		{name: "send-buffer", value: &integer{p: &c.Server.SendBuffer, r: sshserver.SendBufferRange},
			usage: "kernel send buffer per connection in bytes (SO_SNDBUF); 0 = the kernel's default"},
		{name: "max-cells", value: &integer{p: &c.Server.MaxCells, r: sshserver.CellsRange},
			usage: fmt.Sprintf("terminal cells one session is drawn on (%d bytes of state each); a bigger terminal gets a centred playfield of this many", render.CellBytes)},
		{name: "max-cells-total", value: &integer{p: &c.Server.MaxCellsTotal, r: sshserver.CellsTotalRange},
			usage: fmt.Sprintf("terminal cells all sessions together are drawn on; when they are used up a session gets %dx%d", render.MinCols, render.MinRows)},
		{name: "spectator-user", value: &text{p: &c.Server.SpectatorUser}, usage: "SSH user name that spectates instead of playing"},
		{name: "shutdown-grace", value: &duration{p: &c.Server.ShutdownGrace, r: sshserver.GraceRange}, rng: d(sshserver.GraceRange),
			usage: "countdown shown to players before shutdown; 0 = goodbye at once"},
		{name: "metrics-addr", value: &text{p: &c.Server.MetricsAddr, empty: true}, def: "empty (off)",
			usage: "serve Prometheus /metrics and /debug/pprof/ here, e.g. 127.0.0.1:9222; keep it on loopback"},
		{name: "join-hint", value: &text{p: &c.Server.JoinHint, empty: true}, def: "ssh -p PORT localhost",
			usage: "how to join, shown in the banner and on the status page (whose known_hosts line names its host and port)"},
		{name: "http-addr", value: &text{p: &c.HTTPAddr, empty: true}, def: "empty (off)",
			usage: "serve the status page here, e.g. :8080: how to join, the host key's fingerprint and known_hosts line, who is online, the boards, a minimap; JSON at /api/status and /api/scores (not the metrics: those stay on -metrics-addr)"},
		{name: "http-streams", value: &integer{p: &c.HTTPStreams, r: streamsRange},
			usage: "status page viewers with a live stream at once; past it their pages poll every few seconds; 0 = every page polls"},
		{name: "log-level", value: level{&c.LogLevel}, rng: "debug, info, warn, error", usage: "log level"},
		{name: "role", value: &text{p: (*string)(&c.Role), empty: true}, def: "empty (one process)", rng: "single, sim, gateway",
			usage: "sim: the world, its clock and the scores database, no SSH; gateway: SSH sessions on a world streamed from the sim over NATS"},
		{name: "nats", value: &text{p: &c.NATS.URL, empty: true}, def: "empty", usage: "NATS URL(s) of the cluster, e.g. nats://10.0.0.5:4222"},
		{name: "nats-embed", value: &text{p: &c.NATSEmbed, empty: true}, def: "empty (off)",
			usage: "role sim: run a NATS server in this process at HOST:PORT (loopback when HOST is empty) and use it"},
		{name: "nats-users", value: &text{p: &c.NATSUsers, empty: true}, def: "empty (none)",
			usage: "role sim with -nats-embed: a file of the embedded NATS's users, a line each: ROLE NAME PASSWORD (ROLE sim or gateway); each gets only its role's permissions"},
		{name: "spawn-near-gateway", value: &boolean{p: &c.SpawnNear},
			usage: "role sim: a player starts each life near a live player of the same gateway (by -gateway-name) when there is one, so that each gateway's players stay together and a gateway on -follow regions follows fewer regions"},
		{name: "nats-prefix", value: &text{p: &c.NATS.Prefix}, usage: "subjects' prefix, so several worlds can share one NATS"},
		{name: "nats-creds", value: &text{p: &c.NATS.Creds, empty: true}, def: "empty", usage: "NATS credentials file (JWT and NKey seed)"},
		{name: "nats-user", value: &text{p: &c.NATS.User, empty: true}, def: "empty", usage: "NATS user (the password from SNAKED_NATS_PASSWORD)"},
		{name: "nats-password", value: &text{p: &c.NATS.Password, empty: true}, def: "empty", usage: "NATS password; prefer the environment variable"},
		{name: "nats-ca", value: &text{p: &c.NATS.CA, empty: true}, def: "empty (the system's)", usage: "CA certificate file that signed the NATS server's"},
		{name: "nats-cert", value: &text{p: &c.NATS.Cert, empty: true}, def: "empty", usage: "client certificate file for NATS mutual TLS (with -nats-key)"},
		{name: "nats-key", value: &text{p: &c.NATS.Key, empty: true}, def: "empty", usage: "client key file for NATS mutual TLS"},
		{name: "gateway-name", value: &text{p: &c.GatewayName, empty: true}, def: "the NATS user, else random",
			usage: "role gateway: its name on the link ([A-Za-z0-9_-]); its messages go under it, and a NATS user's permissions can be tied to it"},
		{name: "follow-max-pixels", value: &integer{p: &c.FollowMaxPixels, r: followRange},
			def:   fmt.Sprintf("%d (the auto world at the largest -max-sessions, %dx%d)", maxAutoW*maxAutoH, maxAutoW, maxAutoH),
			usage: "role gateway: the largest world it follows, in pixels; a larger world's snapshot is refused before anything is allocated for it"},
		{name: "follow", value: followMode{&c.Follow}, rng: "full, regions",
			usage: "role gateway: full follows every tick's whole delta; regions only the global part and the regions its sessions' cameras show (a camera that jumps waits a tick or two for its regions)"},
		{name: "version", value: &boolean{p: &c.Version}, noEnv: true, usage: "print the version (the module's and the VCS revision built from) and exit"},
	}
}

// defaults is the configuration with no flag and no environment.
func defaults() config {
	c := config{Addr: ":2222", World: game.DefaultConfig(), Server: sshserver.DefaultConfig(), LogLevel: slog.LevelInfo,
		ClaimTTL: scores.DefaultClaimTTL, NamesPerKey: scores.DefaultNamesPerKey, ClaimsPerHour: scores.DefaultClaimsPerHour,
		NATS: cluster.Options{Prefix: cluster.DefaultPrefix}, FollowMaxPixels: maxAutoW * maxAutoH, autoWorld: true, autoTarget: true,
		HTTPStreams: status.DefaultMaxStreams}
	c.World.Seed = 0
	c.World.Workers = runtime.GOMAXPROCS(0)
	c.Server.JoinHint = "" // derived from the listener
	return c
}

// parseConfig reads flags from args and, for every flag not given there, its
// SNAKED_* environment twin. With -h it prints the help to out and returns
// flag.ErrHelp.
func parseConfig(args []string, getenv func(string) string, out io.Writer) (config, error) {
	c := defaults()
	opts := options(&c)
	fs := flag.NewFlagSet("snaked", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned; -h prints below
	for _, o := range opts {
		fs.Var(o.value, o.name, o.usage)
	}
	rows := helpRows(opts)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		writeHelp(out, rows)
		return c, err
	}
	if err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, o := range opts {
		if given[o.name] || o.noEnv {
			continue
		}
		if v := getenv(envName(o.name)); v != "" {
			if err := o.value.Set(v); err != nil {
				return c, fmt.Errorf("%s=%q (flag -%s): %v", envName(o.name), v, o.name, err)
			}
		}
	}
	c.resolve()
	if err := c.checkRole(); err != nil {
		return c, err
	}
	return c, nil
}

// role is what the process is (-role).
type role string

// Roles.
const (
	roleDefault role = ""        // one process, as roleSingle
	roleSingle  role = "single"  // one process: the world and the SSH server
	roleSim     role = "sim"     // a cluster's simulation: the world, its clock and the scores, no SSH
	roleGateway role = "gateway" // a cluster's SSH gateway, on a world streamed from the simulation
)

// checkRole checks that the cluster flags go with the role.
func (c *config) checkRole() error {
	switch c.Role {
	case roleDefault, roleSingle:
		if c.NATS.URL != "" || c.NATSEmbed != "" {
			return errors.New("-nats and -nats-embed need -role sim or -role gateway")
		}
		if c.NATSUsers != "" {
			return errors.New("-nats-users needs -role sim with -nats-embed")
		}
		if c.SpawnNear {
			return errors.New("-spawn-near-gateway needs -role sim")
		}
	case roleSim:
		if c.HTTPAddr != "" {
			return errors.New("-http-addr: the simulation serves no status page; give it to the gateways")
		}
		if (c.NATS.URL == "") == (c.NATSEmbed == "") {
			return errors.New("-role sim needs either -nats URL or -nats-embed ADDR")
		}
		if c.NATSEmbed != "" && (c.NATS.Creds != "" || c.NATS.CA != "" || c.NATS.Cert != "" || c.NATS.Key != "") {
			return errors.New("-nats-embed takes -nats-users, or -nats-user and -nats-password, only: for TLS or a credentials file run a nats-server and give its URL with -nats")
		}
		if c.NATSUsers != "" && (c.NATSEmbed == "" || c.NATS.User != "") {
			return errors.New("-nats-users is for -nats-embed, instead of -nats-user")
		}
	case roleGateway:
		if c.NATS.URL == "" {
			return errors.New("-role gateway needs -nats URL")
		}
		if _, err := cluster.GatewayName(c.GatewayName, c.NATS.User); err != nil {
			return fmt.Errorf("-gateway-name %q (or -nats-user): want 1..64 of [A-Za-z0-9_-]", c.GatewayName)
		}
		if c.NATSEmbed != "" || c.NATSUsers != "" || c.SpawnNear {
			return errors.New("-nats-embed, -nats-users and -spawn-near-gateway are for -role sim")
		}
	default:
		return fmt.Errorf("-role %q: want single, sim or gateway", c.Role)
	}
	if c.NATS.Prefix == "" || strings.ContainsAny(c.NATS.Prefix, " *>\t") {
		return fmt.Errorf("-nats-prefix %q: want a NATS subject token", c.NATS.Prefix)
	}
	return nil
}

// resolve turns the auto settings into numbers and sizes the world's
// capacity: every session may play while the bots' floor or target holds.
func (c *config) resolve() {
	if c.autoWorld {
		c.World.W, c.World.H = game.AutoSize(c.Server.MaxSessions)
	}
	if c.autoTarget {
		c.World.BotTarget = min(game.AutoBotTarget(c.World.W, c.World.H), int(botRange.Max))
	}
	c.World.MaxSnakes = c.Server.MaxSessions + max(c.World.Bots, c.World.BotTarget)
}

// helpRow is one flag as -h and the README show it.
type helpRow struct{ flag, env, def, rng, usage string }

func helpRows(opts []option) []helpRow {
	rows := make([]helpRow, len(opts))
	for i, o := range opts {
		def := o.def
		if def == "" {
			def = o.value.String()
		}
		rng := o.rng
		if rng == "" {
			rng = o.value.rangeText()
		}
		env := envName(o.name)
		if o.noEnv {
			env = ""
		}
		rows[i] = helpRow{"-" + o.name, env, def, rng, o.usage}
	}
	return rows
}

// bounds are the fixed bounds on clients, for -h and the README.
func bounds() []sshserver.Bound {
	b := sshserver.FixedBounds()
	b = append(b,
		sshserver.Bound{What: "nickname", Value: fmt.Sprintf("[A-Za-z0-9_-], 1..%d bytes, unique ignoring case; else the join screen asks", game.MaxName)},
		sshserver.Bound{What: "memory per session", Value: worstRSS()},
	)
	for _, p := range status.Bounds() {
		b = append(b, sshserver.Bound{What: p.What, Value: p.Value})
	}
	return b
}

// writeHelp prints the -h text.
func writeHelp(out io.Writer, rows []helpRow) {
	fmt.Fprintf(out, "Usage: snaked [flags]\n\nEvery flag can also be set by its environment twin (-max-sessions by\nSNAKED_MAX_SESSIONS); a flag on the command line wins.\n\nFlags:\n")
	for _, r := range rows {
		fmt.Fprintf(out, "  %s", r.flag)
		if r.env != "" {
			fmt.Fprintf(out, " (env %s)", r.env)
		}
		fmt.Fprintf(out, "\n      %s\n      default: %s", r.usage, r.def)
		if r.rng != "" {
			fmt.Fprintf(out, "; allowed: %s", r.rng)
		}
		fmt.Fprintln(out)
	}
	fmt.Fprintf(out, "\nFixed bounds:\n")
	for _, b := range bounds() {
		fmt.Fprintf(out, "  %s: %s\n", b.What, b.Value)
	}
}

// text is a string flag; empty says whether "" is allowed.
type text struct {
	p     *string
	empty bool
}

func (v *text) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}

func (v *text) Set(s string) error {
	if s == "" && !v.empty {
		return errors.New("must not be empty")
	}
	*v.p = s
	return nil
}

// integer is an int flag within a range.
type integer struct {
	p *int
	r sshserver.Range
}

func (v *integer) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.Itoa(*v.p)
}

func (v *integer) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("want a whole number in %s", v.r)
	}
	if n < v.r.Min || n > v.r.Max {
		return fmt.Errorf("%d is out of range %s", n, v.r)
	}
	*v.p = int(n)
	return nil
}

func (v *integer) rangeText() string { return v.r.String() }

// The other values have no range of their own: their options say what
// they take, if anything.
func (*text) rangeText() string      { return "" }
func (*seed) rangeText() string      { return "" }
func (worldSize) rangeText() string  { return "" }
func (level) rangeText() string      { return "" }
func (*boolean) rangeText() string   { return "" }
func (followMode) rangeText() string { return "" }

// boolean is a flag given without a value (-version).
type boolean struct{ p *bool }

func (v *boolean) String() string {
	if v.p == nil || !*v.p {
		return "false"
	}
	return "true"
}

func (v *boolean) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true or false")
	}
	*v.p = b
	return nil
}

func (*boolean) IsBoolFlag() bool { return true }

// duration is a duration flag within a range.
type duration struct {
	p *time.Duration
	r sshserver.Range
}

func (v *duration) String() string {
	if v.p == nil {
		return "0s"
	}
	return v.p.String()
}

func (v *duration) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration such as 5s or 2m in %s", v.r.DurationString())
	}
	if int64(d) < v.r.Min || int64(d) > v.r.Max {
		return fmt.Errorf("%v is out of range %s", d, v.r.DurationString())
	}
	*v.p = d
	return nil
}

func (v *duration) rangeText() string { return v.r.DurationString() }

// seed is the world seed; 0 picks one from the clock at start.
type seed struct{ p *uint64 }

func (v *seed) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.FormatUint(*v.p, 10)
}

func (v *seed) Set(s string) error {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return errors.New("want a whole number from 0 to 2^64-1")
	}
	*v.p = n
	return nil
}

// worldSize is the world's WxH in pixels, or auto.
type worldSize struct {
	w, h *int
	auto *bool
}

func (s worldSize) String() string {
	if s.w == nil {
		return ""
	}
	if *s.auto {
		return "auto"
	}
	return fmt.Sprintf("%dx%d", *s.w, *s.h)
}

func (s worldSize) Set(v string) error {
	if v == "auto" {
		*s.auto = true
		return nil
	}
	a, b, ok := strings.Cut(strings.ToLower(v), "x")
	w, err1 := strconv.Atoi(a)
	h, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return errors.New("want WxH in pixels, e.g. 1024x512")
	}
	if w < game.MinSide || h < game.MinSide || w > game.MaxSide || h > game.MaxSide {
		return fmt.Errorf("%dx%d: each side must be in %d..%d", w, h, game.MinSide, game.MaxSide)
	}
	if w*h > game.MaxPixels {
		return fmt.Errorf("%dx%d is %d pixels: at most %d", w, h, w*h, game.MaxPixels)
	}
	*s.w, *s.h, *s.auto = w, h, false
	return nil
}

// autoInteger is an integer flag that also takes "auto".
type autoInteger struct {
	integer
	auto *bool
}

func (v *autoInteger) String() string {
	if v.auto != nil && *v.auto {
		return "auto"
	}
	return v.integer.String()
}

func (v *autoInteger) Set(s string) error {
	if s == "auto" {
		*v.auto = true
		return nil
	}
	if err := v.integer.Set(s); err != nil {
		return fmt.Errorf("want auto or a whole number in %s", v.r)
	}
	*v.auto = false
	return nil
}

// followMode is how a gateway follows the world.
type followMode struct{ p *cluster.FollowMode }

func (f followMode) String() string {
	if f.p == nil {
		return cluster.FollowFull.String()
	}
	return f.p.String()
}

func (f followMode) Set(s string) error {
	m, err := cluster.ParseFollowMode(s)
	if err != nil {
		return errors.New("want full or regions")
	}
	*f.p = m
	return nil
}

// level is the log level.
type level struct{ p *slog.Level }

func (l level) String() string {
	if l.p == nil {
		return "info"
	}
	return strings.ToLower(l.p.String())
}

func (l level) Set(s string) error {
	switch s {
	case "debug", "info", "warn", "error":
		return l.p.UnmarshalText([]byte(s))
	}
	return errors.New("want debug, info, warn or error")
}

// defaultJoinHint is the banner's "how to join" for a daemon listening on
// addr when the operator gave none.
func defaultJoinHint(addr string) string {
	p := "2222"
	if i := strings.LastIndexByte(addr, ':'); i >= 0 && i+1 < len(addr) {
		p = addr[i+1:]
	}
	if p == "22" {
		return "ssh localhost"
	}
	return "ssh -p " + p + " localhost"
}

// spectateHint turns "ssh -p 2222 localhost" into "ssh -p 2222 watch@localhost".
func spectateHint(join, user string) string {
	for i := len(join) - 1; i >= 0; i-- {
		if join[i] == ' ' {
			return join[:i+1] + user + "@" + join[i+1:]
		}
	}
	return user + "@" + join
}

// scoresPath is the scores database's file, "" when scores are off.
func (c *config) scoresPath() string {
	switch c.Scores {
	case "off":
		return ""
	case "":
		return filepath.Join(c.stateDir(), "scores.db")
	}
	return c.Scores
}

// stateDir is the host key's directory.
func (c *config) stateDir() string {
	if c.StateDir == "" {
		return hostkeys.DefaultDir()
	}
	return c.StateDir
}

// worstRSS describes the most memory one session holds, at the defaults.
// The measured figure is from docs/BENCHMARKS.md ("Memory per session").
func worstRSS() string {
	def := sshserver.DefaultConfig()
	return fmt.Sprintf("renderer state up to -max-cells x %d bytes (%d KiB at the default %d), plus the SSH connection; "+
		"measured: 153 KiB of daemon RSS per session with every terminal 500x200 (112 KiB for the usual mix of sizes, 300 sessions)",
		render.CellBytes, def.MaxCells*render.CellBytes>>10, def.MaxCells)
}
