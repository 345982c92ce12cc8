package annotations

import (
	"net/netip"

	"github.com/causeway/causeway/internal/model"
)

// accessGroup is ingress-nginx's source address lists. They are security
// settings: a list that cannot be used as written makes every path of the
// Ingress answer 503 (as ingress-nginx denies the location), never serves
// it to every client.
var accessGroup = Group{
	Name: "access",
	Annotations: supported("access",
		Annotation{Name: "allowlist-source-range", Scope: ScopeLocation, Default: "the ConfigMap's whitelist-source-range, or none (every client)",
			Grammar: cidrGrammar + "; clients outside it get 403",
			Difference: "an entry with host bits set (10.0.0.1/8), a zone or an IPv4-mapped IPv6 address is refused, " +
				"and an empty value closes the paths instead of meaning the ConfigMap's default"},
		Annotation{Name: "whitelist-source-range", Scope: ScopeLocation, Default: "as allowlist-source-range",
			Grammar:    "the old name of allowlist-source-range, same grammar; ignored, with a Problem, when allowlist-source-range is set too",
			Difference: "as allowlist-source-range"},
		Annotation{Name: "denylist-source-range", Scope: ScopeLocation, Default: "the ConfigMap's denylist-source-range, or none",
			Grammar:    cidrGrammar + "; checked before the allow list",
			Difference: "as allowlist-source-range"},
	),
	Parse: parseAccess,
}

const cidrGrammar = "a comma-separated list of up to 256 distinct IPv4 or IPv6 addresses or CIDRs (10.0.0.0/8, 2001:db8::/32, 192.0.2.7); " +
	"the client is the TCP peer unless the ConfigMap's real-IP keys say otherwise"

// maxAccessCIDRs bounds each list; each entry is a line in every location
// of the Ingress.
const maxAccessCIDRs = 256

func parseAccess(r *Reader, res *Result) {
	acc := &model.AccessList{}
	ok := true
	allow := "allowlist-source-range"
	if r.Has(allow) && r.Has("whitelist-source-range") {
		// ingress-nginx reads the old name only when the new one is unset.
		r.Ignored("whitelist-source-range", "is overridden by "+r.Key(allow))
	} else if !r.Has(allow) {
		allow = "whitelist-source-range"
	}
	for _, l := range []struct {
		name string
		dst  *[]netip.Prefix
	}{{"denylist-source-range", &acc.Deny}, {allow, &acc.Allow}} {
		v, set := r.Get(l.name)
		if !set {
			continue
		}
		list, err := model.ParseCIDRList(v, maxAccessCIDRs)
		if err != nil {
			r.FailClosed(l.name, v, err)
			ok = false
			continue
		}
		*l.dst = list
	}
	if ok {
		res.Location.Access = acc
	}
}
