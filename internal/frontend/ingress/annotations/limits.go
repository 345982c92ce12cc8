package annotations

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/causeway/causeway/internal/model"
)

// limitsGroup is ingress-nginx's rate limiting: requests per second or
// minute and concurrent connections per client address, and bandwidth per
// response. Limits are not a security boundary in ingress-nginx (an
// invalid one is dropped there too), so a bad value drops that setting
// with a Problem rather than closing the Ingress; an invalid allowlist
// drops the exemption, which limits more clients, not fewer.
var limitsGroup = Group{
	Name: "limits",
	Annotations: supported("limits",
		Annotation{Name: "limit-rps", Scope: ScopeLocation, Default: "0 (no limit)",
			Grammar:    fmt.Sprintf("a whole number of requests per second per client address, 0 to %d", maxLimitRPS),
			Difference: "values over the bound are refused"},
		Annotation{Name: "limit-rpm", Scope: ScopeLocation, Default: "0 (no limit)",
			Grammar:    fmt.Sprintf("a whole number of requests per minute per client address, 0 to %d", maxLimitRPM),
			Difference: "values over the bound are refused"},
		Annotation{Name: "limit-burst-multiplier", Scope: ScopeLocation, Default: "5",
			Grammar:    fmt.Sprintf("a whole number from 1 to %d; the burst is the rate times it", maxBurstMultiplier),
			Difference: "0 and values over the bound are refused; it is ignored with a Problem without limit-rps or limit-rpm"},
		Annotation{Name: "limit-connections", Scope: ScopeLocation, Default: "0 (no limit)",
			Grammar:    fmt.Sprintf("a whole number of requests in progress at once per client address, 0 to %d", maxLimitConnections),
			Difference: "values over the bound are refused"},
		Annotation{Name: "limit-rate", Scope: ScopeLocation, Default: "the ConfigMap's limit-rate",
			Grammar: "kilobytes per second per response as a whole number (as ingress-nginx), or a size with a unit k, m or g; at most 1g; " +
				"0 turns the ConfigMap's limit off; needs proxy-buffering: on, as in ingress-nginx",
			Difference: "0 turns a ConfigMap limit-rate off here (ingress-nginx keeps the ConfigMap's value); " +
				"without proxy-buffering: on it is ignored with a Problem (ingress-nginx renders it, and nginx ignores it)"},
		Annotation{Name: "limit-rate-after", Scope: ScopeLocation, Default: "the ConfigMap's limit-rate-after",
			Grammar:    "kilobytes as a whole number (as ingress-nginx), or a size with a unit k, m or g; at most 1g; needs proxy-buffering: on",
			Difference: "a size with a unit is accepted; without proxy-buffering: on it is ignored with a Problem"},
		Annotation{Name: "limit-allowlist", Scope: ScopeLocation, Default: "none",
			Grammar: fmt.Sprintf("a comma-separated list of up to %d CIDRs or addresses, IPv4 or IPv6, exempt from limit-rps, limit-rpm "+
				"and limit-connections; matched against the real client address", maxLimitAllowlist),
			Difference: "a CIDR with host bits set is refused; an invalid list exempts no one"},
		Annotation{Name: "limit-whitelist", Scope: ScopeLocation, Default: "none",
			Grammar:    "the former name of limit-allowlist; limit-allowlist wins when both are set",
			Difference: "a CIDR with host bits set is refused; an invalid list exempts no one"},
	),
	Parse: parseLimits,
}

// Bounds of the limits: far above what a client of one Ingress needs, low
// enough that burst = rate × multiplier stays small for nginx.
const (
	maxLimitRPS         = 100000
	maxLimitRPM         = 6000000
	maxBurstMultiplier  = 100
	maxLimitConnections = 100000
	maxLimitAllowlist   = 1000
	maxLimitRate        = 1 << 30
	defBurstMultiplier  = 5
)

// limitRates are the annotations the exempt list and multiplier apply to.
var limitRates = []string{"limit-rps", "limit-rpm", "limit-connections"}

func parseLimits(r *Reader, res *Result) {
	var lim model.Limits
	count := func(name string, hi int) int {
		n, _ := Parse(r, name, func(s string) (int, error) { return parseInt(s, 0, hi) })
		return n
	}
	lim.RPS = count("limit-rps", maxLimitRPS)
	lim.RPM = count("limit-rpm", maxLimitRPM)
	lim.Connections = count("limit-connections", maxLimitConnections)
	mult := defBurstMultiplier
	if r.Has("limit-burst-multiplier") {
		if lim.RPS == 0 && lim.RPM == 0 {
			r.Ignored("limit-burst-multiplier", "only applies with limit-rps or limit-rpm")
		} else {
			Set(r, "limit-burst-multiplier", &mult, func(s string) (int, error) { return parseInt(s, 1, maxBurstMultiplier) })
		}
	}
	lim.BurstRPS, lim.BurstRPM = lim.RPS*mult, lim.RPM*mult
	// nginx slows only responses it buffers: without proxy-buffering on,
	// the setting would do nothing.
	buffered := res.Location.Buffering.Response != nil && *res.Location.Buffering.Response
	for _, s := range []struct {
		name string
		dst  **model.Size
	}{{"limit-rate", &lim.Rate}, {"limit-rate-after", &lim.RateAfter}} {
		if r.Has(s.name) && !buffered {
			r.Ignored(s.name, `only applies with proxy-buffering: "on" (nginx does not slow responses it does not buffer)`)
			continue
		}
		SetPtr(r, s.name, s.dst, parseKilobytes)
	}

	counted := lim.RPS > 0 || lim.RPM > 0 || lim.Connections > 0
	name := "limit-allowlist"
	if r.Has("limit-whitelist") {
		if r.Has("limit-allowlist") {
			r.Ignored("limit-whitelist", "is the former name of limit-allowlist, which is also set")
		} else {
			name = "limit-whitelist"
		}
	}
	if r.Has(name) {
		if !counted {
			r.Ignored(name, "only applies with limit-rps, limit-rpm or limit-connections")
		} else {
			Set(r, name, &lim.Exempt, func(s string) ([]netip.Prefix, error) { return model.ParseCIDRList(s, maxLimitAllowlist) })
		}
	}
	if counted || lim.Rate != nil || lim.RateAfter != nil {
		res.Location.Limits = &lim
	}
}

// parseKilobytes reads ingress-nginx's whole kilobytes, or a size with a
// unit (model.ParseSize), at most maxLimitRate bytes.
func parseKilobytes(s string) (model.Size, error) {
	n, err := model.ParseSize(s)
	if err != nil {
		return 0, err
	}
	if s != "" && !slices.Contains([]byte("kKmMgG"), s[len(s)-1]) {
		n <<= 10 // a bare number is kilobytes, as in ingress-nginx
	}
	if n > maxLimitRate {
		return 0, fmt.Errorf("want at most 1g")
	}
	return model.Size(n), nil
}
