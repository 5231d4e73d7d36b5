package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const unitPath = "../../deploy/snaked.service"

// unitSettings reads a systemd unit's Key=Value lines, in order.
func unitSettings(t *testing.T, unit []byte) [][2]string {
	t.Helper()
	var kv [][2]string
	sc := bufio.NewScanner(bytes.NewReader(unit))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || l[0] == '#' || l[0] == ';' || l[0] == '[' {
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			t.Fatalf("unit line %q: no '='", l)
		}
		kv = append(kv, [2]string{k, v})
	}
	return kv
}

// TestUnitConfig: the unit's environment is a configuration the daemon
// takes, its state directory is the one systemd manages, and it holds the
// one capability it needs.
func TestUnitConfig(t *testing.T) {
	unit, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	got := map[string][]string{}
	for _, kv := range unitSettings(t, unit) {
		got[kv[0]] = append(got[kv[0]], kv[1])
		if kv[0] == "Environment" {
			v := kv[1]
			if u, err := strconv.Unquote(v); err == nil {
				v = u
			}
			name, val, _ := strings.Cut(v, "=")
			env[name] = val
		}
	}
	cfg, err := parseConfig(nil, func(k string) string { return env[k] }, &bytes.Buffer{})
	if err != nil {
		t.Fatalf("the unit's environment %v: %v", env, err)
	}
	if cfg.HTTPAddr == "" || cfg.Server.JoinHint == "" {
		t.Errorf("the unit serves no status page or names no join command: %+v", env)
	}
	if want := []string{"snaked"}; !equal(got["StateDirectory"], want) || cfg.StateDir != "/var/lib/snaked" {
		t.Errorf("StateDirectory %v, -state-dir %q: want systemd's /var/lib/snaked", got["StateDirectory"], cfg.StateDir)
	}
	for _, k := range []string{"AmbientCapabilities", "CapabilityBoundingSet"} {
		if !equal(got[k], []string{"CAP_NET_BIND_SERVICE"}) {
			t.Errorf("%s = %v, want CAP_NET_BIND_SERVICE alone", k, got[k])
		}
	}
	if n, err := strconv.Atoi(strings.Join(got["LimitNOFILE"], "")); err != nil || n < cfg.Server.MaxSessions+2*cfg.HTTPStreams+1000 {
		t.Errorf("LimitNOFILE %v is too few for %d sessions and %d streams", got["LimitNOFILE"], cfg.Server.MaxSessions, cfg.HTTPStreams)
	}
}

func equal(a, b []string) bool { return strings.Join(a, "\n") == strings.Join(b, "\n") }

// TestUnitVerifies: systemd-analyze verify finds nothing to say about the
// unit (it reports unknown keys and bad values on stderr, with exit status
// 0), with ExecStart pointed at a daemon built here, and its security
// analysis rates the sandbox better than 2.5 ("OK").
func TestUnitVerifies(t *testing.T) {
	const analyze = "/usr/bin/systemd-analyze"
	if _, err := os.Stat(analyze); err != nil {
		t.Skipf("%s is not installed (Debian's systemd package): the unit is not verified", analyze)
	}
	unit, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	const exec0 = "ExecStart=/usr/local/bin/snaked\n"
	if !bytes.Contains(unit, []byte(exec0)) {
		t.Fatalf("the unit's ExecStart is not %q", exec0)
	}
	// verify checks that ExecStart's binary exists: point it at one.
	unit = bytes.Replace(unit, []byte(exec0), []byte("ExecStart="+buildSnaked(t)+"\n"), 1)
	path := filepath.Join(t.TempDir(), "snaked.service")
	if err := os.WriteFile(path, unit, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	out, err = exec.Command(analyze, "security", "--offline=yes", "--threshold=25", "--no-pager", path).CombinedOutput()
	if err != nil {
		t.Errorf("systemd-analyze security: %v\n%s", err, out)
	}
}
