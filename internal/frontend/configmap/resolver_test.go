package configmap

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

// TestResolverKeys: resolver-addresses and disable-ipv6-dns, one row per
// rule; a bad value keeps the default (resolv.conf's servers) with a
// Problem.
func TestResolverKeys(t *testing.T) {
	ap := func(ss ...string) []netip.AddrPort {
		var out []netip.AddrPort
		for _, s := range ss {
			out = append(out, netip.MustParseAddrPort(s))
		}
		return out
	}
	for _, r := range []struct {
		value string
		want  []netip.AddrPort // nil with ok false: refused
		ok    bool
	}{
		{"10.96.0.10", ap("10.96.0.10:53"), true},
		{"10.96.0.10:5353", ap("10.96.0.10:5353"), true},
		{"10.0.0.1, 10.0.0.2", ap("10.0.0.1:53", "10.0.0.2:53"), true},
		{"10.0.0.1 [2001:db8::53]:53 2001:db8::54", ap("10.0.0.1:53", "[2001:db8::53]:53", "[2001:db8::54]:53"), true},
		{"::ffff:10.0.0.1", ap("10.0.0.1:53"), true},
		{"127.0.0.53", ap("127.0.0.53:53"), true},
		{"", nil, true},
		{"dns.example.com", nil, false},
		{"10.0.0.1:0", nil, false},
		{"10.0.0.1:70000", nil, false},
		{"0.0.0.0", nil, false},
		{"224.0.0.251", nil, false},
		{"fe80::1%eth0", nil, false},
		{"10.0.0.1,10.0.0.1", nil, false},
		{"10.0.0.1;", nil, false},
		{strings.Repeat("10.0.0.1,", 9), nil, false},
	} {
		cfg, problems := parseOne("resolver-addresses", r.value)
		if r.ok != (len(problems) == 0) || !reflect.DeepEqual(cfg.Resolvers, r.want) {
			t.Errorf("%q: resolvers %v, problems %v; want %v, ok %v", r.value, cfg.Resolvers, problems, r.want, r.ok)
		}
	}
	if cfg, problems := parseOne("disable-ipv6-dns", "true"); !cfg.NoIPv6DNS || len(problems) != 0 {
		t.Errorf("disable-ipv6-dns true: %v %v", cfg.NoIPv6DNS, problems)
	}
	if cfg, problems := parseOne("disable-ipv6-dns", "on"); cfg.NoIPv6DNS || len(problems) != 1 {
		t.Errorf("disable-ipv6-dns on: %v %v", cfg.NoIPv6DNS, problems)
	}
}
