package loadtest

import (
	"net/netip"
)

// Addrs returns how many source addresses n sessions need at perAddr
// sessions per address (at least 1).
func Addrs(n, perAddr int) int {
	if perAddr < 1 {
		perAddr = 1
	}
	a := (n + perAddr - 1) / perAddr
	return max(a, 1)
}

// SourceAddr returns the loopback source address of session i when the
// swarm uses nAddrs addresses. Sessions are dealt round-robin (i % nAddrs),
// so consecutive dials come from different addresses and a per-address cap
// on unauthenticated connections is not hit by the dial concurrency. The
// addresses are 127.1.0.1, 127.1.0.2, ... skipping host parts 0 and 255 and
// never 127.0.0.1, so every session's address is distinct from the daemon's
// usual one and each address carries at most ceil(n/nAddrs) sessions.
func SourceAddr(i, nAddrs int) netip.Addr {
	if nAddrs < 1 {
		nAddrs = 1
	}
	k := i % nAddrs
	// 254 usable host values (1..254) per /24, starting at 127.1.0.0/24.
	third := k / 254
	fourth := k%254 + 1
	second := 1 + third/256
	third %= 256
	return netip.AddrFrom4([4]byte{127, byte(second), byte(third), byte(fourth)})
}
