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

// TestNodeIPConflicts: a node-IP claim never overrides another agent's
// CIDR. The claim is ignored (and reported) when the most specific CIDR
// containing the address belongs to other nodes only.
func TestNodeIPConflicts(t *testing.T) {
	table := NewTable([]Agent{
		{ID: "a1", Node: "site-a", CIDRs: cidrs("10.20.0.0/24", "10.30.0.0/16", "fd00:20::/64")},
		{ID: "a2", Node: "site-a", NodeIPs: ips("10.20.0.7")}, // a second link of the same node
		{ID: "h", Node: "hijacker", NodeIPs: ips("10.20.0.1", "10.20.0.254", "10.20.0.1", "::ffff:10.20.0.9", "10.30.5.5", "192.168.9.9", "fd00:20::1"),
			CIDRs: cidrs("10.30.5.0/24")},
		{ID: "s", Node: "shared", CIDRs: cidrs("10.40.0.0/24")},
		{ID: "e", Node: "e", NodeIPs: ips("10.40.0.5"), CIDRs: cidrs("10.40.0.0/24")},
	})
	for _, tc := range []struct {
		name, host, want string
		match            Match
	}{
		{"inside another node's CIDR: the CIDR owner", "10.20.0.1", "a1", MatchCIDR},
		{"the last address of it too", "10.20.0.254", "a1", MatchCIDR},
		{"an IPv4-mapped claim is the IPv4 address", "10.20.0.9", "a1", MatchCIDR},
		{"IPv6 likewise", "fd00:20::1", "a1", MatchCIDR},
		{"inside its own, more specific CIDR", "10.30.5.5", "h", MatchNodeIP},
		{"outside every CIDR", "192.168.9.9", "h", MatchNodeIP},
		{"another link of the CIDR's node", "10.20.0.7", "a2", MatchNodeIP},
		{"inside a CIDR the claimant shares", "10.40.0.5", "e", MatchNodeIP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, m, err := table.Lookup(tc.host)
			if err != nil || got.ID != tc.want || m != tc.match {
				t.Fatalf("Lookup(%s) = %s/%s, %v; want %s/%s", tc.host, got.ID, m, err, tc.want, tc.match)
			}
		})
	}
	var got []string
	for _, c := range table.Conflicts() {
		got = append(got, fmt.Sprintf("%s %s/%s in %s of %v", c.IP, c.Node, c.Agent, c.Prefix, c.Owners))
	}
	want := []string{
		"10.20.0.1 hijacker/h in 10.20.0.0/24 of [site-a]", // listed twice, reported once
		"10.20.0.9 hijacker/h in 10.20.0.0/24 of [site-a]",
		"10.20.0.254 hijacker/h in 10.20.0.0/24 of [site-a]",
		"fd00:20::1 hijacker/h in fd00:20::/64 of [site-a]",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Conflicts =\n%q\nwant\n%q", got, want)
	}
}

// TestHijackByListingAddresses: an agent listing every address of another
// agent's /24 as node IPs takes none of them.
func TestHijackByListingAddresses(t *testing.T) {
	var all []netip.Addr
	for i := 1; i <= 254; i++ {
		all = append(all, netip.AddrFrom4([4]byte{10, 20, 0, byte(i)}))
	}
	table := NewTable([]Agent{
		{ID: "a", Node: "site-a", CIDRs: cidrs("10.20.0.0/24")},
		{ID: "b", Node: "site-b", NodeIPs: all},
	})
	for _, ip := range all {
		if got, m, err := table.Lookup(ip.String()); err != nil || got.ID != "a" || m != MatchCIDR {
			t.Fatalf("Lookup(%s) = %s/%s, %v; want a/cidr", ip, got.ID, m, err)
		}
	}
	if n := len(table.Conflicts()); n != 254 {
		t.Errorf("%d conflicts, want 254", n)
	}
	if d := table.Destinations(); len(d) != 0 {
		t.Errorf("ignored claims still listed as destinations: %v", d)
	}
}
