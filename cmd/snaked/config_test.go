package main

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestDefaults(t *testing.T) {
	c, err := parseConfig(nil, env(nil), &bytes.Buffer{}, 1024, 512)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":2222" || c.SpectatorUser != "watch" || c.ShutdownGrace != 5*time.Second ||
		c.MetricsAddr != "" || c.WorldW != 1024 || c.WorldH != 512 {
		t.Errorf("defaults: %+v", c)
	}
	if c.JoinHint != "" {
		t.Errorf("join hint %q, want empty (derived from the listener)", c.JoinHint)
	}
	if h := defaultJoinHint("127.0.0.1:2300"); h != "ssh -p 2300 localhost" {
		t.Errorf("defaultJoinHint = %q", h)
	}
	if h := defaultJoinHint("[::]:22"); h != "ssh localhost" {
		t.Errorf("defaultJoinHint = %q", h)
	}
}

func TestEnvTwinsAndFlagPrecedence(t *testing.T) {
	e := env(map[string]string{
		"SNAKED_ADDR":           "127.0.0.1:2300",
		"SNAKED_MAX_SESSIONS":   "77",
		"SNAKED_WORLD":          "200x100",
		"SNAKED_SHUTDOWN_GRACE": "2s",
		"SNAKED_BOTS":           "3",
	})
	c, err := parseConfig([]string{"-bots", "9"}, e, &bytes.Buffer{}, 1024, 512)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:2300" || c.MaxSessions != 77 || c.WorldW != 200 || c.WorldH != 100 ||
		c.ShutdownGrace != 2*time.Second {
		t.Errorf("env not applied: %+v", c)
	}
	if c.Bots != 9 {
		t.Errorf("flag should win over env: bots = %d", c.Bots)
	}
}

func TestBadValues(t *testing.T) {
	cases := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"-world", "10x10"}, nil, "between 16"},
		{[]string{"-world", "banana"}, nil, "WxH"},
		{nil, map[string]string{"SNAKED_WORLD": "1x"}, "SNAKED_WORLD"},
		{[]string{"-max-sessions", "0"}, nil, "max-sessions"},
		{[]string{"-bots", "-1"}, nil, "bots"},
		{[]string{"-log-level", "loud"}, nil, "log-level"},
		{[]string{"extra"}, nil, "unexpected argument"},
		{[]string{"-spectator-user", ""}, nil, "spectator-user"},
	}
	for _, tc := range cases {
		_, err := parseConfig(tc.args, env(tc.env), &bytes.Buffer{}, 1024, 512)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: err = %v, want it to mention %q", tc.args, tc.env, err, tc.want)
		}
	}
}

func TestHelpListsEnvTwins(t *testing.T) {
	var out bytes.Buffer
	_, err := parseConfig([]string{"-h"}, env(nil), &out, 1024, 512)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{"-addr", "SNAKED_ADDR", "-state-dir", "-max-sessions", "-bots", "-world",
		"-spectator-user", "-shutdown-grace", "-metrics-addr", "SNAKED_METRICS_ADDR"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q", want)
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
