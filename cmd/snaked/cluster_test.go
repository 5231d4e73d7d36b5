package main

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestClusterRoles: a simulation with an embedded NATS on loopback and two
// gateways, each its own process. A player joins through one gateway; a
// spectator on the other sees her on the leaderboard of the one world,
// and her snake on the playfield.
func TestClusterRoles(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	bin := buildSnaked(t)
	natsAddr := freeLoopbackAddr(t)
	sim := exec.Command(bin, "-role", "sim", "-nats-embed", natsAddr, "-world", "256x128", "-bots", "2", "-bot-target", "0")
	out, err := sim.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Process.Kill(); _ = sim.Wait() })
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
			t.Fatal("the simulation exited before it was ready")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the simulation did not start")
	}
	url := "nats://" + natsAddr
	a := startDaemon(t, bin, "-role", "gateway", "-nats", url)
	b := startDaemon(t, bin, "-role", "gateway", "-nats", url)

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
}
