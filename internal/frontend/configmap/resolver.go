package configmap

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/causeway/causeway/internal/model"
)

// maxResolvers bounds resolver-addresses.
const maxResolvers = 8

// resolverKeys are the DNS servers that resolve ExternalName Services
// (the controller asks them; nginx resolves nothing).
var resolverKeys = keyParsers{
	"resolver-addresses": func(c *model.Config, v string) (err error) {
		c.Resolvers, err = parseResolvers(v)
		return err
	},
	"disable-ipv6-dns": boolKey(func(c *model.Config) *bool { return &c.NoIPv6DNS }),
}

// parseResolvers reads a comma- or space-separated list of IPv4 or IPv6
// addresses, each with an optional port (192.0.2.53:5353, [2001:db8::53]:53),
// 53 by default; empty means resolv.conf's.
func parseResolvers(v string) ([]netip.AddrPort, error) {
	fields := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })
	if len(fields) > maxResolvers {
		return nil, fmt.Errorf("want at most %d servers", maxResolvers)
	}
	var out []netip.AddrPort
	for _, f := range fields {
		ap, err := netip.ParseAddrPort(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, fmt.Errorf("%q is not an IP address, with an optional :port", model.Truncate(f))
			}
			ap = netip.AddrPortFrom(a, 53)
		}
		switch {
		case ap.Addr().Zone() != "":
			return nil, fmt.Errorf("%q: a zone is not allowed", model.Truncate(f))
		case ap.Port() == 0:
			return nil, fmt.Errorf("%q: port 0", model.Truncate(f))
		case ap.Addr().IsUnspecified() || ap.Addr().IsMulticast():
			return nil, fmt.Errorf("%q is not a server's address", model.Truncate(f))
		}
		ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		for _, o := range out {
			if o == ap {
				return nil, fmt.Errorf("%s is listed twice", ap)
			}
		}
		out = append(out, ap)
	}
	return out, nil
}
