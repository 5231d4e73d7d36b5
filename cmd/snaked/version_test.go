package main

import (
	"bytes"
	"net"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionOf(t *testing.T) {
	stamped := &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}
	cases := []struct {
		bi       *debug.BuildInfo
		rev, mod string
		want     string
	}{
		{nil, "", "", "(unknown), revision unknown"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "", "", "(devel), revision unknown"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "def456\n", "false", "(devel), revision def456"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "def456", "true", "(devel), revision def456 (modified)"},
		{stamped, "def456", "false", "v1.2.3, revision abc123 (modified)"}, // the build's stamp wins
	}
	for _, tc := range cases {
		if got := versionOf(tc.bi, tc.rev, tc.mod); got != tc.want {
			t.Errorf("versionOf(%v, %q, %q) = %q, want %q", tc.bi != nil, tc.rev, tc.mod, got, tc.want)
		}
	}
}

func TestVersionFlag(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"-version"}, env(nil), &out, &errb); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if got, want := out.String(), "snaked "+version()+"\n"; got != want {
		t.Errorf("-version printed %q, want %q", got, want)
	}
	if !strings.Contains(out.String(), "revision") {
		t.Errorf("-version printed %q: no revision", out.String())
	}
}

func TestPageURL(t *testing.T) {
	cases := map[string]string{
		"127.0.0.1:8080": "http://127.0.0.1:8080/",
		"0.0.0.0:8080":   "http://localhost:8080/",
		"[::]:80":        "http://localhost:80/",
		"[::1]:8080":     "http://[::1]:8080/",
	}
	for in, want := range cases {
		a, err := net.ResolveTCPAddr("tcp", in)
		if err != nil {
			t.Fatal(err)
		}
		if got := pageURL(a); got != want {
			t.Errorf("pageURL(%s) = %q, want %q", in, got, want)
		}
	}
}
