//go:build unix

package sshserver

import (
	"net"
	"syscall"
	"testing"
)

// getSndBuf reads a socket's SO_SNDBUF.
func getSndBuf(fd uintptr) int {
	v, err := syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF)
	if err != nil {
		return -1
	}
	return v
}

func TestSendBufferSmall(t *testing.T) {
	cfg := testConfig(t)
	cfg.SendBuffer = 32 << 10
	h := start(t, cfg, testWorld(t, 0))
	play(t, h.dial("sndbuf"), 80, 24).waitScreen("playing")
	h.srv.mu.Lock()
	defer h.srv.mu.Unlock()
	if len(h.srv.raws) == 0 {
		t.Fatal("no connection")
	}
	for c := range h.srv.raws {
		rc, err := c.(*net.TCPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var got int
		rc.Control(func(fd uintptr) { got = getSndBuf(fd) })
		// Linux doubles the value for bookkeeping.
		if got <= 0 || got > 2*cfg.SendBuffer {
			t.Errorf("SO_SNDBUF = %d, want <= %d", got, 2*cfg.SendBuffer)
		}
	}
}
