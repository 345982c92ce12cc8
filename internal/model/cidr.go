package model

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// ParseCIDRList reads a comma-separated list of CIDRs or single addresses
// (IPv4 or IPv6), at most max of them, without duplicates. Empty items are
// skipped, as ingress-nginx does, but the list must name one. A prefix with
// host bits set ("10.0.0.1/8") is refused rather than guessed at: nginx
// would warn and widen it.
func ParseCIDRList(v string, max int) ([]netip.Prefix, error) {
	var out []netip.Prefix
	seen := map[netip.Prefix]bool{}
	for _, item := range strings.Split(v, ",") {
		item = strings.Trim(item, " \t")
		if item == "" {
			continue
		}
		if len(out) == max {
			return nil, fmt.Errorf("want at most %d CIDRs", max)
		}
		var p netip.Prefix
		if strings.Contains(item, "/") {
			var err error
			if p, err = netip.ParsePrefix(item); err != nil {
				return nil, fmt.Errorf("%q is not a CIDR such as 10.0.0.0/8 or 2001:db8::/32", Truncate(item))
			}
			if p != p.Masked() {
				return nil, fmt.Errorf("%q has host bits set; did you mean %s?", item, p.Masked())
			}
		} else {
			a, err := netip.ParseAddr(item)
			if err != nil || a.Zone() != "" {
				return nil, fmt.Errorf("%q is not an IP address or a CIDR such as 10.0.0.0/8", Truncate(item))
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("want at least one CIDR")
	}
	return out, nil
}
