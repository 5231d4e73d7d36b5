package loadtest

import (
	"net/netip"
	"testing"
)

func TestAddrs(t *testing.T) {
	for _, c := range []struct{ n, per, want int }{
		{0, 64, 1}, {1, 64, 1}, {64, 64, 1}, {65, 64, 2}, {2500, 64, 40}, {10, 0, 10},
	} {
		if got := Addrs(c.n, c.per); got != c.want {
			t.Errorf("Addrs(%d, %d) = %d, want %d", c.n, c.per, got, c.want)
		}
	}
}

func TestSourceAddrSpread(t *testing.T) {
	const n, per = 5000, 64
	na := Addrs(n, per)
	count := map[netip.Addr]int{}
	for i := range n {
		a := SourceAddr(i, na)
		b := a.As4()
		if b[0] != 127 || b[3] == 0 || b[3] == 255 {
			t.Fatalf("session %d: bad source %v", i, a)
		}
		if a == netip.MustParseAddr("127.0.0.1") {
			t.Fatalf("session %d uses 127.0.0.1", i)
		}
		count[a]++
	}
	if len(count) != na {
		t.Fatalf("used %d addresses, want %d", len(count), na)
	}
	for a, c := range count {
		if c > per {
			t.Errorf("%v carries %d sessions, more than %d", a, c, per)
		}
	}
	// Consecutive sessions come from different addresses.
	for i := 1; i < na; i++ {
		if SourceAddr(i, na) == SourceAddr(i-1, na) {
			t.Fatalf("sessions %d and %d share an address", i-1, i)
		}
	}
}

func TestSourceAddrManyAddresses(t *testing.T) {
	// Beyond one /24 and beyond 127.1.0.0/16: still distinct and valid.
	const na = 254*256 + 10
	seen := map[netip.Addr]bool{}
	for i := range na {
		a := SourceAddr(i, na)
		if seen[a] {
			t.Fatalf("address %v repeated at %d", a, i)
		}
		seen[a] = true
		if b := a.As4(); b[0] != 127 || b[3] == 0 || b[3] == 255 || b[1] == 0 {
			t.Fatalf("bad address %v", a)
		}
	}
}
