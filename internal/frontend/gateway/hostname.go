package gateway

import (
	"errors"
	"net/netip"
	"strings"
)

// CheckHostname reports whether h is a Gateway API Hostname (shared_types.go
// Hostname): RFC 1123 labels of lower-case letters, digits and '-', each
// starting and ending with a letter or digit and at most 63 long, at most
// 253 in all, optionally behind one leading wildcard label "*.", and not an
// IP address. The CRD checks most of this; the files source and the
// webhook's dry runs do not, so the front-end checks it again.
func CheckHostname(h string) error {
	if h == "" {
		return errors.New("empty hostname")
	}
	if len(h) > 253 {
		return errors.New("hostname longer than 253 characters")
	}
	rest := strings.TrimPrefix(h, "*.")
	if _, err := netip.ParseAddr(rest); err == nil {
		return errors.New("hostname is an IP address")
	}
	for label := range strings.SplitSeq(rest, ".") {
		if err := checkLabel(label); err != nil {
			return err
		}
	}
	return nil
}

func checkLabel(l string) error {
	if l == "" {
		return errors.New("empty label")
	}
	if len(l) > 63 {
		return errors.New("label longer than 63 characters")
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && i > 0 && i < len(l)-1:
		case c == '*':
			return errors.New("a wildcard must be the whole first label")
		default:
			return errors.New("labels are lower-case letters, digits and inner '-'")
		}
	}
	return nil
}

// wildcard returns the suffix a wildcard hostname "*.suffix" matches, and
// whether h is one.
func wildcard(h string) (string, bool) {
	return strings.CutPrefix(h, "*.")
}

// HostnameMatches reports whether a request for the precise host is
// matched by pattern: equal, or under a wildcard's suffix by at least one
// label ("*.example.com" matches "a.example.com" and "a.b.example.com",
// not "example.com"). An empty pattern matches every host.
func HostnameMatches(pattern, host string) bool {
	if pattern == "" {
		return true
	}
	if suffix, ok := wildcard(pattern); ok {
		return len(host) > len(suffix)+1 && strings.HasSuffix(host, "."+suffix)
	}
	return pattern == host
}

// IntersectHostnames returns the hostnames requests for which both a
// listener's hostname and a route's hostname match, as one hostname: the
// more specific of the two (httproute_types.go Hostnames, Listener.Hostname).
// An empty hostname matches everything. ok is false when no request
// matches both. Both inputs are valid hostnames (CheckHostname) or empty.
//
//	"" ∩ h = h
//	"a.example.com" ∩ "*.example.com" = "a.example.com"
//	"*.a.example.com" ∩ "*.example.com" = "*.a.example.com"
//	"*.example.com" ∩ "example.com" = none
func IntersectHostnames(listener, route string) (string, bool) {
	switch {
	case listener == "":
		return route, true
	case route == "":
		return listener, true
	case listener == route:
		return listener, true
	}
	ls, lw := wildcard(listener)
	rs, rw := wildcard(route)
	switch {
	case lw && rw:
		// The longer suffix is the more specific; it intersects when it
		// lies under the shorter one.
		if strings.HasSuffix(ls, "."+rs) {
			return listener, true
		}
		if strings.HasSuffix(rs, "."+ls) {
			return route, true
		}
	case lw:
		if HostnameMatches(listener, route) {
			return route, true
		}
	case rw:
		if HostnameMatches(route, listener) {
			return listener, true
		}
	}
	return "", false
}

// EffectiveHostnames returns the hostnames a route serves on a listener:
// each route hostname intersected with the listener's, the ones that do
// not intersect left out (the spec: they "MUST be ignored"), in the
// route's order without duplicates. all is true when the route serves
// every hostname the listener does: neither names one. ok is false when
// both name hostnames and none intersect: the route does not attach to
// that listener.
func EffectiveHostnames(listener string, route []string) (hosts []string, all, ok bool) {
	if len(route) == 0 {
		if listener == "" {
			return nil, true, true
		}
		return []string{listener}, false, true
	}
	seen := make(map[string]bool, len(route))
	for _, r := range route {
		h, ok := IntersectHostnames(listener, r)
		if !ok || seen[h] {
			continue
		}
		seen[h] = true
		hosts = append(hosts, h)
	}
	return hosts, false, len(hosts) > 0
}
