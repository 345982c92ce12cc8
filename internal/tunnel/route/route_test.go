package route

import (
	"errors"
	"fmt"
	"net/netip"
	"testing"
)

func ips(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, x := range s {
		out = append(out, netip.MustParseAddr(x))
	}
	return out
}

func cidrs(s ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, x := range s {
		out = append(out, netip.MustParsePrefix(x))
	}
	return out
}

func TestLookup(t *testing.T) {
	agents := []Agent{
		{ID: "a", Node: "edge-a", NodeIPs: ips("10.0.0.1"), CIDRs: cidrs("10.0.0.0/16"), HostNames: []string{"edge-a"}},
		{ID: "b", Node: "edge-b", NodeIPs: ips("10.0.1.1"), CIDRs: cidrs("10.0.1.0/24")},
		{ID: "c", Node: "edge-c", NodeIPs: ips("192.168.5.5", "fd00::5"), DefaultRoute: true},
		{ID: "d", Node: "edge-d", NodeIPs: ips("172.16.0.9"), Draining: true, CIDRs: cidrs("172.16.0.0/12")},
	}
	table := NewTable(agents)
	for _, tc := range []struct {
		name    string
		host    string
		want    string
		match   Match
		wantErr error
	}{
		{"node IP wins over a containing CIDR", "10.0.1.1", "b", MatchNodeIP, nil},
		{"node IP of the CIDR's owner", "10.0.0.1", "a", MatchNodeIP, nil},
		{"longest prefix: /24 beats /16", "10.0.1.77", "b", MatchCIDR, nil},
		{"shorter prefix when the longer does not contain it", "10.0.2.3", "a", MatchCIDR, nil},
		{"host name, case-insensitive, trailing dot", "EDGE-A.", "a", MatchHostName, nil},
		{"unknown name falls back to the default route", "somewhere.example", "c", MatchDefault, nil},
		{"unknown IP falls back to the default route", "8.8.4.4", "c", MatchDefault, nil},
		{"IPv6 node IP", "fd00::5", "c", MatchNodeIP, nil},
		{"bracketed IPv6", "[fd00::5]", "c", MatchNodeIP, nil},
		{"IPv4-mapped IPv6 is the IPv4 address", "::ffff:10.0.0.1", "a", MatchNodeIP, nil},
		{"draining owner refuses instead of falling through", "172.16.0.9", "", MatchNodeIP, ErrDraining},
		{"draining CIDR owner refuses", "172.20.0.1", "", MatchCIDR, ErrDraining},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, m, err := table.Lookup(tc.host)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || got.ID != tc.want || m != tc.match {
				t.Fatalf("Lookup(%q) = %s/%s, %v; want %s/%s", tc.host, got.ID, m, err, tc.want, tc.match)
			}
		})
	}
}

func TestLookupNoAgent(t *testing.T) {
	table := NewTable([]Agent{{ID: "a", Node: "a", NodeIPs: ips("10.0.0.1")}})
	if _, _, err := table.Lookup("10.9.9.9"); !errors.Is(err, ErrNoAgent) {
		t.Fatalf("err = %v, want ErrNoAgent", err)
	}
	if _, _, err := NewTable(nil).Lookup("x"); !errors.Is(err, ErrNoAgent) {
		t.Fatalf("empty table err = %v", err)
	}
}

// TestStableChoice checks that equal agents share destinations, that the
// choice does not depend on registration order, and that removing one
// agent moves only the destinations it held.
func TestStableChoice(t *testing.T) {
	mk := func(ids ...string) []Agent {
		var as []Agent
		for _, id := range ids {
			as = append(as, Agent{ID: id, Node: id, CIDRs: cidrs("10.8.0.0/16")})
		}
		return as
	}
	t1 := NewTable(mk("n1", "n2", "n3"))
	t2 := NewTable(mk("n3", "n1", "n2"))
	t3 := NewTable(mk("n1", "n3"))
	counts := map[string]int{}
	moved := 0
	for i := 0; i < 600; i++ {
		dst := fmt.Sprintf("10.8.%d.%d", i/250, i%250+1)
		a1, _, _ := t1.Lookup(dst)
		a2, _, _ := t2.Lookup(dst)
		a3, _, _ := t3.Lookup(dst)
		if a1.ID != a2.ID {
			t.Fatalf("%s: order changed choice %s → %s", dst, a1.ID, a2.ID)
		}
		counts[a1.ID]++
		if a1.ID != "n2" && a3.ID != a1.ID {
			moved++
		}
	}
	if moved != 0 {
		t.Errorf("removing n2 moved %d destinations it did not hold", moved)
	}
	for id, n := range counts {
		if n < 100 {
			t.Errorf("agent %s got only %d of 600 destinations", id, n)
		}
	}
}

// TestDrainingSkipped checks that among equal agents a draining one is
// never chosen.
func TestDrainingSkipped(t *testing.T) {
	table := NewTable([]Agent{
		{ID: "1", Node: "x", DefaultRoute: true, Draining: true},
		{ID: "2", Node: "y", DefaultRoute: true},
	})
	for i := 0; i < 50; i++ {
		got, _, err := table.Lookup(fmt.Sprintf("host-%d", i))
		if err != nil || got.ID != "2" {
			t.Fatalf("got %s, %v; want 2", got.ID, err)
		}
	}
}

func TestDestinations(t *testing.T) {
	table := NewTable([]Agent{
		{ID: "1", NodeIPs: ips("10.0.0.2", "10.0.0.1"), CIDRs: cidrs("10.1.0.0/16", "10.1.2.0/24")},
	})
	if got := fmt.Sprint(table.Destinations()); got != "[10.0.0.1 10.0.0.2]" {
		t.Errorf("Destinations = %s", got)
	}
	if got := fmt.Sprint(table.Prefixes()); got != "[10.1.2.0/24 10.1.0.0/16]" {
		t.Errorf("Prefixes = %s", got)
	}
}
