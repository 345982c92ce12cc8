package server

import (
	"fmt"
	"net/netip"
	"path"
	"strings"
)

// RouteRule is one --route-allow rule: the agents of the nodes whose names
// match Nodes may claim CIDRs inside Prefixes, node IPs inside Prefixes,
// host names matching HostNames and, with DefaultRoute, the default route.
type RouteRule struct {
	Nodes        string // a path.Match pattern: "edge-1", "edge-*", "*"
	Prefixes     []netip.Prefix
	HostNames    []string // lower-case path.Match patterns: "printer.lan", "*.store.example"
	DefaultRoute bool
}

// RouteRules are the administrator's grants. Unlike the certificate and
// the Node object, which vouch for one node's own addresses, CIDRs and the
// default route say which networks behind an agent the cloud's traffic
// should enter: a compromised edge node that claimed 0.0.0.0/0 or the
// default route would receive every destination no other agent owns. So
// only these rules grant them, and with no rules every such claim is
// refused.
type RouteRules []RouteRule

// allowsPrefix: a rule for node holds a prefix containing all of c.
func (rs RouteRules) allowsPrefix(node string, c netip.Prefix) bool {
	c = c.Masked()
	for _, r := range rs {
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

// allowsAddr: ip may be a node IP of node because a rule for node grants a
// CIDR containing it (the node could claim that CIDR anyway).
func (rs RouteRules) allowsAddr(node string, ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsValid() && rs.allowsPrefix(node, netip.PrefixFrom(ip, ip.BitLen()))
}

// allowsHost: a rule for node has a host-name pattern matching h.
func (rs RouteRules) allowsHost(node, h string) bool {
	h = normalizeName(h)
	for _, r := range rs {
		if !r.matches(node) {
			continue
		}
		for _, pat := range r.HostNames {
			if ok, err := path.Match(pat, h); err == nil && ok {
				return true
			}
		}
	}
	return false
}

func (rs RouteRules) allowsDefault(node string) bool {
	for _, r := range rs {
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

// hostPrefix marks a host-name pattern in a rule, so that a typo of a CIDR
// or of "default" is an error rather than a grant.
const hostPrefix = "host:"

// ParseRouteRule parses NODES=ROUTE[,ROUTE...]. NODES is a node-name
// pattern (path.Match syntax: *, ?, [...]). Each ROUTE is a CIDR, a single
// IP address (a /32 or /128), "default" for the default route, or
// host:PATTERN for host names. Examples: "edge-1=192.168.1.0/24",
// "store-*=10.20.0.0/16,host:*.store.example", "gateway=default".
func ParseRouteRule(s string) (RouteRule, error) {
	nodes, routes, ok := strings.Cut(s, "=")
	nodes = strings.TrimSpace(nodes)
	if !ok || nodes == "" || strings.TrimSpace(routes) == "" {
		return RouteRule{}, fmt.Errorf("route rule %q: want NODES=CIDR[,CIDR...], NODES=default or NODES=host:PATTERN", s)
	}
	if _, err := path.Match(nodes, ""); err != nil {
		return RouteRule{}, fmt.Errorf("route rule %q: node pattern: %w", s, err)
	}
	r := RouteRule{Nodes: nodes}
	for _, route := range strings.Split(routes, ",") {
		route = strings.TrimSpace(route)
		switch {
		case route == "default":
			r.DefaultRoute = true
		case strings.HasPrefix(route, hostPrefix):
			pat := normalizeName(strings.TrimPrefix(route, hostPrefix))
			if pat == "" {
				return RouteRule{}, fmt.Errorf("route rule %q: empty host name pattern", s)
			}
			if _, err := path.Match(pat, ""); err != nil {
				return RouteRule{}, fmt.Errorf("route rule %q: host name pattern %q: %w", s, pat, err)
			}
			r.HostNames = append(r.HostNames, pat)
		case !strings.Contains(route, "/"):
			ip, err := netip.ParseAddr(route)
			if err != nil {
				return RouteRule{}, fmt.Errorf("route rule %q: %q is not a CIDR, an IP address, default or host:PATTERN", s, route)
			}
			ip = ip.Unmap()
			r.Prefixes = append(r.Prefixes, netip.PrefixFrom(ip, ip.BitLen()))
		default:
			pfx, err := netip.ParsePrefix(route)
			if err != nil {
				return RouteRule{}, fmt.Errorf("route rule %q: %w", s, err)
			}
			if pfx != pfx.Masked() {
				return RouteRule{}, fmt.Errorf("route rule %q: %s has host bits set (did you mean %s?)", s, pfx, pfx.Masked())
			}
			r.Prefixes = append(r.Prefixes, pfx)
		}
	}
	return r, nil
}

// normalizeName compares host names as DNS does: case-insensitively and
// without the trailing dot.
func normalizeName(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
}
