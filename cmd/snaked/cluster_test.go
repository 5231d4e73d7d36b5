package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startSim starts a simulation process with an embedded NATS at natsAddr
// and its state (the scores) in stateDir, and returns it once it is ready;
// the test's end kills it.
func startSim(t *testing.T, bin, natsAddr, stateDir string, extra ...string) *exec.Cmd {
	t.Helper()
	sim := exec.Command(bin, append([]string{"-role", "sim", "-nats-embed", natsAddr, "-world", "256x128", "-bots", "2", "-bot-target", "0",
		"-state-dir", stateDir}, extra...)...)
	out, err := sim.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer // read once the process is gone (exited)
	sim.Stderr = &stderr
	if err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = sim.Wait(); close(exited) }()
	t.Cleanup(func() { _ = sim.Process.Kill(); <-exited })
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "nats ") {
				ready <- true
			}
		}
		close(ready)
	}()
	select {
	case ok := <-ready:
		if !ok {
			<-exited
			t.Fatalf("the simulation exited before it was ready; its stderr:\n%s", stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the simulation did not start")
	}
	return sim
}

// TestClusterRoles: a simulation with an embedded NATS on loopback whose
// users file gives the simulation and each of two gateways its own user
// and role (so each has only its role's permissions), and the two
// gateways, each its own process. A player joins through one gateway; a
// spectator on the other sees her on the leaderboard of the one world,
// and her snake on the playfield. The simulation's metrics count her join
// and its ticks; the gateways' count the deltas they applied. Her game,
// ended on one gateway, is in the other's scores command and scores browser.
func TestClusterRoles(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	bin := buildSnaked(t)
	natsAddr, simMetrics := freeLoopbackAddr(t), freeLoopbackAddr(t)
	// the embedded NATS takes only its users, each with its role's permissions
	users := filepath.Join(t.TempDir(), "users.txt")
	if err := os.WriteFile(users, []byte("# role name password\nsim sim s3cret\ngateway gw-a pw-a\ngateway gw-b pw-b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	startSim(t, bin, natsAddr, t.TempDir(), "-metrics-addr", simMetrics, "-nats-users", users)
	url := "nats://" + natsAddr
	a := startDaemon(t, bin, "-role", "gateway", "-nats", url, "-nats-user", "gw-a", "-nats-password", "pw-a")
	b := startDaemon(t, bin, "-role", "gateway", "-nats", url, "-nats-user", "gw-b", "-nats-password", "pw-b", "-http-addr", "127.0.0.1:0")

	alice, err := dialPlayer(a.addr, "127.0.0.1", "alice", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer alice.cl.Close()
	watch, err := dialPlayer(b.addr, "127.0.0.1", "watch", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.cl.Close()
	deadline := time.Now().Add(15 * time.Second)
	for !(strings.Contains(watch.text(), "alice") && hasPlayfield(alice.text()) && hasPlayfield(watch.text())) {
		if time.Now().After(deadline) {
			t.Fatalf("the spectator on the other gateway never saw alice\nalice's gateway sent %d bytes, the spectator's %d", len(alice.text()), len(watch.text()))
		}
		time.Sleep(100 * time.Millisecond)
	}

	if n := metric(t, simMetrics, "snaked_cluster_joins_total"); n < 1 {
		t.Errorf("the simulation's metrics count %v joins", n)
	}
	if n := metric(t, simMetrics, "snaked_tick_seconds_count"); n < 1 {
		t.Errorf("the simulation's metrics count %v ticks", n)
	}
	if n := metric(t, simMetrics, "snaked_world_players"); n != 1 {
		t.Errorf("the simulation's metrics count %v players, want 1", n)
	}
	// The embedded NATS delivered the deltas to two gateways: more bytes
	// than one copy of them (the ticks before the gateways came counted once).
	if out, deltas := metric(t, simMetrics, "snaked_nats_out_bytes_total"), metric(t, simMetrics, "snaked_cluster_delta_bytes_total"); deltas < 1 || out <= deltas {
		t.Errorf("the embedded NATS delivered %v bytes for %v bytes of deltas to two gateways", out, deltas)
	}
	if n := metric(t, simMetrics, "snaked_nats_clients"); n < 3 {
		t.Errorf("the embedded NATS counts %v clients, want the sim and two gateways", n)
	}
	for _, g := range []*daemon{a, b} {
		if n := metric(t, g.metrics, "snaked_cluster_deltas_applied_total"); n < 1 {
			t.Errorf("a gateway's metrics count %v deltas applied", n)
		}
		// the other gateway's count comes with its next heartbeat (every second)
		var n float64
		for end := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if n = metric(t, g.metrics, "snaked_cluster_players"); n == 1 || time.Now().After(end) {
				break
			}
		}
		if n != 1 {
			t.Errorf("a gateway's metrics count %v players in the cluster, want 1", n)
		}
	}

	// Gateway b's status page counts alice (on gateway a) and shows the
	// world from b's replica.
	var st struct {
		Players int
		World   [2]int
	}
	for end := time.Now().Add(5 * time.Second); getJSON(t, b.page+"api/status", &st); time.Sleep(100 * time.Millisecond) {
		if st.Players == 1 && st.World[0] > 0 || time.Now().After(end) {
			break
		}
	}
	if st.Players != 1 || st.World[0] == 0 {
		t.Errorf("gateway b's /api/status: %+v, want alice counted and the world's size", st)
	}

	// Her game, ended on gateway a, is in the simulation's scores, which
	// the scores command on gateway b prints and its status page shows.
	need(t, "ssh")
	alice.cl.Close()
	var out []byte
	for end := time.Now().Add(10 * time.Second); !strings.Contains(string(out), "alice"); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("alice's game not in the scores through the other gateway:\n%s", out)
		}
		out, _ = exec.Command("ssh", "-F", "/dev/null", "-p", b.port, "-o", "StrictHostKeyChecking=no",
			"-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-o", "PubkeyAuthentication=no",
			"-o", "PasswordAuthentication=no", "-T", "someone@127.0.0.1", "scores").Output()
	}
	var sc struct {
		AllTime []struct{ Name string } `json:"all_time"`
	}
	onBoard := func() bool {
		for _, e := range sc.AllTime {
			if e.Name == "alice" {
				return true
			}
		}
		return false
	}
	for end := time.Now().Add(10 * time.Second); getJSON(t, b.page+"api/scores", &sc) && !onBoard(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(end) {
			t.Errorf("gateway b's /api/scores lacks alice's game: %+v", sc)
			break
		}
	}
	// and the scores browser, on the other gateway too
	board, err := dialPlayer(b.addr, "127.0.0.1", "scores", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer board.cl.Close()
	for end := time.Now().Add(10 * time.Second); !(strings.Contains(board.text(), "All-time") && strings.Contains(board.text(), "alice")); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the scores browser through a gateway does not show alice's game:\n%q", board.text())
		}
	}
}

// TestClusterSimRestart: a gateway started before the simulation (and its
// embedded NATS) waits for it; the simulation is then killed and, after
// an outage of 30 s, started again. The gateway keeps every session open, its
// banner says the world is restarting meanwhile, and when the new world is
// up the player is in it again under her name.
func TestClusterSimRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	bin := buildSnaked(t)
	natsAddr := freeLoopbackAddr(t)
	state := t.TempDir()
	// the gateway starts before its NATS (the sim's embedded one) is up
	g := startDaemon(t, bin, "-role", "gateway", "-nats", "nats://"+natsAddr)
	sim := startSim(t, bin, natsAddr, state)
	for end := time.Now().Add(15 * time.Second); metric(t, g.metrics, "snaked_cluster_live") != 1; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the gateway never heard from the simulation")
		}
	}
	alice, err := dialPlayer(g.addr, "127.0.0.1", "alice", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer alice.cl.Close()
	watch, err := dialPlayer(g.addr, "127.0.0.1", "watch", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.cl.Close()
	wait := func(what string, d time.Duration, ok func() bool) {
		t.Helper()
		for end := time.Now().Add(d); !ok(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	wait("alice on the spectator's screen", 15*time.Second, func() bool { return strings.Contains(watch.text(), "alice") })

	if err := sim.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	mark := len(watch.text())
	wait("the restarting notice", 10*time.Second, func() bool { return strings.Contains(watch.text()[mark:], "world restarting") })
	time.Sleep(30 * time.Second) // the outage
	for _, p := range []*player{alice, watch} {
		select {
		case <-p.done:
			t.Fatalf("a session ended during the outage: %v", p.err)
		default:
		}
	}
	startSim(t, bin, natsAddr, state)
	mark = len(watch.text())
	wait("alice back in the new world", 30*time.Second, func() bool {
		s := watch.text()[mark:]
		return strings.Contains(s, "alice") && hasPlayfield(s)
	})
	for _, p := range []*player{alice, watch} {
		select {
		case <-p.done:
			t.Fatalf("a session ended during the outage: %v", p.err)
		default:
		}
	}
}
