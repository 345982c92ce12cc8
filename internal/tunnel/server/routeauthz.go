package server

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/netip"
	"path"
	"strings"

	"github.com/causeway/causeway/internal/tunnel/wire"
)

// RouteRule lets the agents of the nodes whose names match Nodes claim
// CIDRs inside Prefixes and, with DefaultRoute, the default route.
type RouteRule struct {
	Nodes        string // a path.Match pattern: "edge-1", "edge-*", "*"
	Prefixes     []netip.Prefix
	DefaultRoute bool
}

// RoutePolicy authorizes the routes an agent claims beyond its own node:
// its CIDRs and the default route. Unlike node IPs, which a Node object
// vouches for, these say which networks behind an agent the cloud's
// traffic should enter, so a compromised edge node that claims 0.0.0.0/0
// or the default route would receive every destination no other agent
// owns. Only the administrator's rules decide. A claim is allowed when a
// rule whose pattern matches the agent's node name holds a prefix that
// contains the claimed CIDR (or, for the default route, allows it); with
// no rules every such claim is refused. Node IPs and host names are not
// its business (see NodeAddressAuthorizer).
type RoutePolicy struct {
	Rules []RouteRule
}

// Authorize implements Authorizer.
func (p RoutePolicy) Authorize(_ context.Context, _ *x509.Certificate, hello *wire.Hello) error {
	for _, c := range hello.CIDRs {
		if !p.allowsPrefix(hello.NodeName, c) {
			return fmt.Errorf("CIDR %s is not allowed for node %q (no --route-allow rule covers it)", c, hello.NodeName)
		}
	}
	if hello.DefaultRoute && !p.allowsDefault(hello.NodeName) {
		return fmt.Errorf("the default route is not allowed for node %q (no --route-allow rule grants it)", hello.NodeName)
	}
	return nil
}

func (p RoutePolicy) allowsPrefix(node string, c netip.Prefix) bool {
	c = c.Masked()
	for _, r := range p.Rules {
		if !r.matches(node) {
			continue
		}
		for _, a := range r.Prefixes {
			if a.Addr().Is4() == c.Addr().Is4() && a.Bits() <= c.Bits() && a.Contains(c.Addr()) {
				return true
			}
		}
	}
	return false
}

func (p RoutePolicy) allowsDefault(node string) bool {
	for _, r := range p.Rules {
		if r.DefaultRoute && r.matches(node) {
			return true
		}
	}
	return false
}

func (r RouteRule) matches(node string) bool {
	ok, err := path.Match(r.Nodes, node)
	return err == nil && ok
}

// ParseRouteRule parses NODES=ROUTE[,ROUTE...], where NODES is a node-name
// pattern (path.Match syntax: *, ?, [...]) and each ROUTE a CIDR or the
// word "default" for the default route. Examples: "edge-1=192.168.1.0/24",
// "store-*=10.20.0.0/16,10.21.0.0/16", "gateway=default".
func ParseRouteRule(s string) (RouteRule, error) {
	nodes, routes, ok := strings.Cut(s, "=")
	nodes = strings.TrimSpace(nodes)
	if !ok || nodes == "" || strings.TrimSpace(routes) == "" {
		return RouteRule{}, fmt.Errorf("route rule %q: want NODES=CIDR[,CIDR...] or NODES=default", s)
	}
	if _, err := path.Match(nodes, ""); err != nil {
		return RouteRule{}, fmt.Errorf("route rule %q: node pattern: %w", s, err)
	}
	r := RouteRule{Nodes: nodes}
	for _, route := range strings.Split(routes, ",") {
		route = strings.TrimSpace(route)
		if route == "default" {
			r.DefaultRoute = true
			continue
		}
		pfx, err := netip.ParsePrefix(route)
		if err != nil {
			return RouteRule{}, fmt.Errorf("route rule %q: %w", s, err)
		}
		if pfx != pfx.Masked() {
			return RouteRule{}, fmt.Errorf("route rule %q: %s has host bits set (did you mean %s?)", s, pfx, pfx.Masked())
		}
		r.Prefixes = append(r.Prefixes, pfx)
	}
	return r, nil
}
