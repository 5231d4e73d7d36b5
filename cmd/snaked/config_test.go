package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"snaked/game"
	"snaked/sshserver"
)

var update = flag.Bool("update", false, "rewrite the README's generated tables")

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// TestDefaults: with no flag and no environment the daemon runs with the
// packages' own defaults.
func TestDefaults(t *testing.T) {
	c, err := parseConfig(nil, env(nil), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	gd, sd := game.DefaultConfig(), sshserver.DefaultConfig()
	w, h := game.AutoSize(sd.MaxSessions)
	if c.World.W != w || c.World.H != h || c.World.Bots != gd.Bots || c.World.Seed != 0 ||
		c.World.BotTarget != game.AutoBotTarget(w, h) {
		t.Errorf("world %+v, want game.AutoSize(%d), its AutoBotTarget, game.DefaultConfig's bots, seed 0", c.World, sd.MaxSessions)
	}
	sd.JoinHint = "" // derived from the listener
	if c.Server.MaxSessions != sd.MaxSessions || c.Server.MaxPerIP != sd.MaxPerIP ||
		c.Server.ShutdownGrace != sd.ShutdownGrace || c.Server.KeepAlive != sd.KeepAlive ||
		c.Server.MaxHandshakesPerIP != sd.MaxHandshakesPerIP || c.Server.MaxCells != sd.MaxCells ||
		c.Server.JoinHint != "" || c.Server.SpectatorUser != sd.SpectatorUser {
		t.Errorf("server %+v, want sshserver.DefaultConfig", c.Server)
	}
	if c.World.MaxSnakes != c.Server.MaxSessions+max(c.World.Bots, c.World.BotTarget) {
		t.Errorf("world capacity %d, want sessions + the bots' floor or target", c.World.MaxSnakes)
	}
	if c.Addr != ":2222" || c.StateDir != "" {
		t.Errorf("addr %q, state dir %q", c.Addr, c.StateDir)
	}
	if c.World.Workers != runtime.GOMAXPROCS(0) {
		t.Errorf("sim workers %d, want GOMAXPROCS %d", c.World.Workers, runtime.GOMAXPROCS(0))
	}
	if h := defaultJoinHint("127.0.0.1:2300"); h != "ssh -p 2300 localhost" {
		t.Errorf("defaultJoinHint = %q", h)
	}
	if h := defaultJoinHint("[::]:22"); h != "ssh localhost" {
		t.Errorf("defaultJoinHint = %q", h)
	}
}

// TestHundredThousand: -max-sessions 100000 sizes a world that
// -bot-target 100000 fills, within the world's bounds.
func TestHundredThousand(t *testing.T) {
	c, err := parseConfig([]string{"-max-sessions", "100000", "-bot-target", "100000", "-sim-workers", "3"}, env(nil), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	w, h := game.AutoSize(100000)
	if c.World.W != w || c.World.H != h || c.World.BotTarget != 100000 || c.World.MaxSnakes != 200000 || c.World.Workers != 3 {
		t.Fatalf("world %+v, want %dx%d, target 100000, capacity 200000, 3 workers", c.World, w, h)
	}
	if c.World.MaxSnakes > game.MaxCapacity || w*h > game.MaxPixels {
		t.Fatalf("capacity %d of at most %d, %d pixels of at most %d", c.World.MaxSnakes, game.MaxCapacity, w*h, game.MaxPixels)
	}
}

// TestAutoWorld: the world's size follows -max-sessions and the bot target
// the world's size, unless either is given.
func TestAutoWorld(t *testing.T) {
	c, err := parseConfig([]string{"-max-sessions", "100"}, env(nil), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	w, h := game.AutoSize(100)
	if c.World.W != w || c.World.H != h || c.World.BotTarget != game.AutoBotTarget(w, h) {
		t.Errorf("100 sessions: world %dx%d target %d, want %dx%d target %d", c.World.W, c.World.H, c.World.BotTarget, w, h, game.AutoBotTarget(w, h))
	}
	c, err = parseConfig([]string{"-max-sessions", "100", "-world", "300x100", "-bot-target", "7", "-bots", "2"}, env(nil), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.World.W != 300 || c.World.H != 100 || c.World.BotTarget != 7 || c.World.MaxSnakes != 107 {
		t.Errorf("given: world %dx%d target %d capacity %d", c.World.W, c.World.H, c.World.BotTarget, c.World.MaxSnakes)
	}
	c, err = parseConfig([]string{"-world", "300x100", "-world", "auto", "-bot-target", "0", "-bots", "9"}, env(nil), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if w, _ := game.AutoSize(c.Server.MaxSessions); c.World.W != w || c.World.BotTarget != 0 || c.World.MaxSnakes != c.Server.MaxSessions+9 {
		t.Errorf("auto after a size, target 0: world %dx%d target %d capacity %d", c.World.W, c.World.H, c.World.BotTarget, c.World.MaxSnakes)
	}
}

func TestEnvTwinsAndFlagPrecedence(t *testing.T) {
	e := env(map[string]string{
		"SNAKED_ADDR":              "127.0.0.1:2300",
		"SNAKED_MAX_SESSIONS":      "77",
		"SNAKED_WORLD":             "200x100",
		"SNAKED_SHUTDOWN_GRACE":    "2s",
		"SNAKED_BOTS":              "3",
		"SNAKED_KEEPALIVE":         "0",
		"SNAKED_HANDSHAKE_QUEUE":   "9",
		"SNAKED_SEND_BUFFER":       "32768",
		"SNAKED_HANDSHAKE_TIMEOUT": "3s",
	})
	c, err := parseConfig([]string{"-bots", "9", "-max-handshakes-per-ip", "7"}, e, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:2300" || c.Server.MaxSessions != 77 || c.World.W != 200 || c.World.H != 100 ||
		c.Server.ShutdownGrace != 2*time.Second || c.Server.KeepAlive != 0 || c.Server.HandshakeQueue != 9 ||
		c.Server.SendBuffer != 32768 || c.Server.HandshakeTimeout != 3*time.Second || c.Server.MaxHandshakesPerIP != 7 {
		t.Errorf("env not applied: %+v", c)
	}
	if c.World.Bots != 9 {
		t.Errorf("flag should win over env: bots = %d", c.World.Bots)
	}
}

// TestZeroMeansWhatHelpSays: 0 is a value, not "use the default".
func TestZeroMeansWhatHelpSays(t *testing.T) {
	c, err := parseConfig([]string{"-shutdown-grace", "0", "-keepalive", "0", "-afk", "0", "-handshake-queue", "0", "-send-buffer", "0"}, env(nil), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.ShutdownGrace != 0 || c.Server.KeepAlive != 0 || c.Server.IdleTimeout != 0 || c.Server.HandshakeQueue != 0 || c.Server.SendBuffer != 0 {
		t.Errorf("zeros not kept: %+v", c.Server)
	}
}

func TestBadValues(t *testing.T) {
	cases := []struct {
		args []string
		env  map[string]string
		want []string // all must appear in the error
	}{
		{[]string{"-max-sessions", "170000"}, nil, []string{"-max-sessions", "1..100000"}},
		{[]string{"-max-sessions", "0"}, nil, []string{"-max-sessions", "1..100000"}},
		{[]string{"-world", "16384x16384"}, nil, []string{"-world", "at most 67108864"}},
		{[]string{"-world", "10x10"}, nil, []string{"-world", "16..16384"}},
		{[]string{"-world", "banana"}, nil, []string{"-world", "WxH"}},
		{nil, map[string]string{"SNAKED_WORLD": "1x"}, []string{"SNAKED_WORLD", "-world"}},
		{nil, map[string]string{"SNAKED_MAX_PER_IP": "-3"}, []string{"SNAKED_MAX_PER_IP", "-max-per-ip", "1..100000"}},
		{[]string{"-sim-workers", "0"}, nil, []string{"-sim-workers", "1..256"}},
		{[]string{"-bots", "-1"}, nil, []string{"-bots", "0..162144"}},
		{[]string{"-bot-target", "lots"}, nil, []string{"-bot-target", "auto or a whole number in 0..162144"}},
		{[]string{"-bot-target", "170000"}, nil, []string{"-bot-target", "0..162144"}},
		{[]string{"-shutdown-grace", "-1s"}, nil, []string{"-shutdown-grace", "0s..10m0s"}},
		{[]string{"-stall", "0"}, nil, []string{"-stall", "100ms..10m0s"}},
		{[]string{"-keepalive", "soon"}, nil, []string{"-keepalive", "duration"}},
		{[]string{"-max-cells", "100"}, nil, []string{"-max-cells", "480..100000"}},
		{[]string{"-log-level", "loud"}, nil, []string{"-log-level", "debug, info, warn or error"}},
		{[]string{"extra"}, nil, []string{"unexpected argument"}},
		{[]string{"-spectator-user", ""}, nil, []string{"-spectator-user", "empty"}},
		{[]string{"-no-such-flag"}, nil, []string{"no-such-flag"}},
		{[]string{"-nats", "nats://127.0.0.1:4222"}, nil, []string{"-role sim or -role gateway"}},
		{[]string{"-role", "sim"}, nil, []string{"-role sim needs either"}},
		{[]string{"-role", "sim", "-nats", "nats://x:1", "-nats-embed", ":4222"}, nil, []string{"-role sim needs either"}},
		{[]string{"-role", "gateway"}, nil, []string{"-role gateway needs -nats"}},
		{[]string{"-role", "gateway", "-nats", "nats://x:1", "-nats-embed", ":4222"}, nil, []string{"-nats-embed, -nats-users and -spawn-near-gateway are for -role sim"}},
		{[]string{"-spawn-near-gateway"}, nil, []string{"-spawn-near-gateway needs -role sim"}},
		{[]string{"-role", "gateway", "-nats", "nats://x:1", "-nats-users", "u.txt"}, nil, []string{"are for -role sim"}},
		{[]string{"-role", "gateway", "-nats", "nats://x:1", "-gateway-name", "a.b"}, nil, []string{"-gateway-name"}},
		{[]string{"-role", "sim", "-nats-embed", ":4222", "-nats-ca", "ca.pem"}, nil, []string{"-nats-embed takes -nats-users"}},
		{[]string{"-role", "sim", "-nats", "nats://x:1", "-nats-users", "u.txt"}, nil, []string{"-nats-users is for -nats-embed"}},
		{[]string{"-role", "sim", "-nats-embed", ":4222", "-nats-users", "u.txt", "-nats-user", "sim"}, nil, []string{"instead of -nats-user"}},
		{[]string{"-nats-users", "u.txt"}, nil, []string{"-nats-users needs -role sim"}},
		{[]string{"-names-per-key", "0"}, nil, []string{"-names-per-key", "1..100"}},
		{[]string{"-claims-per-hour", "0"}, nil, []string{"-claims-per-hour"}},
		{[]string{"-follow-max-pixels", "10"}, nil, []string{"-follow-max-pixels"}},
		{[]string{"-role", "sim", "-nats-embed", ":4222", "-nats-prefix", "a b"}, nil, []string{"-nats-prefix"}},
		{[]string{"-role", "boss"}, nil, []string{"-role", "single, sim or gateway"}},
		{[]string{"-role", "sim", "-nats-embed", ":4222", "-http-addr", ":8080"}, nil, []string{"-http-addr", "gateways"}},
		{[]string{"-http-streams", "10001"}, nil, []string{"-http-streams"}},
	}
	for _, tc := range cases {
		_, err := parseConfig(tc.args, env(tc.env), &bytes.Buffer{})
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v %v: err = %v, want it to mention %q", tc.args, tc.env, err, w)
			}
		}
	}
}

func TestHelpListsEverything(t *testing.T) {
	var out bytes.Buffer
	_, err := parseConfig([]string{"-h"}, env(nil), &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err = %v", err)
	}
	c := defaults()
	for _, o := range options(&c) {
		head := "-" + o.name + " (env " + envName(o.name) + ")"
		if o.noEnv {
			head = "-" + o.name + "\n"
		}
		for _, want := range []string{head, o.usage} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("help lacks %q", want)
			}
		}
	}
	for _, b := range bounds() {
		if !strings.Contains(out.String(), b.What+": "+b.Value) {
			t.Errorf("help lacks the bound %q", b.What)
		}
	}
}

// readmeTables renders the README's flag table and bounds list from the
// same rows -h prints.
func readmeTables() (flags, bnds string) {
	c := defaults()
	var b strings.Builder
	b.WriteString("| flag | environment | default | allowed | meaning |\n|---|---|---|---|---|\n")
	for _, r := range helpRows(options(&c)) {
		rng := r.rng
		if rng == "" {
			rng = "any"
		}
		env := "none"
		if r.env != "" {
			env = "`" + r.env + "`"
		}
		b.WriteString("| `" + r.flag + "` | " + env + " | " + r.def + " | " + rng + " | " + r.usage + " |\n")
	}
	flags = b.String()
	b.Reset()
	b.WriteString("| bound | value |\n|---|---|\n")
	for _, x := range bounds() {
		b.WriteString("| " + x.What + " | " + x.Value + " |\n")
	}
	return flags, b.String()
}

// TestReadmeMatchesHelp: the README's flag table and bounds are exactly what
// -h prints (go test ./cmd/snaked -run Readme -update rewrites them).
func TestReadmeMatchesHelp(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	flags, bnds := readmeTables()
	for _, sec := range []struct{ name, want string }{{"flags", flags}, {"bounds", bnds}} {
		begin, end := "<!-- "+sec.name+": generated by TestReadmeMatchesHelp -->\n", "<!-- end "+sec.name+" -->"
		i, j := strings.Index(readme, begin), strings.Index(readme, end)
		if i < 0 || j < i {
			t.Fatalf("README lacks the %q ... %q markers", begin, end)
		}
		got := readme[i+len(begin) : j]
		if got == sec.want {
			continue
		}
		if *update {
			readme = readme[:i+len(begin)] + sec.want + readme[j:]
			continue
		}
		t.Errorf("README's %s table differs from -h; run go test ./cmd/snaked -run Readme -update\ngot:\n%s\nwant:\n%s", sec.name, got, sec.want)
	}
	if *update {
		if err := os.WriteFile("../../README.md", []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSpectateHint(t *testing.T) {
	if got := spectateHint("ssh -p 2222 localhost", "watch"); got != "ssh -p 2222 watch@localhost" {
		t.Error(got)
	}
	if got := spectateHint("host", "watch"); got != "watch@host" {
		t.Error(got)
	}
}

// TestDocsStayInRepo: the README and docs/ link only to files of this
// repository, and every relative link resolves.
func TestDocsStayInRepo(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../README.md")
	link := regexp.MustCompile(`\]\(([^)#\s]+)`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "../shared") {
			t.Errorf("%s refers to ../shared, outside the repository", f)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			p := filepath.Clean(filepath.Join(filepath.Dir(f), target))
			if rel, err := filepath.Rel("../..", p); err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s links %q, outside the repository", f, target)
				continue
			}
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s links %q, which does not exist", f, target)
			}
		}
	}
}
