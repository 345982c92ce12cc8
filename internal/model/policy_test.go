package model

import (
	"net/netip"
	"testing"
)

func TestBusyBuffersFit(t *testing.T) {
	for _, tc := range []struct {
		busy Size
		n    int
		size Size
		ok   bool
	}{
		{busy: 4 << 10, ok: true},   // one default buffer
		{busy: 12 << 10, ok: true},  // all four default buffers but one
		{busy: 16 << 10, ok: false}, // all four
		{busy: 2 << 10, ok: false},  // less than one buffer
		{busy: 8 << 10, n: 2, ok: false},
		{busy: 4 << 10, n: 2, ok: true},
		{busy: 56 << 10, n: 8, size: 8 << 10, ok: true},
		{busy: 57 << 10, n: 8, size: 8 << 10, ok: false},
		{busy: 4 << 10, n: 8, size: 8 << 10, ok: false},
		{busy: 16 << 10, size: 16 << 10, ok: true},
	} {
		err := BusyBuffersFit(tc.busy, tc.n, tc.size)
		if (err == nil) != tc.ok {
			t.Errorf("BusyBuffersFit(%d, %d, %d) = %v, want ok %v", tc.busy, tc.n, tc.size, err, tc.ok)
		}
	}
}

// TestAccessAnd: a client gets through the joined list exactly when it
// gets through both.
func TestAccessAnd(t *testing.T) {
	p := func(ss ...string) []netip.Prefix {
		var out []netip.Prefix
		for _, s := range ss {
			out = append(out, netip.MustParsePrefix(s))
		}
		return out
	}
	lists := []*AccessList{nil,
		{Deny: p("10.1.0.0/16")},
		{Allow: p("10.0.0.0/8")},
		{Allow: p("10.2.0.0/16", "192.168.0.0/16")},
		{Deny: p("10.2.3.0/24"), Allow: p("10.2.0.0/16")},
		{Allow: p("172.16.0.0/12")},
		{Allow: p("2001:db8::/32")},
		{Deny: p("0.0.0.0/0", "::/0")},
	}
	addrs := []string{"10.1.2.3", "10.2.3.4", "10.2.4.5", "10.3.0.1", "192.168.1.1", "172.16.0.1", "8.8.8.8", "2001:db8::1", "2001:db9::1"}
	for i, a := range lists {
		for j, b := range lists {
			both := And(a, b)
			for _, s := range addrs {
				addr := netip.MustParseAddr(s)
				if got, want := both.Allows(addr), a.Allows(addr) && b.Allows(addr); got != want {
					t.Errorf("lists %d and %d, %s: joined %v, both %v (joined %+v)", i, j, s, got, want, both)
				}
			}
		}
	}
}
