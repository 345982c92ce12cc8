package server

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"net/netip"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/tunnel/wire"
)

func TestParseRouteRule(t *testing.T) {
	tests := []struct {
		in      string
		want    RouteRule
		wantErr string
	}{
		{in: "edge-1=192.168.1.0/24", want: RouteRule{Nodes: "edge-1", Prefixes: []netip.Prefix{netip.MustParsePrefix("192.168.1.0/24")}}},
		{in: "store-*=10.20.0.0/16, 10.21.0.0/16", want: RouteRule{Nodes: "store-*", Prefixes: []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16"), netip.MustParsePrefix("10.21.0.0/16")}}},
		{in: "gateway=default", want: RouteRule{Nodes: "gateway", DefaultRoute: true}},
		{in: "*=fd00::/8,default", want: RouteRule{Nodes: "*", Prefixes: []netip.Prefix{netip.MustParsePrefix("fd00::/8")}, DefaultRoute: true}},
		{in: "edge-1", wantErr: "want NODES="},
		{in: "=10.0.0.0/8", wantErr: "want NODES="},
		{in: "edge-1=", wantErr: "want NODES="},
		{in: "edge-[=10.0.0.0/8", wantErr: "node pattern"},
		{in: "edge-1=10.0.0.7", want: RouteRule{Nodes: "edge-1", Prefixes: []netip.Prefix{netip.MustParsePrefix("10.0.0.7/32")}}},
		{in: "edge-1=::ffff:10.0.0.7", want: RouteRule{Nodes: "edge-1", Prefixes: []netip.Prefix{netip.MustParsePrefix("10.0.0.7/32")}}},
		{in: "edge-1=host:Printer.LAN.,host:*.store.example", want: RouteRule{Nodes: "edge-1", HostNames: []string{"printer.lan", "*.store.example"}}},
		{in: "edge-1=host:", wantErr: "empty host name pattern"},
		{in: "edge-1=host:[a", wantErr: "host name pattern"},
		{in: "edge-1=10.0.0.256", wantErr: "not a CIDR, an IP address, default or host:PATTERN"},
		{in: "edge-1=10.0.0.1/8", wantErr: "host bits set (did you mean 10.0.0.0/8?)"},
		{in: "edge-1=everything", wantErr: "everything"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseRouteRule(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Nodes != tc.want.Nodes || got.DefaultRoute != tc.want.DefaultRoute || len(got.Prefixes) != len(tc.want.Prefixes) ||
				strings.Join(got.HostNames, ",") != strings.Join(tc.want.HostNames, ",") {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got.Prefixes {
				if got.Prefixes[i] != tc.want.Prefixes[i] {
					t.Fatalf("got %+v, want %+v", got, tc.want)
				}
			}
		})
	}
}

// TestRouteRules: CIDR and default-route claims against --route-allow.
func TestRouteRules(t *testing.T) {
	policy := Policy{Routes: mustRules(t, "edge-1=192.168.1.0/24", "store-*=10.20.0.0/16,fd00:20::/32", "gateway=default")}
	tests := []struct {
		name    string
		node    string
		cidrs   []string
		dflt    bool
		wantErr string
	}{
		{name: "no routes need no rule", node: "anyone"},
		{name: "the rule's own prefix", node: "edge-1", cidrs: []string{"192.168.1.0/24"}},
		{name: "a smaller prefix inside it", node: "edge-1", cidrs: []string{"192.168.1.128/25"}},
		{name: "a single address inside it", node: "edge-1", cidrs: []string{"192.168.1.7/32"}},
		{name: "a larger prefix", node: "edge-1", cidrs: []string{"192.168.0.0/16"}, wantErr: "CIDR 192.168.0.0/16 is not allowed for node \"edge-1\""},
		{name: "a larger prefix with the same base address", node: "store-1", cidrs: []string{"10.20.0.0/15"}, wantErr: "10.20.0.0/15"},
		{name: "everything", node: "edge-1", cidrs: []string{"0.0.0.0/0"}, wantErr: "CIDR 0.0.0.0/0 is not allowed"},
		{name: "outside it", node: "edge-1", cidrs: []string{"192.168.2.0/24"}, wantErr: "192.168.2.0/24"},
		{name: "one good and one bad", node: "edge-1", cidrs: []string{"192.168.1.0/24", "10.0.0.0/8"}, wantErr: "10.0.0.0/8"},
		{name: "another node's prefix", node: "edge-2", cidrs: []string{"192.168.1.0/24"}, wantErr: "node \"edge-2\""},
		{name: "pattern match", node: "store-17", cidrs: []string{"10.20.5.0/24", "fd00:20:1::/48"}},
		{name: "pattern, IPv6 outside", node: "store-17", cidrs: []string{"fd00:21::/32"}, wantErr: "fd00:21::/32"},
		{name: "IPv4-mapped IPv6 is not IPv4", node: "store-17", cidrs: []string{"::ffff:10.20.0.0/112"}, wantErr: "::ffff:10.20.0.0/112"},
		{name: "pattern does not match", node: "storefront", cidrs: []string{"10.20.5.0/24"}, wantErr: "storefront"},
		{name: "default route granted", node: "gateway", dflt: true},
		{name: "default route not granted", node: "edge-1", dflt: true, wantErr: "the default route is not allowed for node \"edge-1\""},
		{name: "a CIDR rule does not grant the default route", node: "store-1", dflt: true, wantErr: "default route"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := &wire.Hello{NodeName: tc.node, DefaultRoute: tc.dflt}
			for _, c := range tc.cidrs {
				h.CIDRs = append(h.CIDRs, netip.MustParsePrefix(c))
			}
			cert := &x509.Certificate{Subject: pkix.Name{CommonName: NodeCNPrefix + tc.node}}
			err := policy.Authorize(context.Background(), cert, h)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
	cert := &x509.Certificate{Subject: pkix.Name{CommonName: "system:node:edge-1"}}
	if err := (Policy{}).Authorize(context.Background(), cert, &wire.Hello{NodeName: "edge-1", CIDRs: []netip.Prefix{netip.MustParsePrefix("192.168.1.0/24")}}); err == nil {
		t.Error("an empty policy allowed a CIDR")
	}
}
