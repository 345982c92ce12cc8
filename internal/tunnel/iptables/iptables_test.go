package iptables

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/tunnel/tunneltest"
)

func TestRules(t *testing.T) {
	m, err := New(Config{Target: netip.MustParseAddrPort("10.250.0.1:10263"), Ports: []uint16{10250}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		addrs    []string
		prefixes []string
		want     []string
	}{
		{"nothing tunneled", nil, nil, nil},
		{"one node IP", []string{"10.250.0.2"}, nil, []string{
			"-A CAUSEWAY-TUNNEL -d 10.250.0.2/32 -p tcp -m tcp --dport 10250 -m comment --comment causeway-tunnel -j DNAT --to-destination 10.250.0.1:10263",
		}},
		{"IPv6 skipped, CIDR masked, duplicates merged, most specific first",
			[]string{"fd00::1", "10.1.0.9", "10.1.0.9"}, []string{"10.1.0.1/16"}, []string{
				"-A CAUSEWAY-TUNNEL -d 10.1.0.9/32 -p tcp -m tcp --dport 10250 -m comment --comment causeway-tunnel -j DNAT --to-destination 10.250.0.1:10263",
				"-A CAUSEWAY-TUNNEL -d 10.1.0.0/16 -p tcp -m tcp --dport 10250 -m comment --comment causeway-tunnel -j DNAT --to-destination 10.250.0.1:10263",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var addrs []netip.Addr
			for _, a := range tc.addrs {
				addrs = append(addrs, netip.MustParseAddr(a))
			}
			var prefixes []netip.Prefix
			for _, p := range tc.prefixes {
				prefixes = append(prefixes, netip.MustParsePrefix(p))
			}
			got := m.Rules(addrs, prefixes)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestNewRejectsBadTarget(t *testing.T) {
	for _, target := range []string{"0.0.0.0:10263", "[fd00::1]:10263"} {
		if _, err := New(Config{Target: netip.MustParseAddrPort(target)}); err == nil {
			t.Errorf("target %s accepted", target)
		}
	}
	if _, err := New(Config{Target: netip.MustParseAddrPort("10.250.0.1:10263"), Static: []netip.Prefix{netip.MustParsePrefix("fd00::/64")}}); err == nil {
		t.Error("IPv6 static destination accepted")
	}
	for _, bad := range []string{"10250, 0", "all,10250", "any"} {
		if _, _, err := ParsePorts(bad); err == nil {
			t.Errorf("ports %q accepted", bad)
		}
	}
	if p, all, err := ParsePorts("10250,10255"); err != nil || all || fmt.Sprint(p) != "[10250 10255]" {
		t.Errorf("ParsePorts = %v, %v, %v", p, all, err)
	}
	if p, all, err := ParsePorts(" all "); err != nil || !all || p != nil {
		t.Errorf("ParsePorts(all) = %v, %v, %v", p, all, err)
	}
}

// TestRulesAllPortsAndStatic: every TCP port of a tunneled address, and
// static destinations present with no agent at all.
func TestRulesAllPortsAndStatic(t *testing.T) {
	m, err := New(Config{Target: netip.MustParseAddrPort("10.250.0.1:10263"), AllPorts: true,
		Static: []netip.Prefix{netip.MustParsePrefix("10.251.0.0/16")}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"-A CAUSEWAY-TUNNEL -d 10.250.0.2/32 -p tcp -m comment --comment causeway-tunnel -j DNAT --to-destination 10.250.0.1:10263",
		"-A CAUSEWAY-TUNNEL -d 10.251.1.0/24 -p tcp -m comment --comment causeway-tunnel -j DNAT --to-destination 10.250.0.1:10263",
		"-A CAUSEWAY-TUNNEL -d 10.251.0.0/16 -p tcp -m comment --comment causeway-tunnel -j DNAT --to-destination 10.250.0.1:10263",
	}
	got := m.Rules([]netip.Addr{netip.MustParseAddr("10.250.0.2")}, []netip.Prefix{netip.MustParsePrefix("10.251.1.0/24")})
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := m.Rules(nil, nil); len(got) != 1 || got[0] != want[2] {
		t.Fatalf("with no agent: %q, want only the static destination", got)
	}
}

// TestRealIptables runs the manager against real iptables inside a network
// namespace of its own, next to a rule it did not create.
func TestRealIptables(t *testing.T) {
	tunneltest.NeedNetns(t)
	ns := tunneltest.NewNetns(t, fmt.Sprintf("cwt-ipt-%d", os.Getpid()))
	foreign := "-A OUTPUT -d 192.0.2.7/32 -p tcp -m tcp --dport 10250 -j ACCEPT"
	ns.MustRun(t, "iptables", append([]string{"-t", "nat"}, strings.Fields(foreign)...)...)
	m, err := New(Config{Target: netip.MustParseAddrPort("10.250.0.1:10263"), Runner: ExecRunner{Prefix: []string{"ip", "netns", "exec", ns.Name}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	addrs := []netip.Addr{netip.MustParseAddr("10.250.0.2")}
	changed, err := m.Sync(ctx, addrs, nil)
	if err != nil || !changed {
		t.Fatalf("first sync: changed=%v err=%v", changed, err)
	}
	save := ns.MustRun(t, "iptables-save", "-t", "nat")
	for _, want := range append(m.Rules(addrs, nil), foreign, "-A OUTPUT -m comment --comment causeway-tunnel -j CAUSEWAY-TUNNEL") {
		if !strings.Contains(save, want) {
			t.Fatalf("missing %q in\n%s", want, save)
		}
	}
	if changed, err := m.Sync(ctx, addrs, nil); err != nil || changed {
		t.Fatalf("second sync is not a no-op: changed=%v err=%v", changed, err)
	}
	// Someone deletes our jump; the next sync repairs it.
	ns.MustRun(t, "iptables", "-t", "nat", "-D", "OUTPUT", "-m", "comment", "--comment", "causeway-tunnel", "-j", "CAUSEWAY-TUNNEL")
	if changed, err := m.Sync(ctx, addrs, nil); err != nil || !changed {
		t.Fatalf("repair sync: changed=%v err=%v", changed, err)
	}
	// A new destination replaces the chain's content atomically.
	addrs = append(addrs, netip.MustParseAddr("10.250.0.3"))
	if _, err := m.Sync(ctx, addrs, nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(ns.MustRun(t, "iptables", "-t", "nat", "-S", "CAUSEWAY-TUNNEL"), "-j DNAT"); got != 4 {
		t.Fatalf("%d DNAT rules, want 4", got)
	}
	// The all-ports form reads back as written, so a sync after it is a
	// no-op too.
	all, err := New(Config{Target: netip.MustParseAddrPort("10.250.0.1:10263"), AllPorts: true,
		Static: []netip.Prefix{netip.MustParsePrefix("10.251.0.0/16")}, Runner: ExecRunner{Prefix: []string{"ip", "netns", "exec", ns.Name}}})
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := all.Sync(ctx, addrs, nil); err != nil || !changed {
		t.Fatalf("all-ports sync: changed=%v err=%v", changed, err)
	}
	if changed, err := all.Sync(ctx, addrs, nil); err != nil || changed {
		t.Fatalf("second all-ports sync is not a no-op: changed=%v err=%v", changed, err)
	}
	if err := m.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
	save = ns.MustRun(t, "iptables-save", "-t", "nat")
	if strings.Contains(save, "CAUSEWAY-TUNNEL") || !strings.Contains(save, foreign) {
		t.Fatalf("after cleanup:\n%s", save)
	}
	if err := m.Cleanup(ctx); err != nil {
		t.Fatalf("second cleanup: %v", err)
	}
}
