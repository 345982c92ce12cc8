package togateway

import (
	"slices"
	"strings"

	"github.com/causeway/causeway/internal/frontend/ingress/annotations"
)

// security reports the protections that cannot be converted, and
// whether there is one.
func (w *ingressWork) security() bool {
	closed := w.tr.Annotations.FailClosed
	insecure := false
	for _, k := range sortedKeys(w.ann) {
		a := w.ann[k]
		var r *Rule
		switch {
		case a.family != annotations.FamilyIngressNginx:
			if slices.Contains(closed, k) {
				r = ruleOtherSecurity
			}
		case strings.HasPrefix(a.name, "auth-") || a.name == "enable-global-auth" && !isFalse(w.ing.Annotations[k]):
			r = ruleAuth
		case (a.name == "whitelist-source-range" || a.name == "allowlist-source-range") && everyAddress(w.ing.Annotations[k]):
			// cert-manager's HTTP-01 solver sets it so to open its
			// Ingress past a global list: it refuses no one.
			w.find(ruleNoEffect, k, w.ing.Annotations[k], "admits every address")
			continue
		case slices.Contains([]string{"whitelist-source-range", "allowlist-source-range", "denylist-source-range"}, a.name):
			r = ruleSourceRange
		case a.name == "satisfy" || slices.Contains(closed, k):
			r = ruleOtherSecurity
		}
		if r == nil {
			continue
		}
		if w.tr.Annotations.Canary != nil && a.family == annotations.FamilyIngressNginx {
			// A canary borrows its main Ingress's protection.
			w.find(ruleNoEffect, k, w.ing.Annotations[k], "a canary takes its main Ingress's protection; this annotation is ignored on it, as in ingress-nginx")
			continue
		}
		w.find(r, k, w.ing.Annotations[k], "not expressible in Gateway API core")
		insecure = true
	}
	return insecure
}

// everyAddress reports whether an address list admits every IPv4 and
// IPv6 address.
func everyAddress(list string) bool {
	var v4, v6 bool
	for _, e := range strings.Split(list, ",") {
		switch strings.TrimSpace(e) {
		case "0.0.0.0/0":
			v4 = true
		case "::/0":
			v6 = true
		}
	}
	return v4 && v6
}
