package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestClusterRegions: a gateway run with -follow regions, under a NATS
// user with only a gateway's permissions, serves a player and a spectator
// their screens of the world from the regions its cameras need; its
// metrics count the bytes it received and the region snapshots it took,
// which the simulation's count too.
func TestClusterRegions(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	bin := buildSnaked(t)
	natsAddr, simMetrics := freeLoopbackAddr(t), freeLoopbackAddr(t)
	users := filepath.Join(t.TempDir(), "users.txt")
	if err := os.WriteFile(users, []byte("sim sim s3cret\ngateway gw-r pw-r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	startSim(t, bin, natsAddr, t.TempDir(), "-metrics-addr", simMetrics, "-nats-users", users, "-world", "1024x512", "-bots", "40")
	g := startDaemon(t, bin, "-role", "gateway", "-nats", "nats://"+natsAddr, "-nats-user", "gw-r", "-nats-password", "pw-r", "-follow", "regions")

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
	for end := time.Now().Add(15 * time.Second); !(hasPlayfield(alice.text()) && hasPlayfield(watch.text())); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("no playfield on the gateway following regions\nalice got %d bytes, the spectator %d", len(alice.text()), len(watch.text()))
		}
	}
	if n := metric(t, g.metrics, `snaked_follow_bytes_total{kind="regions"}`); n <= 0 {
		t.Errorf("the gateway's metrics count %v bytes of regions received", n)
	}
	if n := metric(t, g.metrics, "snaked_cluster_region_snapshots_total"); n < 1 {
		t.Errorf("the gateway's metrics count %v region snapshots taken", n)
	}
	if n := metric(t, simMetrics, "snaked_cluster_region_snapshots_total"); n < 1 {
		t.Errorf("the simulation's metrics count %v region snapshots written", n)
	}
	if n := metric(t, simMetrics, "snaked_cluster_region_requests_dropped_total"); n != 0 {
		t.Errorf("the simulation dropped %v region snapshot requests", n)
	}
}
