package configmap

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/causeway/causeway/internal/model"
)

// Real client address: the realip module, forwarded headers and the PROXY
// protocol (model.RealIP).

// maxTrustedCIDRs bounds proxy-real-ip-cidr; each entry is two lines of
// nginx.conf.
const maxTrustedCIDRs = 1000

var realIPKeys = map[string]func(*model.Config, string) error{
	"use-forwarded-headers": func(c *model.Config, v string) (err error) {
		c.RealIP.UseForwardedHeaders, err = model.ParseBool(v)
		return err
	},
	"enable-real-ip": func(c *model.Config, v string) (err error) {
		c.RealIP.EnableRealIP, err = model.ParseBool(v)
		return err
	},
	"compute-full-forwarded-for": func(c *model.Config, v string) (err error) {
		c.RealIP.ComputeFullForwardedFor, err = model.ParseBool(v)
		return err
	},
	"use-proxy-protocol": func(c *model.Config, v string) (err error) {
		c.RealIP.UseProxyProtocol, err = model.ParseBool(v)
		return err
	},
	"forwarded-for-header": func(c *model.Config, v string) (err error) {
		c.RealIP.ForwardedForHeader, err = parseForwardedForHeader(v)
		return err
	},
	"proxy-real-ip-cidr": func(c *model.Config, v string) (err error) {
		c.RealIP.TrustedCIDRs, err = parseTrustedCIDRs(v)
		return err
	},
	"proxy-protocol-header-timeout": durationKey(func(c *model.Config) *time.Duration { return &c.RealIP.ProxyProtocolHeaderTimeout }),
}

// parseForwardedForHeader checks the header nginx's realip module reads
// the client's address from. nginx ignores request headers whose names
// hold anything but letters, digits and "-" (ignore_invalid_headers), so
// such a name could never match; "proxy_protocol" would silently mean the
// PROXY protocol instead of a header. X-Forwarded-For and X-Real-IP are
// spelled as nginx knows them: only then does it read every X-Forwarded-For
// line of a request.
func parseForwardedForHeader(v string) (string, error) {
	name, err := model.ParseHeaderName(v)
	if err != nil {
		return "", err
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c != '-' && !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return "", fmt.Errorf("header name %q: nginx ignores request headers whose names hold %q; use letters, digits and -", model.Truncate(name), string(c))
		}
	}
	for _, canonical := range []string{"X-Forwarded-For", "X-Real-IP"} {
		if strings.EqualFold(name, canonical) {
			return canonical, nil
		}
	}
	return name, nil
}

// parseTrustedCIDRs reads a comma-separated list of CIDRs or single
// addresses (IPv4 or IPv6). A prefix with host bits set ("10.0.0.1/8") is
// refused rather than guessed at: nginx would warn and widen it.
func parseTrustedCIDRs(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	seen := map[netip.Prefix]bool{}
	for _, item := range strings.Split(v, ",") {
		item = strings.Trim(item, " \t")
		if item == "" {
			continue
		}
		if len(out) == maxTrustedCIDRs {
			return nil, fmt.Errorf("want at most %d CIDRs", maxTrustedCIDRs)
		}
		p, err := model.ParseCIDR(item)
		if err != nil {
			return nil, err
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("want at least one CIDR")
	}
	return out, nil
}
